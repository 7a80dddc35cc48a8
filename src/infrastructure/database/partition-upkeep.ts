import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { PollingLoop } from '../scheduling/polling-loop';
import { WakeSignal } from '../scheduling/wake-signal';

/** A table partitioned by day (UTC) on a time column (migration 1798400000000). */
export interface DailyPartitionedTable {
  table: string;
  column: string;
  /** A day's partition is dropped once the whole day is older than this. */
  retentionDays: number;
  /** Storage parameters each new partition gets. */
  partitionOptions?: string;
  /** Columns without planner statistics (as migration 1797800000000 set on the table). */
  columnsWithoutStatistics?: readonly string[];
  /**
   * SQL true while the partition still holds work that must not be lost: it is then kept and
   * looked at again next round. `from_at` and `to_at` are the partition's bounds, `partition` its name.
   */
  keepWhile?: (partition: string) => string;
}

export interface PartitionUpkeepSettings {
  /** Partitions are made for today and this many days ahead. */
  daysAhead: number;
  intervalMs: number;
  tables: readonly DailyPartitionedTable[];
}

export interface UpkeepRound {
  /** Partitions made (names). */
  created: string[];
  /** Partitions dropped, past retention. */
  dropped: string[];
  /** Partitions past retention kept for their pending work. */
  kept: string[];
  /** Rows moved out of DEFAULT partitions into the partitions of their days. */
  movedFromDefault: number;
}

const DAY_MS = 86_400_000;
/** The seed of the transaction locks this upkeep takes, one per table. */
const LOCK_SEED = 1_798_400_001;

/** The history tables and how long each is kept, from the service's settings. */
export function historyTables(config: AppConfig): DailyPartitionedTable[] {
  const webhookOptions = 'autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000';
  return [
    { table: 'inbox_messages', column: 'received_at', retentionDays: config.INBOX_RETENTION_DAYS },
    {
      table: 'outbox_batches',
      column: 'created_at',
      retentionDays: config.OUTBOX_RETENTION_DAYS,
      columnsWithoutStatistics: ['payloads', 'headers'],
      // A message still to publish is queued with its time (outbox_pending is small: no index needed).
      keepWhile: () => `EXISTS (SELECT 1 FROM outbox_pending WHERE created_at >= from_at AND created_at < to_at)`,
    },
    {
      table: 'webhook_deliveries',
      column: 'created_at',
      retentionDays: config.WEBHOOK_RETENTION_DAYS,
      partitionOptions: webhookOptions,
      keepWhile: (partition) => `EXISTS (SELECT 1 FROM ${partition} WHERE status = 'pending')`,
    },
    {
      table: 'webhook_attempts',
      column: 'attempted_at',
      retentionDays: config.WEBHOOK_RETENTION_DAYS,
      partitionOptions: webhookOptions,
      // The attempts of a delivery still pending (a Resend of an old one) stay with it.
      keepWhile: (partition) =>
        `EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.status = 'pending' AND EXISTS (SELECT 1 FROM ${partition} a WHERE a.delivery_id = d.id))`,
    },
    { table: 'ops_audit', column: 'at', retentionDays: config.OPS_AUDIT_RETENTION_DAYS },
  ];
}

export function partitionUpkeepSettings(config: AppConfig): PartitionUpkeepSettings {
  return { daysAhead: config.DATABASE_PARTITION_DAYS_AHEAD, intervalMs: config.DATABASE_PARTITION_UPKEEP_INTERVAL_MS, tables: historyTables(config) };
}

/** The UTC day of `at`, as `YYYY-MM-DD`. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
const addDays = (day: string, days: number): string => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS));
export const partitionName = (table: string, day: string): string => `${table}_p${day.replace(/-/g, '')}`;
const bound = (day: string) => `${day} 00:00:00+00`;

/**
 * Keeps the daily partitions of the history tables: makes today's and the next days' before
 * rows arrive for them, and drops the days wholly past each table's retention, a DROP TABLE
 * per day instead of deleting rows (no dead rows, no VACUUM). A partition still holding pending
 * work (an outbox message not yet published, a webhook delivery still pending) is kept and
 * looked at again next round.
 *
 * Each table's DEFAULT partition is the safety net: a row no day partition covers (the upkeep
 * stopped for longer than the days ahead, or a time far off) lands there rather than failing
 * its transaction. PostgreSQL refuses a new partition for a day the DEFAULT one holds rows of,
 * so the upkeep then moves them into their days' partitions (the table is locked meanwhile).
 *
 * Every instance runs it: each table's round holds a transaction-level advisory lock, so two
 * instances take turns, and the second finds the work done.
 */
