import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Connection } from '../../domain/connections/connection';
import { DATA_SYNC_ALL, Job } from '../../domain/jobs/job';
import { EmployerRef, employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import {
  EmployerDataRepository,
  EmployerDataRow,
} from '../../infrastructure/database/repositories/employer-data.repository';
import { OutboxWriter } from '../../infrastructure/messaging/outbox/outbox-writer';
import { JobHandler, JobOutcome, JobRunContext } from '../jobs/job-handler';
import { enqueueReconciliation } from '../reconciliation/reconciliation-jobs';
import { SandboxCompletionStatus, SandboxJobConfigurationsRepository } from './sandbox-job-configurations.repository';
import { SnapshotRows } from './snapshot-rows';
import { GenerationSwitch, publishSyncHrisEvents } from './sync-hris-events';
import { enqueueSyncChangeWebhooks } from './sync-webhook-changes';

/** Rows per insert, and the JSON bytes that end a batch sooner (pay statements are large). */
const INSERT_ROWS = 1_000;
const INSERT_BYTES = 4 * 1024 * 1024;
/** Inserts running at once: the database works on one while the other travels. */
const PARALLEL_INSERTS = 2;

interface WrittenGeneration {
  entityId: string;
  generation: string;
  records: Record<string, number>;
}

/**
 * `data_sync_all`: copies every active entity's data from the provider into a new generation of
 * `employer_data`, then switches the entities to it together with the job's completion (one
 * transaction), then drops all but the new and the previous generation. Reads never see a
 * half-written sync. The same transaction publishes the HRIS events the change between the two
 * generations reveals (new individuals, end dates) and queues its data-change webhooks. A sandbox
 * connection's job configuration can make the sync fail instead.
 */
@Injectable()
export class DataSyncHandler implements JobHandler {
  readonly type = DATA_SYNC_ALL;

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly configurations: SandboxJobConfigurationsRepository,
    private readonly employerData: EmployerDataRepository,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly outbox: OutboxWriter,
  ) {}

  async run(job: Job, { signal }: JobRunContext): Promise<JobOutcome> {
    const connection = await this.connections.find(job.connectionId);
    if (!connection || connection.status === 'disconnected') {
      return { status: 'error', result: { error: 'The connection was disconnected' } };
    }
    if (connection.status === 'reauth') {
      return { status: 'reauth_error', result: { error: 'The connection needs reauthentication before it can sync' } };
    }
    if (connection.sandbox) {
      const { completionStatus } = await this.configurations.find(connection.id);
      if (completionStatus !== 'complete') return this.configuredFailure(connection, completionStatus);
    }

    const written: WrittenGeneration[] = [];
    try {
      for (const entity of connection.entities.filter((e) => e.status === 'active')) {
        const generation = await this.employerData.nextGeneration();
        const target: WrittenGeneration = { entityId: entity.id, generation, records: {} };
        written.push(target);
        target.records = await this.copySnapshot(employerRefOf(connection, entity), generation, signal);
      }
    } catch (error) {
      // Left-overs of a failed discard go with the next completed sync's clean-up.
      await this.discard(written).catch(() => undefined);
      throw error;
    }

    const previous = new Map<string, string | null>();
    return {
      status: 'complete',
      result: { entities: written.map((w) => ({ entity_id: w.entityId, generation: w.generation, records: w.records })) },
      commit: async (manager) => {
        const completedAt = this.clock.now();
        for (const w of written) {
          const replaced = await this.employerData.switchGeneration(
            { entityId: w.entityId, connectionId: connection.id, generation: w.generation, jobId: job.id, completedAt },
            manager,
          );
          previous.set(w.entityId, replaced);
          const change: GenerationSwitch = {
            connectionId: connection.id,
            entityId: w.entityId,
            previous: replaced,
            generation: w.generation,
            occurredAt: completedAt,
          };
          await publishSyncHrisEvents(this.outbox, manager, change);
          await enqueueSyncChangeWebhooks(manager, change);
          await enqueueReconciliation(manager, { connectionId: connection.id, entityId: w.entityId, syncJobId: job.id, at: completedAt });
        }
      },
      // The previous generation stays: a read that began before the switch may still be on it.
      afterCommit: async () => {
        for (const w of written) {
          const keep = [w.generation, previous.get(w.entityId)].filter((g): g is string => typeof g === 'string');
          await this.employerData.deleteGenerationsExcept(w.entityId, keep);
        }
      },
      discard: () => this.discard(written),
    };
  }

  /** What a sandbox connection configured instead of `complete`: no data is switched. */
  private configuredFailure(connection: Connection, status: Exclude<SandboxCompletionStatus, 'complete'>): JobOutcome {
    const result = { error: `The sandbox job configuration of this connection ends data syncs in ${status}` };
    if (status !== 'reauth_error') return { status, result };
    return {
      status,
      result,
      // The job and the connection's move to `reauth` commit together (DECISIONS.md "Connections").
      commit: (manager) => this.moveToReauth(connection.id, manager),
    };
  }

  private async moveToReauth(connectionId: string, manager: EntityManager): Promise<void> {
    const current = await this.connections.find(connectionId, manager, { lock: true });
    if (current?.status === 'connected') await this.connections.update(connectionId, { status: 'reauth' }, manager);
  }

  /**
   * Streams the provider's snapshot into the generation with multi-row inserts, two at a time
   * while the next batch is read; memory holds at most those batches and the one filling.
   */
  private async copySnapshot(ref: EmployerRef, generation: string, signal: AbortSignal): Promise<Record<string, number>> {
    const rows = new SnapshotRows();
    let buffer: EmployerDataRow[] = [];
    let bytes = 0;
    const inFlight: Promise<void>[] = [];
    const flush = async () => {
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      bytes = 0;
      while (inFlight.length >= PARALLEL_INSERTS) await inFlight.shift();
      const insert = this.employerData.insertRows(ref.entityId, generation, batch);
      // Awaited in turn or at the end; marked handled so a failure is not reported twice.
      insert.catch(() => undefined);
      inFlight.push(insert);
    };
    try {
      for await (const batch of readAhead(this.provider.snapshot(ref))) {
        signal.throwIfAborted();
        for (const row of rows.rowsOf(batch)) {
          buffer.push(row);
          bytes += row.body.length;
          if (buffer.length >= INSERT_ROWS || bytes >= INSERT_BYTES) await flush();
        }
      }
      await flush();
      await Promise.all(inFlight);
    } catch (error) {
      // No insert may land after the caller discards the generation.
      await Promise.allSettled(inFlight);
      throw error;
    }
    return rows.countsByKind;
  }

  private async discard(written: WrittenGeneration[]): Promise<void> {
    for (const w of written) await this.employerData.deleteGeneration(w.entityId, w.generation);
  }
}

/**
 * Asks the source for its next batch as soon as the current one is handed out, so the
 * provider's read of batch n+1 overlaps the mapping and inserting of batch n.
 */
async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = iterator.next();
      // Awaited on the next turn; if the consumer stops first, its failure is not reported twice.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}
