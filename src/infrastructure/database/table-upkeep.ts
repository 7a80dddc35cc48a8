import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Metrics } from '../observability/metrics';
import { PollingLoop } from '../scheduling/polling-loop';
import { WakeSignal } from '../scheduling/wake-signal';

export interface Threshold {
  rows: number;
  share: number;
}

/** When autovacuum would act on a table: past `rows` plus `share` of its live rows. */
export interface UpkeepThresholds {
  vacuum: Threshold;
  /** null: vacuums for inserted rows are turned off for the table. */
  vacuumInserts: Threshold | null;
  analyze: Threshold;
  /** The pace autovacuum would work the table at: a pause of `delayMs` each time its work costs `costLimit`. */
  pace: { delayMs: number; costLimit: number };
}

/** The server's autovacuum settings that decide when a table is due, by name. */
export const AUTOVACUUM_SETTINGS = [
  'autovacuum_vacuum_threshold',
  'autovacuum_vacuum_scale_factor',
  'autovacuum_vacuum_insert_threshold',
  'autovacuum_vacuum_insert_scale_factor',
  'autovacuum_analyze_threshold',
  'autovacuum_analyze_scale_factor',
  'autovacuum_vacuum_cost_delay',
  'autovacuum_vacuum_cost_limit',
  'vacuum_cost_delay',
  'vacuum_cost_limit',
] as const;

/**
 * A table's thresholds as autovacuum reads them: the server's settings, overridden by the
 * table's own storage parameters (`ALTER TABLE … SET (autovacuum_vacuum_threshold = 1000)`,
 * as migration 1796300000000 sets on the queue tables). undefined: the table has autovacuum
 * turned off (`autovacuum_enabled = false`), and is left alone here too.
 */
export function thresholdsOf(server: Readonly<Record<string, string>>, tableOptions: readonly string[] | null): UpkeepThresholds | undefined {
  const own = new Map((tableOptions ?? []).map((option) => option.split('=', 2) as [string, string]));
  if (own.get('autovacuum_enabled') === 'false') return undefined;
  const setting = (name: (typeof AUTOVACUUM_SETTINGS)[number]) => Number(own.get(name) ?? server[name]);
  const insertRows = setting('autovacuum_vacuum_insert_threshold');
  // -1: autovacuum takes the manual VACUUM's setting.
  const orVacuum = (value: number, fallback: 'vacuum_cost_delay' | 'vacuum_cost_limit') => (value === -1 ? Number(server[fallback]) : value);
  return {
    vacuum: { rows: setting('autovacuum_vacuum_threshold'), share: setting('autovacuum_vacuum_scale_factor') },
    vacuumInserts: insertRows === -1 ? null : { rows: insertRows, share: setting('autovacuum_vacuum_insert_scale_factor') },
    analyze: { rows: setting('autovacuum_analyze_threshold'), share: setting('autovacuum_analyze_scale_factor') },
    pace: {
      delayMs: orVacuum(setting('autovacuum_vacuum_cost_delay'), 'vacuum_cost_delay'),
      costLimit: orVacuum(setting('autovacuum_vacuum_cost_limit'), 'vacuum_cost_limit'),
    },
  };
}

export interface TableActivity {
  table: string;
  liveRows: number;
  deadRows: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
  thresholds: UpkeepThresholds;
}

export type UpkeepAction = 'vacuum' | 'analyze';

/**
 * What each table needs now, as autovacuum would decide: `vacuum` (which analyzes too) once its
 * dead or newly inserted rows pass their thresholds, `analyze` once enough rows changed since
 * its statistics were taken.
 */
export function upkeepDue(tables: readonly TableActivity[]): { table: string; action: UpkeepAction }[] {
  const due: { table: string; action: UpkeepAction }[] = [];
  const over = (count: number, live: number, limit: Threshold | null) => limit !== null && count > limit.rows + limit.share * live;
  for (const t of tables) {
    if (over(t.deadRows, t.liveRows, t.thresholds.vacuum) || over(t.insertedSinceVacuum, t.liveRows, t.thresholds.vacuumInserts)) {
      due.push({ table: t.table, action: 'vacuum' });
    } else if (over(t.modifiedSinceAnalyze, t.liveRows, t.thresholds.analyze)) {
      due.push({ table: t.table, action: 'analyze' });
    }
  }
  return due;
}

