import { QueryRunner } from 'typeorm';

/**
 * The statement triggers of a kept count (kept-counts.ts), as migrations 1798800000000 (sagas)
 * and 1798810000000 (jobs) make them: each statement appends what it changed, ±n by key, to
 * `${prefix}_count_changes` in its own transaction; a TRUNCATE of the table empties the counts.
 * Frozen with those migrations: a later change of these triggers is a migration of its own.
 */
export interface KeptCountTriggers {
  /** The table counted, e.g. `sagas`. */
  table: string;
  /** Names `${prefix}_counts`, `${prefix}_count_changes` and the functions and triggers `${prefix}_counts_inserted`, … */
  prefix: string;
  /** The key's columns in the counts tables, e.g. `type, state`. */
  columns: string;
  /** The key of a row of the table under an alias, as many expressions as `columns`. */
  keyOf: (row: string) => string;
  /** Whether a row under an alias is counted at all. */
  counted: (row: string) => string;
}

const EVENTS = ['inserted', 'updated', 'deleted', 'truncated'] as const;

export async function createKeptCountTriggers(q: QueryRunner, t: KeptCountTriggers): Promise<void> {
  const changes = `${t.prefix}_count_changes`;
  const positions = t.columns.split(',').map((_, i) => i + 1).join(', ');
  const body = (sql: string) => `RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${sql}; RETURN NULL; END $$`;
  const functionOf = (event: (typeof EVENTS)[number]) => `${t.prefix}_counts_${event}`;
  await q.query(`
    CREATE FUNCTION ${functionOf('inserted')}() ${body(
      `INSERT INTO ${changes} (${t.columns}, n) SELECT ${t.keyOf('n')}, count(*) FROM new_rows n WHERE ${t.counted('n')} GROUP BY ${positions}`,
    )}`);
  // Each row counted again under its new key and taken off its old one: a row whose key stayed
  // cancels out, with no join of the two transition tables.
  await q.query(`
    CREATE FUNCTION ${functionOf('updated')}() ${body(
      `INSERT INTO ${changes} (${t.columns}, n)
       SELECT ${t.columns}, sum(n) FROM (
         SELECT ${t.keyOf('n')}, 1 FROM new_rows n WHERE ${t.counted('n')}
         UNION ALL
         SELECT ${t.keyOf('o')}, -1 FROM old_rows o WHERE ${t.counted('o')}
       ) AS moved(${t.columns}, n)
       GROUP BY ${positions} HAVING sum(n) <> 0`,
    )}`);
  await q.query(`
    CREATE FUNCTION ${functionOf('deleted')}() ${body(
      `INSERT INTO ${changes} (${t.columns}, n) SELECT ${t.keyOf('o')}, -count(*) FROM old_rows o WHERE ${t.counted('o')} GROUP BY ${positions}`,
    )}`);
  await q.query(`CREATE FUNCTION ${functionOf('truncated')}() ${body(`DELETE FROM ${changes}; DELETE FROM ${t.prefix}_counts`)}`);
  const on = `ON ${t.table}`;
  const run = (event: (typeof EVENTS)[number]) => `EXECUTE FUNCTION ${functionOf(event)}()`;
  await q.query(`CREATE TRIGGER ${functionOf('inserted')} AFTER INSERT ${on} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT ${run('inserted')}`);
  await q.query(`CREATE TRIGGER ${functionOf('updated')} AFTER UPDATE ${on} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT ${run('updated')}`);
  await q.query(`CREATE TRIGGER ${functionOf('deleted')} AFTER DELETE ${on} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT ${run('deleted')}`);
  await q.query(`CREATE TRIGGER ${functionOf('truncated')} AFTER TRUNCATE ${on} FOR EACH STATEMENT ${run('truncated')}`);
}

export async function dropKeptCountTriggers(q: QueryRunner, t: Pick<KeptCountTriggers, 'table' | 'prefix'>): Promise<void> {
  for (const event of [...EVENTS].reverse()) {
    await q.query(`DROP TRIGGER ${t.prefix}_counts_${event} ON ${t.table}`);
    await q.query(`DROP FUNCTION ${t.prefix}_counts_${event}()`);
  }
}
