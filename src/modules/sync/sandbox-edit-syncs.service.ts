import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Connection } from '../../domain/connections/connection';
import { DATA_SYNC_ALL, Job, JobStatus, SERVICE_SYNC_TRIGGERS } from '../../domain/jobs/job';
import { PROVIDER_BEHAVIOURS, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';
import { SandboxJobConfigurationsRepository } from './sandbox-job-configurations.repository';

/** `params.trigger` of the syncs sandbox edits start; the refresh quota does not count them. */
export const SANDBOX_EDIT_TRIGGER: (typeof SERVICE_SYNC_TRIGGERS)[number] = 'sandbox_edit';

/** The sync behind an edit, as the edit's answer reports it. */
export interface EditSync {
  /** Null for a sync without a pollable id (an Assisted sandbox connection's, as `POST /sandbox/jobs`). */
  jobId: string | null;
  /** Its status when the edit answers: `complete` unless the wait ran out or the sync failed. */
  status: JobStatus;
}

const FINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['complete', 'error', 'reauth_error', 'permissions_error']);
/**
 * Polling the sync's row (a primary-key read): a small employer syncs in tens of milliseconds,
 * so soon at first, then every 25 ms, which keeps the answer within a few ms of the sync's end.
 */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 25;

/**
 * The data sync a sandbox edit starts, so that synced reads show the edit without the client
 * spending a refresh on it. Reads of an entity come from its latest completed sync; an edit
 * changes only the provider's side. So an edit on an entity that has synced (or whose first
 * sync is running) needs a sync that reads the employer after the edit:
 * - a sync of the connection still queued reads after the edit: the edit takes that one, so
 *   edits in quick succession share one sync;
 * - a sync already running may have read before it: one more is queued to run after it (that
 *   follow-up is then the queued one the next edits share);
 * - with none open, a new one.
 * They are ordinary `data_sync_all` jobs marked `params.trigger: "sandbox_edit"`, outside the
 * refresh quota. A connection whose syncs are configured to fail gets none: an edit must not
 * move it to `reauth`, and its syncs stay what the client configured them to be.
 */
@Injectable()
export class SandboxEditSyncs {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
    private readonly connections: ConnectionsRepository,
    private readonly jobs: JobsRepository,
    private readonly employerData: EmployerDataRepository,
    private readonly configurations: SandboxJobConfigurationsRepository,
    private readonly signal: JobSignal,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Starts (or joins) the sync that shows an edit of the entity just made, and waits for it up to
   * SANDBOX_EDIT_SYNC_WAIT_MS; null when the entity's reads are live and need none.
   */
  async afterEdit(connection: Connection, entityId: string): Promise<EditSync | null> {
    const job = await this.syncFor(connection, entityId);
    if (!job) return null;
    const status = await this.statusWithin(job, this.config.SANDBOX_EDIT_SYNC_WAIT_MS);
    return { jobId: job.kind === 'automated' ? job.id : null, status };
  }

  private async syncFor(connection: Connection, entityId: string): Promise<Job | undefined> {
    if (!this.config.SANDBOX_EDIT_SYNCS || connection.status !== 'connected') return undefined;
    if ((await this.configurations.find(connection.id)).completionStatus !== 'complete') return undefined;
    const result = await this.dataSource.transaction(async (manager) => {
      // Serializes with sync requests and other edits (they lock the connection too).
      const current = await this.connections.find(connection.id, manager, { lock: true });
      if (current?.status !== 'connected') return undefined;
      const open = await this.jobs.listOpen(connection.id, DATA_SYNC_ALL, manager);
      const queued = open.find((job) => job.status === 'pending');
      if (queued) return { job: queued, created: false };
      // At most one runs at a time: a follow-up is leased only once the sync before it ended.
      const running = open.find((job) => job.status === 'in_progress');
      if (!running && (await this.employerData.currentGeneration(entityId, manager)) === null) return undefined;
      const job = await this.jobs.insert(
        {
          id: randomUUID(),
          connectionId: connection.id,
          kind: this.behaviours.of(connection).syncs.jobKind,
          type: DATA_SYNC_ALL,
          params: { trigger: SANDBOX_EDIT_TRIGGER },
          createdAt: this.clock.now(),
          afterJobId: running?.id ?? null,
        },
        manager,
      );
      return { job, created: true };
    });
    if (result?.created) this.signal.nudge();
    return result?.job;
  }

  /** The job's status once it has ended, or when `ms` of real time have passed. */
  private async statusWithin(job: Job, ms: number): Promise<JobStatus> {
    const deadline = Date.now() + ms;
    let status = job.status;
    for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, MAX_POLL_MS)) {
      const left = deadline - Date.now();
      if (FINAL_STATUSES.has(status) || left <= 0) return status;
      await sleep(Math.min(pause, left));
      status = (await this.jobs.find(job.id))?.status ?? status;
    }
  }
}
