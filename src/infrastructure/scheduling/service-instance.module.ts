import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { SERVICE_INSTANCE_SETTINGS, ServiceInstance, ServiceInstanceSettings } from './service-instance';
import { ServiceInstancesRepository } from './service-instances.repository';

/** INSTANCE_ID, or the host name and port: what a restart of this process on this host is called again. */
export function instanceName(config: AppConfig): string {
  if (config.INSTANCE_ID !== '') return config.INSTANCE_ID;
  // Port 0 is a new port each start: nothing names the next process the same.
  return config.PORT === 0 ? `${hostname()}:0:${randomUUID().slice(0, 8)}` : `${hostname()}:${config.PORT}`;
}

export function serviceInstanceSettings(config: AppConfig): ServiceInstanceSettings {
  return {
    name: instanceName(config),
    heartbeatMs: config.INSTANCE_HEARTBEAT_MS,
    deadAfterMs: config.INSTANCE_DEAD_AFTER_MS,
    // The embedded database has one owner: whoever ran on it before is no longer running.
    soleUser: config.embedded,
  };
}

/**
 * This process as a running instance (ServiceInstance). Global, so every lease holder (the job
 * worker, the outbox relay) records the same holder id and registers the leases it takes.
 */
@Global()
@Module({
  providers: [
    ServiceInstancesRepository,
    { provide: SERVICE_INSTANCE_SETTINGS, inject: [AppConfig], useFactory: serviceInstanceSettings },
    ServiceInstance,
  ],
  exports: [ServiceInstance],
})
export class ServiceInstanceModule {}
