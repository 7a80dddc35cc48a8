import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { EmployerRef } from '../src/domain/providers/provider-port';
import { dataSourceOptions } from '../src/infrastructure/database/data-source';

/**
 * Runs `work` on a fresh, migrated database on TEST_DATABASE_URL / DATABASE_URL's server
 * (default postgres://postgres@127.0.0.1:5432/postgres) and drops it afterwards.
 */
export async function withBenchDatabase<T>(prefix: string, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const server = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const dataSource = new DataSource(dataSourceOptions({ url: url.toString(), poolSize: 4 }));
  try {
    await dataSource.initialize();
    return await work(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Writes a benchmark's figures to bench/results/<name>.json. */
export function writeBenchResult(name: string, result: unknown): void {
  const folder = join(__dirname, 'results');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** The entry point of a benchmark script: failures print and exit 1. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

/** A sandbox connection with one entity, written straight into the tables the connect flow writes. */
export async function insertBenchConnection(dataSource: DataSource, providerId: string, employeeSize: number): Promise<EmployerRef> {
  const applicationId = randomUUID();
  const connectionId = randomUUID();
  const entityId = randomUUID();
  await dataSource.query(`INSERT INTO applications (id, name, secret_hash, sandbox) VALUES ($1, 'bench', 'not-a-secret', true)`, [applicationId]);
  await dataSource.query(
    `INSERT INTO connections (id, application_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox, employee_size)
     VALUES ($1, $2, $3, 'credential', $4, $5, $6, 'connected', true, $7)`,
    [connectionId, applicationId, providerId, randomUUID(), entityId, ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement'], employeeSize],
  );
  await dataSource.query(`INSERT INTO connection_entities (id, connection_id, name, status) VALUES ($1, $2, 'Bench Corp', 'active')`, [
    entityId,
    connectionId,
  ]);
  return { connectionId, entityId, entityName: 'Bench Corp', providerId, authenticationType: 'credential', employeeSize };
}

/** Row counters of one table from `pg_stat_user_tables`. */
export interface TableActivity {
  inserted: number;
  updated: number;
  hot_updated: number;
  deleted: number;
  /** Times it was analyzed (by anyone: the table upkeep, autovacuum, a VACUUM's ANALYZE). */
  analyzed: number;
  /** Times it was vacuumed. */
  vacuumed: number;
}

/**
 * Longer than PostgreSQL 15's idle flush interval (PGSTAT_IDLE_INTERVAL, 10 s): a backend
 * flushes its table counters at most once a second while busy and 10 s after it goes idle, so
 * after this wait every backend's counters are in `pg_stat_user_tables`.
 * `pg_stat_force_next_flush()` would flush only the calling session's.
 */
export const TABLE_STATS_FLUSH_MS = 11_000;

/** Every user table's row counters now (partitions listed apart), by table name. */
export async function tableActivity(dataSource: DataSource): Promise<Map<string, TableActivity>> {
  const rows: { relname: string; ins: string; upd: string; hot: string; del: string; analyzed: string; vacuumed: string }[] = await dataSource.query(
    `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del,
            analyze_count + autoanalyze_count AS analyzed, vacuum_count + autovacuum_count AS vacuumed
     FROM pg_stat_user_tables`,
  );
  return new Map(
    rows.map((r) => [
      r.relname,
      { inserted: Number(r.ins), updated: Number(r.upd), hot_updated: Number(r.hot), deleted: Number(r.del), analyzed: Number(r.analyzed), vacuumed: Number(r.vacuumed) },
    ]),
  );
}

/** What each table did between two snapshots, for the tables that did anything. */
export function tableActivityBetween(before: Map<string, TableActivity>, after: Map<string, TableActivity>): Record<string, TableActivity> {
  const moved: Record<string, TableActivity> = {};
  for (const [table, now] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
    const was = before.get(table) ?? { inserted: 0, updated: 0, hot_updated: 0, deleted: 0, analyzed: 0, vacuumed: 0 };
    const delta = {
      inserted: now.inserted - was.inserted,
      updated: now.updated - was.updated,
      hot_updated: now.hot_updated - was.hot_updated,
      deleted: now.deleted - was.deleted,
      analyzed: now.analyzed - was.analyzed,
      vacuumed: now.vacuumed - was.vacuumed,
    };
    if (delta.inserted || delta.updated || delta.deleted || delta.analyzed || delta.vacuumed) moved[table] = delta;
  }
  return moved;
}

/** Sums of several runs' table activity, table by table. */
export function addTableActivity(runs: readonly Record<string, TableActivity>[]): Record<string, TableActivity> {
  const sum: Record<string, TableActivity> = {};
  for (const run of runs) {
    for (const [table, a] of Object.entries(run)) {
      const s = (sum[table] ??= { inserted: 0, updated: 0, hot_updated: 0, deleted: 0, analyzed: 0, vacuumed: 0 });
      s.inserted += a.inserted;
      s.updated += a.updated;
      s.hot_updated += a.hot_updated;
      s.deleted += a.deleted;
      // Results written before these counters were kept have none.
      s.analyzed += a.analyzed ?? 0;
      s.vacuumed += a.vacuumed ?? 0;
    }
  }
  return sum;
}

/** The share (%) of these tables' updates that were HOT; null when they updated nothing. */
export function hotShare(activity: Record<string, TableActivity>, tables: readonly string[]): number | null {
  let updated = 0;
  let hot = 0;
  for (const table of tables) {
    updated += activity[table]?.updated ?? 0;
    hot += activity[table]?.hot_updated ?? 0;
  }
  return updated === 0 ? null : Math.round((1000 * hot) / updated) / 10;
}
