import { Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Metrics } from '../observability/metrics';
import { PollingLoop } from '../scheduling/polling-loop';
import { returnedRows } from './query-result';
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
  /** Whether the table has statistics: analyzed at least once, by anyone. */
  analyzed: boolean;
  /** The rows its statistics counted (`pg_class.reltuples`; -1 before any). */
  statisticsRows: number;
  thresholds: UpkeepThresholds;
}

export type UpkeepAction = 'vacuum' | 'analyze';

/**
 * What a round looks after: `all` of autovacuum's work, or only the `statistics` of tables that
 * grew past theirs (where autovacuum runs, it does the rest).
 */
export type UpkeepScope = 'all' | 'statistics';

/**
 * A table without statistics gets them once this many of its rows changed; one with statistics
 * gets new ones once it grew by as many rows as they counted (its size doubled), and this many.
 * Growth, not changes: a queue table whose rows come and go, or one updated in place, changes
 * its own size over and over without outgrowing what its statistics say of it, and each ANALYZE
 * makes every session plan its statements on the table again (bench/README.md, "The database at
 * scale"). Its rows' changes are autovacuum's business (or a full round's, by its thresholds).
 */
export const STATISTICS_ROWS = 1_000;

/** How often the tables are looked at for statistics outgrown. */
const STATISTICS_POLL_MS = 1_000;

/**
 * How long a round holds the turn before another instance may take it anyway: a process killed
 * mid-round frees it by this bound. A round outliving it only lets a second one run beside it,
 * which `SKIP_LOCKED` keeps off the tables the first is working.
 */
export const TURN_LEASE_MS = 120_000;

/**
 * Vacuums a round of the loop runs (a round a second while any is left). The queue tables come
 * due together, and vacuuming them one after the other took a core for two to three seconds
 * every DATABASE_TABLE_UPKEEP_INTERVAL_MS: at 500 HRIS events/s on two cores, the events of
 * those seconds waited up to a second for their sagas (bench/README.md). One a second spreads
 * the same work over the interval's first seconds.
 */
export const VACUUMS_PER_ROUND = 1;

/**
 * What each table needs now. For `all`, as autovacuum would decide: `vacuum` (which analyzes
 * too) once its dead or newly inserted rows pass their thresholds, `analyze` once enough rows
 * changed since its statistics were taken. For both scopes, `analyze` for a table whose
 * statistics it outgrew (`STATISTICS_ROWS`: it doubled in size since).
 */
