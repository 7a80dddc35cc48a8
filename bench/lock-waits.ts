import { DataSource } from 'typeorm';
import { round } from './bench-service';

/** Backends found waiting for a lock over a run, by what waits and what it waits for. */
export interface LockWaits {
  samples: number;
  /** Mean backends waiting for a lock in a sample. */
  mean_waiting: number;
  /** Each (waiting statement, blocking statement and its state) pair: its share of the samples' waiting backends, in %. */
  pairs: { waiting: string; blocked_by: string; share: number }[];
}

const shortened = (sql: string) => `left(regexp_replace(${sql}, '\\s+', ' ', 'g'), 110)`;

/**
 * Samples PostgreSQL's backends waiting for a lock (pg_stat_activity, pg_blocking_pids) every
 * `everyMs` until stopped: who waits on whom, which the statements' times (waits included) do
 * not tell. A blocker `idle in transaction` is a transaction waiting on its client, holding its
 * locks meanwhile; its statement is the last it ran.
 */
export function sampleLockWaits(db: DataSource, everyMs = 25): { stop: () => Promise<LockWaits> } {
  let running = true;
  let samples = 0;
  let waiting = 0;
  const pairs = new Map<string, number>();
  const loop = (async () => {
    while (running) {
      const rows: { waiting: string; blocked_by: string | null }[] = await db.query(
        `SELECT ${shortened('w.query')} AS waiting,
                (SELECT string_agg(${shortened('b.query')} || ' [' || b.state || ']', ' | ')
                 FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(w.pid))) AS blocked_by
         FROM pg_stat_activity w
         WHERE w.wait_event_type = 'Lock' AND w.datname = current_database() AND w.pid <> pg_backend_pid()`,
      );
      samples++;
      waiting += rows.length;
      for (const row of rows) {
        const key = `${row.waiting}\u0001${row.blocked_by ?? '(gone)'}`;
        pairs.set(key, (pairs.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return {
        samples,
        mean_waiting: round(waiting / Math.max(1, samples), 3),
        pairs: [...pairs]
          .sort(([, a], [, b]) => b - a)
          .slice(0, 8)
          .map(([key, n]) => {
            const [w, b] = key.split('\u0001');
            return { waiting: w, blocked_by: b, share: round((n * 100) / Math.max(1, waiting), 1) };
          }),
      };
    },
  };
}
