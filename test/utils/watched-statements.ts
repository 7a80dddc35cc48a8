import { DataSource } from 'typeorm';

/** A statement as sent, with its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** Anything that runs SQL: a DataSource, an EntityManager or a QueryRunner (in a transaction of its own, say). */
interface Sql {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** A data source that records every statement run through it, with its parameters. */
export function watching(dataSource: DataSource): { db: DataSource; queries: Statement[] } {
  const queries: Statement[] = [];
  const db = new Proxy(dataSource, {
    get: (target, key) =>
      key === 'query'
        ? (sql: string, params: unknown[] = []) => {
            queries.push({ sql, params });
            return target.query(sql, params);
          }
        : Reflect.get(target, key),
  });
  return { db, queries };
}

/**
 * For each statement that reads `table`, the rows of it its plan produced or read and dropped,
 * run again under EXPLAIN ANALYZE on `db` (a statement that writes: on a runner whose
 * transaction is rolled back after).
 */
export async function rowsReadOf(db: Sql, table: string, statements: readonly Statement[]): Promise<number[]> {
  const rowsRead = (node: Record<string, unknown>): number =>
    (node['Relation Name'] === table ? (Number(node['Actual Rows']) + Number(node['Rows Removed by Filter'] ?? 0)) * Number(node['Actual Loops']) : 0) +
    ((node.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((sum, child) => sum + rowsRead(child), 0);
  const read: number[] = [];
  for (const { sql, params } of statements.filter((s) => s.sql.includes(` ${table} `))) {
    const [{ 'QUERY PLAN': [plan] }] = (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)) as { 'QUERY PLAN': { Plan: Record<string, unknown> }[] }[];
    read.push(rowsRead(plan.Plan));
  }
  return read;
}
