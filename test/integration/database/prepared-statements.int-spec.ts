import { DataSource } from 'typeorm';
import { MAX_PREPARED_PER_CONNECTION, PreparedStatementsClient } from '../../../src/infrastructure/database/prepared-statements-client';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { describeWithPostgres } from '../../setup/test-env';
import { createTestDatabase, TestDatabase } from '../../utils/test-database';

/** Statements this session has prepared (protocol-level ones included), by text. */
const preparedTexts = async (client: PreparedStatementsClient): Promise<string[]> =>
  (await client.query('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time')).rows.map((r: { statement: string }) => r.statement);

describeWithPostgres('PreparedStatementsClient', () => {
  let database: TestDatabase;
  let client: PreparedStatementsClient;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());
  beforeEach(async () => {
    client = new PreparedStatementsClient({ connectionString: database.url });
    await client.connect();
  });
  afterEach(() => client?.end());

  it('prepares a parameterised statement on its second run and reuses it; the answers are those of a plain client', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    const answers = [(await client.query(text, [1])).rows[0].n];
    expect(await preparedTexts(client)).toEqual([]);
    for (const n of [2, 3, 4]) answers.push((await client.query(text, [n])).rows[0].n);
    expect(answers).toEqual([2, 3, 4, 5]);
    expect(await preparedTexts(client)).toEqual([text]);
  });

  it('leaves a text run only once unprepared (one-off shapes take no slot)', async () => {
    for (let rows = 1; rows <= 5; rows++) {
      const values = Array.from({ length: rows }, (_, i) => `($${i + 1}::int)`).join(', ');
      await client.query(`SELECT sum(v)::int AS s FROM (VALUES ${values}) t(v)`, Array.from({ length: rows }, (_, i) => i));
    }
    expect(await preparedTexts(client)).toEqual([]);
  });

  it('leaves statements without parameters unprepared', async () => {
    await client.query('SELECT 1');
    await client.query('BEGIN');
    await client.query('SAVEPOINT a');
    await client.query('ROLLBACK');
    await client.query('SELECT 2', []);
    expect(await preparedTexts(client)).toEqual([]);
  });

  it('takes the callback form too', async () => {
    const run = () =>
      new Promise<unknown[]>((resolve, reject) =>
        client.query('SELECT $1::text AS t', ['x'], (error: Error | undefined, result: { rows: unknown[] }) => (error ? reject(error) : resolve(result.rows))),
      );
    expect([await run(), await run()]).toEqual([[{ t: 'x' }], [{ t: 'x' }]]);
    expect(await preparedTexts(client)).toEqual(['SELECT $1::text AS t']);
  });

  it(`prepares at most ${MAX_PREPARED_PER_CONNECTION} texts per connection; the rest still run, unnamed`, async () => {
    const total = MAX_PREPARED_PER_CONNECTION + 20;
    let sum = 0;
    for (let i = 0; i < total; i++) {
      for (let run = 0; run < 2; run++) sum += (await client.query(`SELECT $1::int AS v, ${i} AS i`, [1])).rows[0].v;
    }
    expect(sum).toBe(2 * total);
    expect((await preparedTexts(client)).length).toBe(MAX_PREPARED_PER_CONNECTION);
  });

  it('a statement whose table changed fails once, then is prepared afresh', async () => {
    await client.query('CREATE TABLE shape_probe (id int PRIMARY KEY)');
    await client.query('INSERT INTO shape_probe VALUES (1)');
    const text = 'SELECT * FROM shape_probe WHERE id = $1';
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1 }]);
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1 }]);
    expect(await preparedTexts(client)).toEqual([text]);
    await client.query('ALTER TABLE shape_probe ADD COLUMN label text');
    await expect(client.query(text, [1])).rejects.toMatchObject({ code: '0A000' });
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, label: null }]);
  });

  it('an error in a transaction leaves the connection usable and the statement prepared', async () => {
    expect((await client.query('SELECT 1 / $1::int', [1])).rowCount).toBe(1);
    await client.query('BEGIN');
    await expect(client.query('SELECT 1 / $1::int', [0])).rejects.toMatchObject({ code: '22012' });
    await client.query('ROLLBACK');
    expect((await client.query('SELECT 1 / $1::int AS q', [1])).rows).toEqual([{ q: 1 }]);
    expect((await client.query('SELECT 1 / $1::int', [1])).rowCount).toBe(1);
    expect(await preparedTexts(client)).toContain('SELECT 1 / $1::int');
  });

  it('is what the service data source connects with, unless turned off', async () => {
    const on = new DataSource(dataSourceOptions({ url: database.url, poolSize: 1 }));
    const off = new DataSource(dataSourceOptions({ url: database.url, poolSize: 1, preparedStatements: false }));
    await on.initialize();
    await off.initialize();
    try {
      const count = async (ds: DataSource) => {
        await ds.query('SELECT $1::int AS n', [1]);
        await ds.query('SELECT $1::int AS n', [2]);
        return (await ds.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = 'SELECT $1::int AS n'`))[0].n;
      };
      expect({ on: await count(on), off: await count(off) }).toEqual({ on: 1, off: 0 });
    } finally {
      await on.destroy();
      await off.destroy();
    }
  });
});
