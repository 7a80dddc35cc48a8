/** What runs SQL: a DataSource or an EntityManager (a transaction's). */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * The optional conditions of a WHERE clause, each with its parameter, numbered `$1`, `$2`, … in
 * the order they are added. Values never enter the SQL text; only the caller's fragments do.
 *
 *   const where = new SqlFilter();
 *   if (filter.status) where.and((p) => `status = ${p}`, filter.status);
 *   db.query(`SELECT … FROM jobs ${where.clause}`, where.params);
 */
export class SqlFilter {
  private readonly conditions: string[] = [];
  private readonly values: unknown[] = [];

  /** Adds a condition that takes no parameter, such as `status = 'open'`. */
  and(condition: string): this;
  /** Adds `condition(placeholder)`, with `value` as the parameter behind the placeholder. */
  and(condition: (placeholder: string) => string, value: unknown): this;
  and(condition: string | ((placeholder: string) => string), value?: unknown): this {
    if (typeof condition === 'string') {
      this.conditions.push(condition);
    } else {
      this.values.push(value);
      this.conditions.push(condition(`$${this.values.length}`));
    }
    return this;
  }

  /** `WHERE a AND b …`, or an empty string when no condition was added. */
  get clause(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }

  /** The parameters of the clause, in placeholder order (a copy). */
  get params(): unknown[] {
    return [...this.values];
  }
}

export interface PagedQuery {
  /** What is counted: the table with the alias `where` uses, e.g. `sagas s`. */
  from: string;
  /** The rows' SELECT up to where the WHERE goes, joins included. */
  select: string;
  where: SqlFilter;
  /** Should end in a unique key, so that pages neither repeat nor skip rows. */
  orderBy: string;
}

/**
 * A counted, paged listing: the number of rows `where` matches in `from`, and the page of them
 * (`limit` rows after `offset`) that `select` returns in `orderBy` order. Two statements, not one
 * transaction: the count is for paging, so a row written in between may make it one off. `count`,
 * when given, answers the count instead (kept counts, where counting rows would read them all).
 */
export async function countedPage<Row>(
  db: SqlRunner,
  query: PagedQuery,
  page: { limit: number; offset: number },
  count?: () => Promise<number>,
): Promise<{ count: number; rows: Row[] }> {
  const { clause, params } = query.where;
  const n = count ? await count() : ((await db.query(`SELECT count(*)::int AS n FROM ${query.from} ${clause}`, params)) as { n: number }[])[0].n;
  const rows = (await db.query(
    `${query.select} ${clause} ORDER BY ${query.orderBy} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, page.limit, page.offset],
  )) as Row[];
  return { count: n, rows };
}