export function upkeepDue(tables: readonly TableActivity[], scope: UpkeepScope = 'all'): { table: string; action: UpkeepAction }[] {
  const due: { table: string; action: UpkeepAction }[] = [];
  const over = (count: number, live: number, limit: Threshold | null) => limit !== null && count > limit.rows + limit.share * live;
  for (const t of tables) {
    if (scope === 'all' && (over(t.deadRows, t.liveRows, t.thresholds.vacuum) || over(t.insertedSinceVacuum, t.liveRows, t.thresholds.vacuumInserts))) {
      due.push({ table: t.table, action: 'vacuum' });
    } else if (scope === 'all' && over(t.modifiedSinceAnalyze, t.liveRows, t.thresholds.analyze)) {
      due.push({ table: t.table, action: 'analyze' });
    } else if (t.analyzed ? t.liveRows - Math.max(0, t.statisticsRows) >= Math.max(STATISTICS_ROWS, t.statisticsRows) : t.modifiedSinceAnalyze >= STATISTICS_ROWS) {
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
 * not at a manual VACUUM's full speed. The instances on one database take turns
 * (`table_upkeep_turn`): one round at a time, at the pace one instance would keep, so the
 * tables are analyzed as often with three instances as with one.
 *
 * Where autovacuum runs, the service still analyzes a table within a second of its outgrowing
 * its statistics (`STATISTICS_ROWS`: about each doubling of its size). Autovacuum looks once a
 * minute (`autovacuum_naptime`), and on a new database a first load runs that minute on plans
 * made for tables nearly empty: sequential scans whose cost grows with every event applied. A
 * growing table is analyzed about log2(rows) times so; each ANALYZE also makes the sessions'
 * prepared statements plan again.
 */
@Injectable()
export class TableUpkeep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TableUpkeep.name);
  private readonly signal = new WakeSignal();
  private loop: PollingLoop | undefined;
  /** What this instance looks after; undefined: nothing. */
  private scope: UpkeepScope | undefined;
  /** The server's autovacuum settings, read at the first round. */
  private server: Record<string, string> | undefined;
  /** Whether the last round left vacuums due for the next (VACUUMS_PER_ROUND). */
  vacuumsLeft = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.scope = await this.scopeToRun();
    if (!this.scope) return;
    this.loop = new PollingLoop({
      name: 'table upkeep round',
      pollMs: this.pollMs,
      signal: this.signal,
      logger: this.logger,
      round: async () => {
        await this.takeTurn();
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

  /** What this instance looks after once started; undefined: nothing. */
  get runs(): UpkeepScope | undefined {
    return this.loop ? this.scope : undefined;
  }

  private get pollMs(): number {
    return Math.min(STATISTICS_POLL_MS, this.config.DATABASE_TABLE_UPKEEP_INTERVAL_MS);
  }

  /**
   * A round, when it is this instance's turn: none began on the database within the poll
   * interval and none is running. It is a full round (autovacuum's work) once the last full one
   * began an upkeep interval ago, or left vacuums due, a vacuum a round until none is left;
   * between, the statistics outgrown. Answers what it did; undefined when it was not its turn.
   */
  async takeTurn(): Promise<{ table: string; action: UpkeepAction }[] | undefined> {
    if (!this.scope) return undefined;
    const [turn] = returnedRows<{ full: boolean; lease: string }>(
      await this.dataSource.query(
        `UPDATE table_upkeep_turn SET next_round_at = now() + $1 * interval '1 millisecond',
           full_round_at = CASE WHEN $2::boolean AND NOT vacuums_left AND full_round_at <= now() - $3 * interval '1 millisecond' THEN now() ELSE full_round_at END
         WHERE id = 1 AND next_round_at <= now()
         RETURNING $2::boolean AND (vacuums_left OR full_round_at = now()) AS full, next_round_at::text AS lease`,
        [TURN_LEASE_MS, this.scope === 'all', this.config.DATABASE_TABLE_UPKEEP_INTERVAL_MS],
      ),
    );
    if (!turn) return undefined;
    try {
      return await this.round(turn.full ? 'all' : 'statistics', VACUUMS_PER_ROUND);
    } finally {
      // The next round, any instance's, a poll interval after this one ended (a little less, so
      // the next poll of an instance whose timer runs a moment early is not passed over). Only
      // while this round still holds the turn: one that outlived its lease leaves the turn, and
      // what is left to vacuum, to the instance that took it since.
      await this.dataSource
        .query(
          `UPDATE table_upkeep_turn SET next_round_at = now() + $1 * interval '1 millisecond', vacuums_left = CASE WHEN $2::boolean THEN $3::boolean ELSE vacuums_left END
           WHERE id = 1 AND next_round_at = $4::timestamptz`,
          [Math.round(this.pollMs * 0.9), turn.full, this.vacuumsLeft, turn.lease],
        )
        .catch((error: Error) => this.logger.warn(`table upkeep: the turn was not handed on (${error.message}); it frees itself within ${TURN_LEASE_MS / 1000} s`));
    }
  }

  /**
   * Looks at the tables once and vacuums or analyzes those due (in `scope`), at most
   * `maxVacuums` vacuums (`vacuumsLeft` tells whether more were due); answers what it did.
   */
  async round(scope: UpkeepScope = 'all', maxVacuums = Infinity): Promise<{ table: string; action: UpkeepAction }[]> {
    this.server ??= await this.serverSettings();
    const rows: { table: string; live: string; dead: string; inserted: string; modified: string; analyzed: boolean; counted: string; options: string[] | null }[] = await this.dataSource.query(
      `SELECT s.relname AS table, s.n_live_tup AS live, s.n_dead_tup AS dead, s.n_ins_since_vacuum AS inserted,
              s.n_mod_since_analyze AS modified, (s.last_analyze IS NOT NULL OR s.last_autoanalyze IS NOT NULL) AS analyzed,
              c.reltuples AS counted, c.reloptions AS options
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       WHERE s.schemaname = current_schema()`,
    );
    const tables = rows.flatMap((r) => {
      const thresholds = thresholdsOf(this.server!, r.options);
      if (!thresholds) return [];
      const activity = {
        liveRows: Number(r.live),
        deadRows: Number(r.dead),
        insertedSinceVacuum: Number(r.inserted),
        modifiedSinceAnalyze: Number(r.modified),
        analyzed: r.analyzed,
        statisticsRows: Number(r.counted),
      };
      return [{ table: r.table, ...activity, thresholds }];
    });
    const all = upkeepDue(tables, scope);
    let vacuums = 0;
    const due = all.filter((d) => d.action !== 'vacuum' || ++vacuums <= maxVacuums);
    this.vacuumsLeft = due.length < all.length;
    if (due.length === 0) return due;
    const paceOf = new Map(tables.map((t) => [t.table, t.thresholds.pace]));
    // One session of its own: the pace is a setting of the session that runs the VACUUM.
    const runner = await this.session();
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

  /**
   * A session for the round's settings and VACUUMs: one of the pool's connections, or, behind a
   * transaction pooler (DATABASE_DIRECT_URL), a connection to the database itself, since the
   * pooler would run the SET and the VACUUM on whichever server connections were free.
   */
  private async session(): Promise<{ query(sql: string): Promise<unknown>; release(): Promise<void> }> {
    if (this.config.DATABASE_DIRECT_URL === undefined) {
      const runner = this.dataSource.createQueryRunner();
      await runner.connect();
      return { query: (sql) => runner.query(sql), release: () => runner.release() };
    }
    const client = new Client({ connectionString: this.config.DATABASE_DIRECT_URL, application_name: 'benefits-table-upkeep' });
    // A connection lost mid-round (a restart of the database) fails the round's query; unheard,
    // the client's 'error' event would end the process.
    client.on('error', () => undefined);
    await client.connect();
    return { query: (sql) => client.query(sql), release: () => client.end() };
  }

  private async serverSettings(): Promise<Record<string, string>> {
    const rows: { name: string; setting: string }[] = await this.dataSource.query(`SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])`, [
      AUTOVACUUM_SETTINGS,
    ]);
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  }

  private async scopeToRun(): Promise<UpkeepScope | undefined> {
    const mode = this.config.DATABASE_TABLE_UPKEEP;
    if (mode === 'off' || this.config.embedded || !this.config.WORKERS_ENABLED) return undefined;
    if (mode === 'on') return 'all';
    const [{ autovacuum }] = await this.dataSource.query(`SELECT current_setting('autovacuum') AS autovacuum`);
    if (autovacuum === 'on') return 'statistics';
    this.logger.warn('PostgreSQL autovacuum is off: this instance vacuums and analyzes the tables itself, by autovacuum\'s thresholds (DATABASE_TABLE_UPKEEP)');
    return 'all';
  }
}

@Module({ providers: [TableUpkeep], exports: [TableUpkeep] })
export class TableUpkeepModule {}