/**
 * Does autovacuum's work on this schema's tables when PostgreSQL's autovacuum does not (a
 * server with `autovacuum = off`, as some CI and hand-tuned servers have), with its rules: each
 * table is vacuumed or analyzed past the thresholds autovacuum would use for it. Without it the
 * statistics of a table filled after its creation are never taken: the planner then estimates
 * the hot statements' joins from defaults, picks sequential scans of the queue tables that grow
 * with every event, and the cost per event grows with the stream; dead rows pile up in the
 * partial indexes the workers read. It works at autovacuum's pace too (its cost-based delay),
 * not at a manual VACUUM's full speed. Each instance may run it: `SKIP_LOCKED` passes over a
 * table another instance is vacuuming, and a table done is below its thresholds for the next one.
 */
@Injectable()
export class TableUpkeep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TableUpkeep.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;
  /** The server's autovacuum settings, read at the first round. */
  private server: Record<string, string> | undefined;

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
    this.server ??= await this.serverSettings();
    const rows: { table: string; live: string; dead: string; inserted: string; modified: string; options: string[] | null }[] = await this.dataSource.query(
      `SELECT s.relname AS table, s.n_live_tup AS live, s.n_dead_tup AS dead, s.n_ins_since_vacuum AS inserted,
              s.n_mod_since_analyze AS modified, c.reloptions AS options
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       WHERE s.schemaname = current_schema()`,
    );
    const tables = rows.flatMap((r) => {
      const thresholds = thresholdsOf(this.server!, r.options);
      if (!thresholds) return [];
      const activity = { liveRows: Number(r.live), deadRows: Number(r.dead), insertedSinceVacuum: Number(r.inserted), modifiedSinceAnalyze: Number(r.modified) };
      return [{ table: r.table, ...activity, thresholds }];
    });
    const due = upkeepDue(tables);
    if (due.length === 0) return due;
    const paceOf = new Map(tables.map((t) => [t.table, t.thresholds.pace]));
    // One connection of its own: the pace is a setting of the session that runs the VACUUM.
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      for (const { table, action } of due) {
        // At autovacuum's pace, as autovacuum would: the service's own statements share the
        // server with it, and a manual VACUUM runs at full speed.
        const { delayMs, costLimit } = paceOf.get(table)!;
        await runner.query(`SET vacuum_cost_delay = ${Math.max(0, Math.min(100, delayMs))}`);
        await runner.query(`SET vacuum_cost_limit = ${Math.max(1, Math.min(10_000, Math.round(costLimit)))}`);
        // The name is the catalog's, quoted. Not in a transaction: VACUUM refuses one.
        const name = `"${table.replace(/"/g, '""')}"`;
        await runner.query(action === 'vacuum' ? `VACUUM (ANALYZE, SKIP_LOCKED) ${name}` : `ANALYZE (SKIP_LOCKED) ${name}`);
        this.metrics.tableUpkeep.inc({ table, action });
      }
    } finally {
      // The connection goes back to the pool as it came. Two statements in one text: a query
      // without parameters goes by the simple protocol, which takes several.
      await runner.query(`RESET vacuum_cost_delay; RESET vacuum_cost_limit`).catch(() => undefined);
      await runner.release();
    }
    this.logger.debug(`table upkeep: ${due.map((d) => `${d.action} ${d.table}`).join(', ')}`);
    return due;
  }

  private async serverSettings(): Promise<Record<string, string>> {
    const rows: { name: string; setting: string }[] = await this.dataSource.query(`SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])`, [
      AUTOVACUUM_SETTINGS,
    ]);
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  }

  private async shouldRun(): Promise<boolean> {
    const mode = this.config.DATABASE_TABLE_UPKEEP;
    if (mode === 'off' || this.config.embedded || !this.config.WORKERS_ENABLED) return false;
    if (mode === 'on') return true;
    const [{ autovacuum }] = await this.dataSource.query(`SELECT current_setting('autovacuum') AS autovacuum`);
    if (autovacuum === 'on') return false;
    this.logger.warn('PostgreSQL autovacuum is off: this instance vacuums and analyzes the tables itself, by autovacuum\'s thresholds (DATABASE_TABLE_UPKEEP)');
    return true;
  }
}

@Module({ providers: [TableUpkeep], exports: [TableUpkeep] })
export class TableUpkeepModule {}
