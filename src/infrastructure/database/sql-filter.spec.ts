import { countedPage, SqlFilter, SqlRunner } from './sql-filter';

/** Records each statement and answers from a script, in order. */
class ScriptedRunner implements SqlRunner {
  readonly statements: { sql: string; parameters: unknown[] | undefined }[] = [];

  constructor(private readonly answers: unknown[]) {}

  async query(sql: string, parameters?: unknown[]): Promise<unknown> {
    this.statements.push({ sql: sql.replace(/\s+/g, ' ').trim(), parameters });
    return this.answers.shift();
  }
}

describe('SqlFilter', () => {
  it('renders nothing and has no parameters without a condition', () => {
    const where = new SqlFilter();
    expect(where.clause).toBe('');
    expect(where.params).toEqual([]);
  });

  it('numbers the placeholders in the order the conditions are added and joins them with AND', () => {
    const where = new SqlFilter()
      .and((p) => `s.type = ${p}`, 'new_hire')
      .and((p) => `s.created_at <= ${p}`, new Date('2026-07-01T00:00:00Z'));
    expect(where.clause).toBe('WHERE s.type = $1 AND s.created_at <= $2');
    expect(where.params).toEqual(['new_hire', new Date('2026-07-01T00:00:00Z')]);
  });

  it('takes conditions without a parameter between the others, leaving the numbering alone', () => {
    const where = new SqlFilter()
      .and((p) => `connection_id = ${p}`, 'c-1')
      .and(`status = 'open'`)
      .and((p) => `due_date < ${p}::date`, '2026-07-01');
    expect(where.clause).toBe(`WHERE connection_id = $1 AND status = 'open' AND due_date < $2::date`);
    expect(where.params).toEqual(['c-1', '2026-07-01']);
  });

  it('keeps false, zero and null as parameters: the caller decides what to leave out', () => {
    const where = new SqlFilter()
      .and((p) => `p.active = ${p}`, false)
      .and((p) => `n = ${p}`, 0)
      .and((p) => `x IS NOT DISTINCT FROM ${p}`, null);
    expect(where.params).toEqual([false, 0, null]);
  });

  it('hands out a copy of its parameters', () => {
    const where = new SqlFilter().and((p) => `a = ${p}`, 1);
    where.params.push(2);
    expect(where.params).toEqual([1]);
  });
});

describe('countedPage', () => {
  it('counts what the filter matches, then reads the page after its parameters', async () => {
    const db = new ScriptedRunner([[{ n: 42 }], [{ id: 'a' }, { id: 'b' }]]);
    const where = new SqlFilter().and((p) => `s.state = ${p}`, 'failed').and((p) => `s.connection_id = ${p}`, 'c-1');

    const page = await countedPage<{ id: string }>(
      db,
      { from: 'sagas s', select: 'SELECT s.id FROM sagas s', where, orderBy: 's.created_at DESC, s.id' },
      { limit: 2, offset: 20 },
    );

    expect(page).toEqual({ count: 42, rows: [{ id: 'a' }, { id: 'b' }] });
    expect(db.statements).toEqual([
      { sql: 'SELECT count(*)::int AS n FROM sagas s WHERE s.state = $1 AND s.connection_id = $2', parameters: ['failed', 'c-1'] },
      {
        sql: 'SELECT s.id FROM sagas s WHERE s.state = $1 AND s.connection_id = $2 ORDER BY s.created_at DESC, s.id LIMIT $3 OFFSET $4',
        parameters: ['failed', 'c-1', 2, 20],
      },
    ]);
  });

  it('pages from $1 when nothing is filtered', async () => {
    const db = new ScriptedRunner([[{ n: 0 }], []]);

    const page = await countedPage(
      db,
      { from: 'ops_audit', select: 'SELECT id FROM ops_audit', where: new SqlFilter(), orderBy: 'at DESC, id DESC' },
      { limit: 50, offset: 0 },
    );

    expect(page).toEqual({ count: 0, rows: [] });
    expect(db.statements).toEqual([
      { sql: 'SELECT count(*)::int AS n FROM ops_audit', parameters: [] },
      { sql: 'SELECT id FROM ops_audit ORDER BY at DESC, id DESC LIMIT $1 OFFSET $2', parameters: [50, 0] },
    ]);
  });
});
