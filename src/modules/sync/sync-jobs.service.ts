import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Connection } from '../../domain/connections/connection';
import { DATA_SYNC_ALL, Job, JobKind, SERVICE_SYNC_TRIGGERS } from '../../domain/jobs/job';
import { RefreshQuota, refreshQuotaOf, refreshWindowOf, secondsUntil } from '../../domain/jobs/refresh-quota';
import { PROVIDER_BEHAVIOURS, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';
import {
  SandboxJobConfiguration,
  SandboxJobConfigurationsRepository,
} from './sandbox-job-configurations.repository';

export interface SyncRequestResult {
  job: Job;
  /** false: a sync of the connection was already queued or running, and that one is answered. */
  created: boolean;
  quota: RefreshQuota;
}

/** Where a sync was asked for: `POST /jobs/automated` or `POST /sandbox/jobs`. */
export type SyncRequestRoute = 'automated' | 'sandbox';

/**
 * Starting data syncs (with the hourly refresh quota shared by both routes), listing and
 * finding automated jobs, and the sandbox job configuration.
 */
@Injectable()
export class SyncJobsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
    private readonly connections: ConnectionsRepository,
    private readonly jobs: JobsRepository,
    private readonly configurations: SandboxJobConfigurationsRepository,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Enqueues a sync of the whole connection, or answers the one already queued or running.
   * The connection row is locked meanwhile, so concurrent requests count the quota exactly.
   */
  async requestSync(connection: Connection, route: SyncRequestRoute): Promise<SyncRequestResult> {
    const { syncs } = this.behaviours.of(connection);
    if (route === 'automated' && !syncs.onRequest) {
      throw invalidRequest(
        'Data sync jobs cannot be enqueued for a connection to an Assisted provider: its data is synced on the provider’s own schedule',
      );
    }
    if (route === 'sandbox') this.assertSandbox(connection);
    if (connection.status === 'reauth') {
      // The sync could only end in reauth_error: refuse it before it costs a refresh.
      throw new DomainError('authentication_error', 'The connection needs reauthentication before its data can be synced', {
        serviceCode: 'reauthenticate_user',
      });
    }
    // An Assisted sandbox connection's sync has no pollable id (spec: job_id and job_url are null).
    const kind: JobKind = syncs.jobKind;
    const result = await this.dataSource.transaction(async (manager) => {
      await this.connections.find(connection.id, manager, { lock: true });
      const now = this.clock.now();
      const open = await this.jobs.findOpen(connection.id, DATA_SYNC_ALL, manager);
      const quota = await this.quotaAt(connection.id, now, manager);
      if (open) return { job: open, created: false, quota };
      if (quota.remainingRefreshes === 0) {
        const retryAt = quota.window.end;
        throw new DomainError(
          'rate_limit_error',
          `This connection has used its ${quota.allowedRefreshes} data syncs for this hour; the next may start at ${retryAt.toISOString()}`,
          {
            serviceCode: 'refresh_quota_exceeded',
            details: { retry_at: retryAt.toISOString(), retry_after: secondsUntil(retryAt, now) },
          },
        );
      }
      const job = await this.jobs.insert(
        { id: randomUUID(), connectionId: connection.id, kind, type: DATA_SYNC_ALL, createdAt: now },
        manager,
      );
      return { job, created: true, quota: { ...quota, remainingRefreshes: quota.remainingRefreshes - 1 } };
    });
    if (result.created) this.signal.nudge();
    return result;
  }

  async quotaOf(connectionId: string): Promise<RefreshQuota> {
    return this.quotaAt(connectionId, this.clock.now());
  }

  async list(connection: Connection, page: { limit: number; offset: number }) {
    return this.jobs.listOfConnection(connection.id, 'automated', page);
  }

  /** The connection's automated job; any other id (another connection's included) is not found. */
  async get(connection: Connection, jobId: string): Promise<Job> {
    const job = await this.jobs.findOfConnection(jobId, connection.id, 'automated');
    if (!job) throw notFound(`No job ${jobId} for this connection`, 'job_not_found');
    return job;
  }

  async configuration(connection: Connection): Promise<SandboxJobConfiguration> {
    this.assertSandbox(connection);
    return this.configurations.find(connection.id);
  }

  async configure(connection: Connection, configuration: SandboxJobConfiguration): Promise<SandboxJobConfiguration> {
    this.assertSandbox(connection);
    return this.configurations.save(connection.id, configuration, this.clock.now());
  }

  private async quotaAt(connectionId: string, now: Date, manager?: EntityManager): Promise<RefreshQuota> {
    const window = refreshWindowOf(now);
    // The syncs sandbox edits and provider events start are the service's doing, not refreshes the client asked for.
    const used = await this.jobs.countCreated(connectionId, DATA_SYNC_ALL, window.start, window.end, manager, {
      exceptTriggers: SERVICE_SYNC_TRIGGERS,
    });
    return refreshQuotaOf(this.config.SANDBOX_REFRESHES_PER_HOUR, used, window);
  }

  private assertSandbox(connection: Connection): void {
    if (!connection.sandbox) {
      throw new DomainError('forbidden_error', 'Sandbox job operations are only for sandbox connections', {
        serviceCode: 'sandbox_connection_required',
      });
    }
  }
}
