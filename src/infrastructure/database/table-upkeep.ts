import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Metrics } from '../observability/metrics';
import { PollingLoop } from '../scheduling/polling-loop';
import { WakeSignal } from '../scheduling/wake-signal';

/**
 * The tables every HRIS event inserts into and updates: their dead rows and statistics decide
 * whether the hot statements stay index lookups as the stream goes on.
 */
export const QUEUE_TABLES = [
  'inbox_messages',
  'outbox_messages',
  'outbox_lanes',
  'jobs',
  'enrollment_groups',
  'enrollment_items',
  'enrollments',
  'sagas',
  'saga_jobs',
  'dead_letters',
] as const;

/** The thresholds migration 1796300000000 gives autovacuum for these tables, applied here the same. */
export const UPKEEP_THRESHOLDS = {
  vacuum: { rows: 1_000, share: 0.01 },
  vacuumInserts: { rows: 5_000, share: 0.02 },
  analyze: { rows: 50, share: 0.02 },
} as const;

export interface TableActivity {
  table: string;
  liveRows: number;
  deadRows: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
}

export type UpkeepAction = 'vacuum' | 'analyze';

/**
 * What each table needs now: `vacuum` (which analyzes too) once its dead or newly inserted rows
 * pass the thresholds, `analyze` once enough rows changed since its statistics were taken.
 */
export function upkeepDue(tables: readonly TableActivity[]): { table: string; action: UpkeepAction }[] {
  const due: { table: string; action: UpkeepAction }[] = [];
  const over = (count: number, live: number, limit: { rows: number; share: number }) => count > limit.rows + limit.share * live;
  for (const t of tables) {
    if (over(t.deadRows, t.liveRows, UPKEEP_THRESHOLDS.vacuum) || over(t.insertedSinceVacuum, t.liveRows, UPKEEP_THRESHOLDS.vacuumInserts)) {
      due.push({ table: t.table, action: 'vacuum' });
    } else if (over(t.modifiedSinceAnalyze, t.liveRows, UPKEEP_THRESHOLDS.analyze)) {
      due.push({ table: t.table, action: 'analyze' });
    }
  }
  return due;
}

/**
 * Vacuums and analyzes the queue tables when PostgreSQL's autovacuum does not (a server with
 * `autovacuum = off`, as some CI and hand-tuned servers have). Without it the statistics of a
 * table filled after its creation are never taken: the planner then estimates the hot
 * statements' joins from defaults, picks sequential scans of tables that grow with every event,
 * and the cost per event grows with the stream; dead rows pile up in the partial indexes the
 * workers read. Each instance may run it: `SKIP_LOCKED` passes over a table another instance is
 * vacuuming, and a table done is below its thresholds for the next instance that looks.
 */
@Injectable()
export class TableUpkeep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TableUpkeep.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.shouldRun())) return;
    this.loop = new PollingLoop({
      name: 'table upkeep round',
      pollMs: this.config.DATABASE_TABLE_UPKEEP_INTERVAL_MS,
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

  /** Looks at the tables once and vacuums or analyzes those due; answers what it did. */
  async round(): Promise<{ table: string; action: UpkeepAction }[]> {
    const rows: { table: string; live: string; dead: string; inserted: string; modified: string }[] = await this.dataSource.query(
      `SELECT relname AS table, n_live_tup AS live, n_dead_tup AS dead, n_ins_since_vacuum AS inserted, n_mod_since_analyze AS modified
       FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1::text[])`,
      [QUEUE_TABLES],
    );
    const due = upkeepDue(
      rows.map((r) => ({
        table: r.table,
        liveRows: Number(r.live),
        deadRows: Number(r.dead),
        insertedSinceVacuum: Number(r.inserted),
        modifiedSinceAnalyze: Number(r.modified),
      })),
    );
    for (const { table, action } of due) {
      // Names from QUEUE_TABLES only, never from input. Not in a transaction: VACUUM refuses one.
      await this.dataSource.query(action === 'vacuum' ? `VACUUM (ANALYZE, SKIP_LOCKED) ${table}` : `ANALYZE (SKIP_LOCKED) ${table}`);
      this.metrics.tableUpkeep.inc({ table, action });
    }
    if (due.length > 0) this.logger.debug(`table upkeep: ${due.map((d) => `${d.action} ${d.table}`).join(', ')}`);
    return due;
  }

  private async shouldRun(): Promise<boolean> {
    const mode = this.config.DATABASE_TABLE_UPKEEP;
    if (mode === 'off' || this.config.embedded || !this.config.WORKERS_ENABLED) return false;
    if (mode === 'on') return true;
    const [{ autovacuum }] = await this.dataSource.query(`SELECT current_setting('autovacuum') AS autovacuum`);
    if (autovacuum === 'on') return false;
    this.logger.warn('PostgreSQL autovacuum is off: this instance vacuums and analyzes the queue tables itself (DATABASE_TABLE_UPKEEP)');
    return true;
  }
}

@Module({ providers: [TableUpkeep], exports: [TableUpkeep] })
export class TableUpkeepModule {}
