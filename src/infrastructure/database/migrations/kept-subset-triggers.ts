import { QueryRunner } from 'typeorm';

/**
 * A rare subset of a table kept for good (its failed rows), kept in a table of its own by row
 * triggers, so that a listing of it reads only its rows: the table itself has no index on the
 * column that puts a row in the subset, because a column an index reads makes every update that
 * changes it non-HOT, and these tables' rows move on the event path ("Work in flight is updated in
 * place", docs/decisions.md). Each trigger's WHEN, checked per row inside the executor with no
 * function called, lets through only a row whose column changes into, out of or within the
 * subset's values: the rows that never enter the subset pay one comparison.
 * Frozen with the migrations that use it: a later change is a migration of its own.
 */
export interface KeptSubset {
  /** The table kept for good, keyed by `id uuid`, e.g. `sagas`. */
  table: string;
  /** The subset's table, e.g. `failed_sagas`; it names the function and triggers too. */
  subset: string;
  /** The subset's key, referencing the table's `id`, e.g. `saga_id`. */
  reference: string;
  /** The column whose value puts a row in the subset, and those values. */
  column: string;
  values: readonly string[];
  /** The columns copied from the row (the listing's order, and `column` when values are several), with their types. */
  copied: readonly (readonly [name: string, type: string])[];
  /** The listing's order over the subset's columns, e.g. `created_at DESC, saga_id`. */
  order: string;
}

export async function createKeptSubset(q: QueryRunner, s: KeptSubset): Promise<void> {
  const values = s.values.map((v) => `'${v}'`).join(', ');
  const names = s.copied.map(([name]) => name);
  await q.query(`
    CREATE TABLE ${s.subset} (
      ${s.reference} uuid PRIMARY KEY REFERENCES ${s.table} (id) ON DELETE CASCADE,
      ${s.copied.map(([name, type]) => `${name} ${type} NOT NULL`).join(',\n      ')}
    )`);
  await q.query(`CREATE INDEX ${s.subset}_list_idx ON ${s.subset} (${s.order})`);
  await q.query(`
    CREATE FUNCTION ${s.subset}_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.${s.column} IN (${values}) THEN
        INSERT INTO ${s.subset} (${s.reference}, ${names.join(', ')}) VALUES (NEW.id, ${names.map((n) => `NEW.${n}`).join(', ')})
        ON CONFLICT (${s.reference}) DO UPDATE SET ${names.map((n) => `${n} = excluded.${n}`).join(', ')};
      ELSE
        DELETE FROM ${s.subset} WHERE ${s.reference} = NEW.id;
      END IF;
      RETURN NULL;
    END $$`);
  await q.query(`CREATE TRIGGER ${s.subset}_inserted AFTER INSERT ON ${s.table} FOR EACH ROW WHEN (NEW.${s.column} IN (${values})) EXECUTE FUNCTION ${s.subset}_kept()`);
  await q.query(
    `CREATE TRIGGER ${s.subset}_updated AFTER UPDATE OF ${s.column} ON ${s.table} FOR EACH ROW
     WHEN (OLD.${s.column} IS DISTINCT FROM NEW.${s.column} AND (OLD.${s.column} IN (${values}) OR NEW.${s.column} IN (${values})))
     EXECUTE FUNCTION ${s.subset}_kept()`,
  );
  await q.query(`INSERT INTO ${s.subset} (${s.reference}, ${names.join(', ')}) SELECT id, ${names.join(', ')} FROM ${s.table} WHERE ${s.column} IN (${values})`);
}

export async function dropKeptSubset(q: QueryRunner, s: Pick<KeptSubset, 'table' | 'subset'>): Promise<void> {
  await q.query(`DROP TRIGGER ${s.subset}_updated ON ${s.table}`);
  await q.query(`DROP TRIGGER ${s.subset}_inserted ON ${s.table}`);
  await q.query(`DROP FUNCTION ${s.subset}_kept()`);
  await q.query(`DROP TABLE ${s.subset}`);
}
