import { Client, ClientConfig } from 'pg';
import { arrayLiteral } from './array-literal';

/** Distinct statement texts one connection prepares at most; texts beyond run unnamed, as before. */
export const MAX_PREPARED_PER_CONNECTION = 500;

/** Texts run once that a connection remembers, waiting for a second run to be prepared. */
const MAX_SEEN_ONCE = 2_000;

/** PostgreSQL's answer when a prepared statement's result columns changed under it (DDL since it was prepared). */
const PLAN_CHANGED = '0A000';

/**
 * A pg client that runs every parameterised statement as a named prepared statement, once per
 * connection: PostgreSQL parses and plans it on first use and then reuses the plan, instead of
 * parsing and planning again on every execution, which node-postgres does for unnamed
 * statements. Measured on the HRIS-event path, parse and planning were about 45 % of the
 * database's statement time (bench/README.md). Statements without parameters (BEGIN, COMMIT,
 * SAVEPOINT, DDL) stay on the simple protocol.
 *
 * A text is prepared on its second run: SQL generated in one-off shapes (a multi-row insert of
 * whatever rows a batch holds) runs unnamed, as before, and takes no slot. Bounded: a
 * connection names at most MAX_PREPARED_PER_CONNECTION distinct texts, so such SQL cannot grow
 * a backend's memory without end. A statement whose result
 * shape changed (a migration altered its table since) fails once with PostgreSQL's "cached plan
 * must not change result type"; its name is then forgotten, so the next run prepares it afresh.
 * Off for connection poolers in transaction mode, which cannot keep a session's statements
 * (DATABASE_PREPARED_STATEMENTS=false).
 *
 * Array parameters of plain values go as the text of their literal (arrayLiteral), formatted
 * once, instead of through node-postgres's own formatting.
 */
export class PreparedStatementsClient extends Client {
  private readonly names = new Map<string, string>();
  private readonly seenOnce = new Set<string>();
  private issued = 0;

  constructor(config?: string | ClientConfig) {
    super(config);
  }

  // pg's query() has many overloads; only (text, values[, callback]) is given a name.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0) return super.query(config, values, callback);
    values = values.map((value: unknown) => (Array.isArray(value) ? (arrayLiteral(value) ?? value) : value));
    const name = this.nameOf(config);
    if (name === undefined) return super.query(config, values, callback);
    const named = { name, text: config, values };
    if (typeof callback === 'function') {
      return super.query(named, (error: Error | undefined, result: unknown) => {
        this.forgetIfStale(config, error);
        callback(error, result);
      });
    }
    return (super.query(named) as unknown as Promise<unknown>).catch((error: unknown) => {
      this.forgetIfStale(config, error);
      throw error;
    });
  }

  private nameOf(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.issued >= MAX_PREPARED_PER_CONNECTION) return undefined;
    if (!this.seenOnce.has(text)) {
      // Forgetting them all now and then keeps the set bounded; a text run often comes back at once.
      if (this.seenOnce.size >= MAX_SEEN_ONCE) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
    const name = `s${++this.issued}`;
    this.names.set(text, name);
    return name;
  }

  private forgetIfStale(text: string, error: unknown): void {
    if ((error as { code?: string } | undefined)?.code === PLAN_CHANGED) this.names.delete(text);
  }
}
