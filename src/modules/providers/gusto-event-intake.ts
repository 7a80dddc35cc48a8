import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DATA_SYNC_ALL, SERVICE_SYNC_TRIGGERS } from '../../domain/jobs/job';
import { PROVIDER_BEHAVIOURS, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { GustoEvent, GustoEventOutcome, GustoEventSink, GustoSyncTarget, syncTargetOf } from '../../infrastructure/providers/gusto/gusto-webhooks';
import { ConnectionOfAccount, connectionsOfAccount } from '../../infrastructure/providers/provider-grant-accounts';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';

/** `params.trigger` of the syncs Gusto's events start. */
export const GUSTO_EVENT_TRIGGER: (typeof SERVICE_SYNC_TRIGGERS)[number] = 'gusto_event';

/** Events are remembered this long: past Gusto's 30 days of feed, so the feed never brings back one forgotten. */
const EVENT_RETENTION_DAYS = 45;

/**
 * Takes in Gusto's events, from the webhook route and the events poller alike: each event once,
 * however often it arrives (Gusto redelivers, and warns that "duplicate events may occur";
 * https://docs.gusto.com/app-integrations/docs/best-practices), and each event that changes data
 * the service reads starts a data sync of every connection reaching its company.
 *
 * One transaction per event: the event's uuid is inserted (`ON CONFLICT DO NOTHING`) and the
 * syncs are requested together, or neither is. Two deliveries of one event at once, on one
 * instance or two, meet at the uuid's row: the second waits for the first to commit and then finds
 * it there. An event whose transaction failed is not remembered, so its redelivery is taken in.
 *
 * The sync is requested as a sandbox edit requests one (SandboxEditSyncs), not through
 * SyncJobsService.requestSync: that one opens its own transaction (it cannot share the dedupe's,
 * and the embedded database has one connection), refuses when the client's hourly refresh quota
 * is spent (Gusto's event is not the client's refresh), and answers a sync already running,
 * which may have read before the change. Here a queued sync of the connection is shared (it
 * reads after the change); a running one gets a follow-up queued after it; else one is queued.
 */
@Injectable()
export class GustoEventIntake implements GustoEventSink {
  private readonly logger = new Logger('GustoEvents');

  constructor(
    private readonly dataSource: DataSource,
    private readonly jobs: JobsRepository,
    private readonly signal: JobSignal,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async receive(event: GustoEvent, via: 'webhook' | 'poll'): Promise<GustoEventOutcome> {
    const target = syncTargetOf(event);
    const outcome = await this.dataSource.transaction(async (manager): Promise<GustoEventOutcome> => {
      const [claimed] = await manager.query(
        `INSERT INTO gusto_events (uuid, event_type, company_uuid, entity_type, entity_uuid, occurred_at, via)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (uuid) DO NOTHING
         RETURNING uuid`,
        [event.uuid, event.eventType, event.companyUuid, event.entityType, event.entityUuid, event.occurredAt, via],
      );
      if (!claimed) return { kind: 'duplicate' };
      if (!target) return { kind: 'not_synced' };
      const connections = await connectionsOfAccount(manager, 'gusto', target.companyUuid, { lock: true });
      if (connections.length === 0) return { kind: 'no_connection' };
      const syncs = [];
      for (const connection of connections) syncs.push(await this.requestSync(manager, connection, event, target));
      await manager.query(`UPDATE gusto_events SET connection_ids = $2 WHERE uuid = $1`, [event.uuid, connections.map((c) => c.connectionId)]);
      return { kind: 'sync_requested', syncs };
    });
    if (outcome.kind === 'sync_requested' && outcome.syncs.some((s) => s.created)) this.signal.nudge();
    if (outcome.kind === 'no_connection') {
      // Expected after a disconnection (Gusto goes on sending until the grant is revoked); logged so a wrong mapping shows.
      this.logger.log(`Gusto event ${event.uuid} (${event.eventType}) is for company ${event.companyUuid}, which no connected connection reaches: ignored`);
    }
    return outcome;
  }

  /** Forgets events older than Gusto's feed keeps them, a batch at a time; answers how many. */
  async prune(batch = 10_000): Promise<number> {
    const [{ count }]: { count: number }[] = await this.dataSource.query(
      `WITH gone AS (
         DELETE FROM gusto_events WHERE uuid IN (
           SELECT uuid FROM gusto_events WHERE received_at < now() - make_interval(days => $1) ORDER BY received_at LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS count FROM gone`,
      [EVENT_RETENTION_DAYS, batch],
    );
    return count;
  }

  private async requestSync(
    manager: EntityManager,
    connection: ConnectionOfAccount,
    event: GustoEvent,
    target: GustoSyncTarget,
  ): Promise<{ connectionId: string; jobId: string; created: boolean }> {
    // The connection row is locked (connectionsOfAccount), as sync requests and edits lock it.
    const open = await this.jobs.listOpen(connection.connectionId, DATA_SYNC_ALL, manager);
    const queued = open.find((job) => job.status === 'pending');
    if (queued) return { connectionId: connection.connectionId, jobId: queued.id, created: false };
    // At most one runs at a time: a follow-up is leased only once the sync before it ended.
    const running = open.find((job) => job.status === 'in_progress');
    const job = await this.jobs.insert(
      {
        id: randomUUID(),
        connectionId: connection.connectionId,
        kind: this.behaviours.of(connection).syncs.jobKind,
        type: DATA_SYNC_ALL,
        params: { trigger: GUSTO_EVENT_TRIGGER, gusto_event_uuid: event.uuid, gusto_event_type: event.eventType, affects: target.affects },
        createdAt: this.clock.now(),
        afterJobId: running?.id ?? null,
      },
      manager,
    );
    return { connectionId: connection.connectionId, jobId: job.id, created: true };
  }
}
