import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DISCREPANCY_KINDS, DiscrepancyKind } from '../../domain/reconciliation/reconciliation.types';
import { SAGA_STATES, SAGA_TYPES, SagaState, SagaType } from '../../domain/sagas/saga';
import { TOPICS } from '../../infrastructure/messaging/topics';
import { JOB_COUNTS, keptCountRows } from '../../infrastructure/database/kept-counts';
import { SagaCounts } from '../saga-state/saga-counts';
import { EventsMinute, OverviewResponse, PendingAgeBucket } from './dto/overview.dto';

const zeroStates = () => Object.fromEntries(SAGA_STATES.map((s) => [s, 0])) as Record<SagaState, number>;

/** Counts for the ops dashboard's first screen, each from one query. */
@Injectable()
export class OpsOverviewRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sagaCounts: SagaCounts,
  ) {}

  /** From the sagas' counts, not the table: it is kept for good (SagaCounts). */
  async sagas(): Promise<OverviewResponse['sagas']> {
    const rows = await this.sagaCounts.all();
    const byState = zeroStates();
    const byType = Object.fromEntries(SAGA_TYPES.map((t) => [t, zeroStates()])) as Record<SagaType, Record<SagaState, number>>;
    for (const { type, state, n } of rows) {
      byState[state] += n;
      byType[type][state] += n;
    }
    return { total: rows.reduce((sum, r) => sum + r.n, 0), by_state: byState, by_type: byType };
  }

  /**
   * Messages per minute over the last `minutes` minutes, the current one included, on the
   * database's clock: inbox and outbox rows are stamped by it.
   */
  async eventsPerMinute(minutes: number): Promise<EventsMinute[]> {
    const rows: { minute: Date; received: number; emitted: number }[] = await this.dataSource.query(
      `WITH minutes AS (
         SELECT generate_series(date_trunc('minute', now()) - ($1::int - 1) * interval '1 minute', date_trunc('minute', now()), interval '1 minute') AS minute
       ),
       received AS (
         SELECT date_trunc('minute', received_at) AS minute, count(*)::int AS n FROM inbox_messages
         WHERE received_at >= (SELECT min(minute) FROM minutes) GROUP BY 1
       ),
       emitted AS (
         SELECT date_trunc('minute', created_at) AS minute, sum(cardinality(message_ids))::int AS n FROM outbox_batches
         WHERE topic = $2 AND created_at >= (SELECT min(minute) FROM minutes) GROUP BY 1
       )
       SELECT m.minute, coalesce(r.n, 0) AS received, coalesce(e.n, 0) AS emitted
       FROM minutes m LEFT JOIN received r ON r.minute = m.minute LEFT JOIN emitted e ON e.minute = m.minute
       ORDER BY m.minute`,
      [minutes, TOPICS.benefitsEvents],
    );
    return rows.map((r) => ({ minute: new Date(r.minute).toISOString(), received: r.received, emitted: r.emitted }));
  }

  /**
   * Pending jobs by age (since creation, service clock), in progress and in error: from the jobs'
   * kept counts (migration 1798810000000), not the table, which keeps every enrollment job.
   */
  async jobs(now: Date): Promise<OverviewResponse['jobs']> {
    const counted = (filter: string) => `coalesce(sum(n) FILTER (WHERE ${filter}), 0)::int`;
    const [row] = await this.dataSource.query(
      `SELECT
         ${counted(`status = 'pending'`)} AS pending,
         ${counted(`status = 'pending' AND scheduled_at > $1`)} AS scheduled_later,
         ${counted(`status = 'pending' AND created_at > $1::timestamptz - interval '1 minute'`)} AS under_1m,
         ${counted(`status = 'pending' AND created_at <= $1::timestamptz - interval '1 minute' AND created_at > $1::timestamptz - interval '15 minutes'`)} AS "1m_to_15m",
         ${counted(`status = 'pending' AND created_at <= $1::timestamptz - interval '15 minutes' AND created_at > $1::timestamptz - interval '1 hour'`)} AS "15m_to_1h",
         ${counted(`status = 'pending' AND created_at <= $1::timestamptz - interval '1 hour' AND created_at > $1::timestamptz - interval '24 hours'`)} AS "1h_to_24h",
         ${counted(`status = 'pending' AND created_at <= $1::timestamptz - interval '24 hours'`)} AS over_24h,
         ${counted(`status = 'in_progress'`)} AS in_progress,
         ${counted(`status = 'error'`)} AS error
       FROM (${keptCountRows(JOB_COUNTS)}) AS c`,
      [now],
    );
    const byAge: Record<PendingAgeBucket, number> = {
      under_1m: row.under_1m,
      '1m_to_15m': row['1m_to_15m'],
      '15m_to_1h': row['15m_to_1h'],
      '1h_to_24h': row['1h_to_24h'],
      over_24h: row.over_24h,
    };
    return {
      pending: { total: row.pending, due: row.pending - row.scheduled_later, scheduled_later: row.scheduled_later, by_age: byAge },
      in_progress: row.in_progress,
      error: row.error,
    };
  }

  /** Open ops tasks against their SLA on `today` (`YYYY-MM-DD`), as dueStateOf rules. */
  async tasks(today: string): Promise<OverviewResponse['tasks']> {
    const [row] = await this.dataSource.query(
      `SELECT count(*)::int AS open,
         count(*) FILTER (WHERE due_date > $1::date)::int AS on_time,
         count(*) FILTER (WHERE due_date = $1::date)::int AS due_today,
         count(*) FILTER (WHERE due_date < $1::date)::int AS overdue
       FROM ops_tasks WHERE status = 'open'`,
      [today],
    );
    return row;
  }

  async openDeadLetters(): Promise<number> {
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM dead_letters WHERE status = 'open'`);
    return n;
  }

  /** Live deduction discrepancies (not resolved): by status, and by kind with every kind present. */
  async discrepancies(): Promise<OverviewResponse['discrepancies']> {
    const rows: { kind: DiscrepancyKind; status: string; n: number }[] = await this.dataSource.query(
      `SELECT kind, status, count(*)::int AS n FROM deduction_discrepancies WHERE status <> 'resolved' GROUP BY kind, status`,
    );
    const byKind = Object.fromEntries(DISCREPANCY_KINDS.map((k) => [k, 0])) as Record<DiscrepancyKind, number>;
    const counts = { open: 0, acknowledged: 0 };
    for (const { kind, status, n } of rows) {
      if (kind in byKind) byKind[kind] += n;
      if (status === 'open' || status === 'acknowledged') counts[status] += n;
    }
    return { ...counts, by_kind: byKind };
  }
}
