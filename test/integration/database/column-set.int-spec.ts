import { DataSource } from 'typeorm';
import { ColumnSet } from '../../../src/infrastructure/database/column-set';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

interface Row extends Record<string, unknown> {
  id: string;
  name: string | null;
  n: number | null;
  flag: boolean | null;
  day: string | null;
  at: Date | string | null;
  doc: unknown;
  other: unknown;
  refs: string[] | null;
}

const ROWS = new ColumnSet<Row>({
  id: 'uuid',
  name: 'text',
  n: 'int',
  flag: 'bool',
  day: 'date',
  at: 'timestamptz',
  doc: 'jsonb',
  other: 'jsonb',
  refs: 'uuid[]',
});

const A = '5b2f0a6e-3c3d-4f6e-9a2b-0c1d2e3f4a5b';
const B = '604832c7-7416-4200-a9d2-24b530cad597';

describeWithPostgres('ColumnSet: a set of rows as one array parameter per column', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(1));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const read = (rows: Row[]) =>
    dataSource.query(
      `SELECT u.id, u.name, u.n, u.flag, to_char(u.day, 'YYYY-MM-DD') AS day, u.at, u.doc, u.other, u.refs,
              pg_typeof(u.doc)::text AS doc_type, pg_typeof(u.refs)::text AS refs_type
       FROM ${ROWS.from(1)}`,
      ROWS.values(rows),
    );

  it('reads back every column with its type, in order', async () => {
    const shared = { plan: { type: 'percent', amount: 500 } };
    const rows: Row[] = [
      { id: A, name: 'o’Brien, "x"\\y', n: 7, flag: true, day: '2026-02-28', at: new Date('2026-03-01T09:30:00.123Z'), doc: shared, other: [1, { a: null }], refs: [A, B] },
      { id: B, name: null, n: null, flag: null, day: null, at: '2026-03-02T00:00:00Z', doc: shared, other: 'text', refs: [] },
    ];
    const out = await read(rows);
    expect(out).toEqual([
      { id: A, name: 'o’Brien, "x"\\y', n: 7, flag: true, day: '2026-02-28', at: new Date('2026-03-01T09:30:00.123Z'), doc: shared, other: [1, { a: null }], refs: [A, B], doc_type: 'jsonb', refs_type: 'uuid[]' },
      { id: B, name: null, n: null, flag: null, day: null, at: new Date('2026-03-02T00:00:00Z'), doc: shared, other: 'text', refs: [], doc_type: 'jsonb', refs_type: 'uuid[]' },
    ]);
  });

  it('reads absent values and JSON null as SQL NULL, as jsonb_to_recordset does', async () => {
    const [row] = await read([{ id: A, name: undefined as unknown as null, n: 0, flag: false, day: null, at: null, doc: null, other: undefined, refs: null }]);
    expect(row).toMatchObject({ name: null, n: 0, flag: false, doc: null, other: null, refs: null });
  });

  it('sends each distinct JSON value once, however many rows share it', () => {
    const rows: Row[] = Array.from({ length: 1_000 }, (_, i) => ({
      id: A,
      name: null,
      n: i,
      flag: null,
      day: null,
      at: null,
      doc: { same: true },
      other: i % 2 === 0 ? { even: true } : [i % 3],
      refs: null,
    }));
    const params = ROWS.values(rows);
    expect(params).toHaveLength(ROWS.count);
    expect(JSON.parse(params[params.length - 1] as string)).toEqual([{ same: true }, { even: true }, [1], [0], [2]]);
  });

  it('reads an empty set as no rows', async () => {
    expect(await read([])).toEqual([]);
  });
});
