import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DEFAULT_RETRY_POLICY } from '../../domain/jobs/job';
import { ServiceInstanceModule } from '../../infrastructure/scheduling/service-instance.module';
import { JobHandlerRegistry } from './job-handler';
import { JobSignal } from './job-signal';
import { JOB_WORKER_SETTINGS, JobWorker, JobWorkerSettings } from './job-worker';
import { JobsLifecycle } from './jobs.lifecycle';
import { JobsRepository } from './jobs.repository';

/**
 * The generic job runner: the `jobs` table, the worker that leases and runs them, and the
 * registry where feature modules register a handler per job type (in their onModuleInit).
 * Enqueue with JobsRepository.insert inside your transaction, then JobSignal.nudge().
 */
@Module({
  // The instance whose id the worker's leases record (global: the outbox relay's lanes too).
  imports: [ServiceInstanceModule],
  providers: [
    JobsRepository,
    JobSignal,
    JobHandlerRegistry,
    {
      provide: JOB_WORKER_SETTINGS,
      inject: [AppConfig],
      useFactory: (config: AppConfig): JobWorkerSettings => ({
        pollMs: config.JOB_POLL_MS,
        leaseMs: config.JOB_LEASE_MS,
        concurrency: 4,
        retry: DEFAULT_RETRY_POLICY,
        // Half the shutdown budget for jobs to finish; the rest for giving back and closing.
        shutdownGraceMs: Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2),
      }),
    },
    JobWorker,
    JobsLifecycle,
  ],
  exports: [JobsRepository, JobSignal, JobHandlerRegistry, JobWorker],
})
export class JobsModule {}