@Injectable()
export class PartitionUpkeep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PartitionUpkeep.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly settings: PartitionUpkeepSettings,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = new PollingLoop({
      name: 'partition upkeep round',
      pollMs: this.settings.intervalMs,
      signal: this.signal,
      logger: this.logger,
      round: async () => {
        await this.round();
        return 'wait';
      },
    });
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop?.stop();
  }

  get running(): boolean {
    return this.loop?.running ?? false;
  }

  /**
   * One round over every table. `at` is the time the round acts for; by default the database's,
   * since the rows are stamped by its clock (`now()`), not the service's.
   */
  async round(at?: Date): Promise<UpkeepRound> {
    const now = at ?? ((await this.dataSource.query(`SELECT now() AS now`)) as { now: Date }[])[0].now;
    const result: UpkeepRound = { created: [], dropped: [], kept: [], movedFromDefault: 0 };
    for (const table of this.settings.tables) {
      await this.dataSource.transaction((manager) => this.makeDays(manager, table, now, result));
      await this.dataSource.transaction((manager) => this.dropPastRetention(manager, table, now, result));
    }
    if (result.created.length + result.dropped.length + result.kept.length > 0 || result.movedFromDefault > 0) {
      const moved = result.movedFromDefault > 0 ? `; ${result.movedFromDefault} rows moved out of DEFAULT partitions` : '';
      this.logger.log(`partitions made: ${result.created.length}, dropped: ${result.dropped.join(', ') || 'none'}, kept for pending work: ${result.kept.join(', ') || 'none'}${moved}`);
    }
    return result;
  }

  /** Today's partition and the next days', and one for each day the DEFAULT partition holds rows of. */
  private async makeDays(manager: EntityManager, t: DailyPartitionedTable, now: Date, result: UpkeepRound): Promise<void> {
    await this.lock(manager, t);
    const existing = new Set(await this.partitionDays(manager, t));
    const today = dayOf(now);
    const wanted = Array.from({ length: this.settings.daysAhead + 1 }, (_, n) => addDays(today, n));
    const defaultPartition = `${t.table}_default`;
    const stranded: { day: string }[] = await manager.query(
      `SELECT DISTINCT to_char(${t.column} AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM ${defaultPartition}`,
    );
    const missing = [...new Set([...wanted, ...stranded.map((s) => s.day)])].filter((day) => !existing.has(day)).sort();
    if (missing.length === 0) return;
    const options = t.partitionOptions ? ` WITH (${t.partitionOptions})` : '';
    // Rows in DEFAULT of a day would make its new partition fail: they are moved while it is detached.
    if (stranded.length > 0) await manager.query(`ALTER TABLE ${t.table} DETACH PARTITION ${defaultPartition}`);
    for (const day of missing) {
      const name = partitionName(t.table, day);
      await manager.query(
        `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${t.table} FOR VALUES FROM ('${bound(day)}') TO ('${bound(addDays(day, 1))}')${options}`,
      );
      if (t.columnsWithoutStatistics?.length) {
        await manager.query(`ALTER TABLE ${name} ${t.columnsWithoutStatistics.map((c) => `ALTER COLUMN ${c} SET STATISTICS 0`).join(', ')}`);
      }
      result.created.push(name);
    }
    if (stranded.length > 0) {
      const moved = await manager.query(`WITH moved AS (INSERT INTO ${t.table} SELECT * FROM ${defaultPartition} RETURNING 1) SELECT count(*)::int AS n FROM moved`);
      result.movedFromDefault += moved[0].n;
      await manager.query(`TRUNCATE ${defaultPartition}`);
      await manager.query(`ALTER TABLE ${t.table} ATTACH PARTITION ${defaultPartition} DEFAULT`);
    }
  }

  /** Drops the partitions whose whole day is past retention, but for those still holding pending work. */
  private async dropPastRetention(manager: EntityManager, t: DailyPartitionedTable, now: Date, result: UpkeepRound): Promise<void> {
    await this.lock(manager, t);
    const horizon = now.getTime() - t.retentionDays * DAY_MS;
    const past = (await this.partitionDays(manager, t)).filter((day) => Date.parse(`${addDays(day, 1)}T00:00:00Z`) <= horizon);
    if (past.length === 0) return;
    // No write reaches the table between the look for pending work and the drop (a Resend, say).
    await manager.query(`LOCK TABLE ${t.table} IN ACCESS EXCLUSIVE MODE`);
    for (const day of past) {
      const name = partitionName(t.table, day);
      if (t.keepWhile) {
        const [{ keep }] = await manager.query(`SELECT ${t.keepWhile(name)} AS keep FROM (SELECT $1::timestamptz AS from_at, $2::timestamptz AS to_at) AS bounds`, [
          bound(day),
          bound(addDays(day, 1)),
        ]);
        if (keep) {
          result.kept.push(name);
          continue;
        }
      }
      await manager.query(`DROP TABLE ${name}`);
      result.dropped.push(name);
    }
  }

  /** One upkeep of a table at a time, across instances, until the transaction ends. */
  private async lock(manager: EntityManager, t: DailyPartitionedTable): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, ${LOCK_SEED}))`, [t.table]);
  }

  /** The days (`YYYY-MM-DD`) the table has partitions for, by their names. */
  private async partitionDays(manager: EntityManager, t: DailyPartitionedTable): Promise<string[]> {
    const rows: { name: string }[] = await manager.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
      [t.table],
    );
    const pattern = new RegExp(`^${t.table}_p(\\d{4})(\\d{2})(\\d{2})$`);
    return rows.flatMap((r) => {
      const m = pattern.exec(r.name);
      return m ? [`${m[1]}-${m[2]}-${m[3]}`] : [];
    });
  }
}

@Module({
  providers: [
    {
      provide: PartitionUpkeep,
      inject: [DataSource, AppConfig],
      useFactory: (dataSource: DataSource, config: AppConfig) => new PartitionUpkeep(dataSource, partitionUpkeepSettings(config)),
    },
  ],
  exports: [PartitionUpkeep],
})
export class PartitionUpkeepModule {}
