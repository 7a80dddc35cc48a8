/**
 * Profile: where PostgreSQL's time goes in a cold round against a warm one, by statement. In a
 * PostgreSQL cluster of the benchmark's own with pg_stat_statements loaded (the machine's server
 * is left as it is), one service applies the HRIS stream in rounds of `--events` (5,000) that
 * alternate cold (a service process started just before it) and warm (the same process, right
 * after): `--pairs` (2) of each. Per round: events/s end to end, the statements' execution and
 * planning time per event (wall time, waits included), the ledger's advisory-lock statement on
 * its own (calls and time: what the applying path and the job workers wait for each other), the
 * backends found waiting for a lock by what they wait on, and the statements whose time per event
 * grew most from warm to cold. **Baseline:** the warm rounds of the same run.
 *
 *   npx ts-node --transpile-only bench/cold-statements.ts [--events=5000] [--pairs=2] [--top=20]
 */
import { argValue, ensureBuild, round } from './bench-service';
import { backgroundKind, throughputRun, withStatementsBench } from './hris-events';
import { LockWaits, sampleLockWaits } from './lock-waits';

interface StatementTimes {
  /** The text first recorded for the statement in the run. */
  name: string;
  calls: number;
  execMs: number;
  planMs: number;
}

interface Round {
  kind: 'cold' | 'warm';
  eventsPerSecond: number;
  statements: Map<string, StatementTimes>;
  lockWaits: LockWaits;
}

const LEDGER_LOCKS = /pg_advisory_xact_lock_shared\(hashtextextended\(u\.k/;
const text = (query: string) => query.replace(/\s+/g, ' ').slice(0, 110);

async function main(): Promise<void> {
  ensureBuild();
  const events = Number(argValue('events') ?? 5_000);
  const pairs = Math.max(1, Number(argValue('pairs') ?? 2));
  const top = Number(argValue('top') ?? 20);
  await withStatementsBench('cold_stmt', async ({ scope, database, employers, service, restart }) => {
    const rounds: Round[] = [];
    const names = new Map<string, string>();
    for (let i = 0; i < pairs * 2; i++) {
      const kind = i % 2 === 0 ? 'cold' : 'warm';
      if (kind === 'cold') await restart();
      await database.db.query(`SELECT pg_stat_statements_reset()`);
      const sampler = sampleLockWaits(database.db);
      const run = await throughputRun(scope, database.db, service(), employers, events, { seed: 3_000 + i });
      const lockWaits = await sampler.stop();
      rounds.push({ kind, eventsPerSecond: run.end_to_end_events_per_second, statements: await statementTimes(database.db, names), lockWaits });
      console.log(`round ${i + 1} (${kind}): ${run.end_to_end_events_per_second} events/s end to end`);
    }
    report(rounds, events, top);
  });
}

/**
 * The service's statements (the benchmark's own left out), by queryid, each named by the text
 * first recorded for it in the run: after a reset, a statement first run from an already
 * prepared plan is recorded with its constants unnormalised, one parsed anew with them
 * normalised, so the same statement's text differs between a cold round and a warm one.
 */
async function statementTimes(db: Parameters<typeof sampleLockWaits>[0], names: Map<string, string>): Promise<Map<string, StatementTimes>> {
  const rows: { queryid: string; query: string; calls: string; exec_ms: number; plan_ms: number }[] = await db.query(
    `SELECT queryid::text AS queryid, query, calls, total_exec_time AS exec_ms, total_plan_time AS plan_ms FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const byStatement = new Map<string, StatementTimes>();
  for (const row of rows) {
    if (backgroundKind(row.query) === 'bench') continue;
    if (!names.has(row.queryid)) names.set(row.queryid, text(row.query));
    const sum = byStatement.get(row.queryid) ?? { name: names.get(row.queryid)!, calls: 0, execMs: 0, planMs: 0 };
    sum.calls += Number(row.calls);
    sum.execMs += row.exec_ms;
    sum.planMs += row.plan_ms;
    byStatement.set(row.queryid, sum);
  }
  return byStatement;
}

function report(rounds: Round[], events: number, top: number): void {
  const perEvent = (ms: number) => round((ms * 1_000) / events, 1);
  const total = (r: Round, pick: (t: StatementTimes) => number) => [...r.statements.values()].reduce((sum, t) => sum + pick(t), 0);
  console.log("\nµs per event, by round (cold, warm, …): execution without the ledger's locks / planning / the ledger's lock statement (calls, mean wait)");
  for (const r of rounds) {
    const lock = [...r.statements.values()].filter((t) => LEDGER_LOCKS.test(t.name)).reduce((a, t) => ({ calls: a.calls + t.calls, ms: a.ms + t.execMs }), { calls: 0, ms: 0 });
    console.log(
      `  ${r.kind} ${String(r.eventsPerSecond).padStart(5)} events/s: ${perEvent(total(r, (t) => t.execMs) - lock.ms)} / ${perEvent(total(r, (t) => t.planMs))} / ` +
        `${perEvent(lock.ms)} (${lock.calls} calls, ${round(lock.ms / Math.max(1, lock.calls), 1)} ms each); lock waits: ${r.lockWaits.mean_waiting} backends waiting on average`,
    );
    for (const pair of r.lockWaits.pairs.slice(0, 3)) console.log(`      ${pair.share} %  ${pair.waiting.slice(0, 60)}  ← ${pair.blocked_by.slice(0, 80)}`);
  }
  const cold = rounds.filter((r) => r.kind === 'cold');
  const warm = rounds.filter((r) => r.kind === 'warm');
  const mean = (of: Round[], id: string, pick: (t: StatementTimes) => number) => of.reduce((sum, r) => sum + (r.statements.has(id) ? pick(r.statements.get(id)!) : 0), 0) / of.length;
  const nameOf = new Map(rounds.flatMap((r) => [...r.statements].map(([id, t]) => [id, t.name] as const)));
  const growth = [...nameOf]
    .map(([id, name]) => ({
      name,
      cold: perEvent(mean(cold, id, (t) => t.execMs + t.planMs)),
      warm: perEvent(mean(warm, id, (t) => t.execMs + t.planMs)),
      coldPlan: perEvent(mean(cold, id, (t) => t.planMs)),
      warmPlan: perEvent(mean(warm, id, (t) => t.planMs)),
      calls: round((mean(cold, id, (t) => t.calls) * 1_000) / events, 1),
    }))
    .sort((a, b) => b.cold - b.warm - (a.cold - a.warm));
  console.log(`\nstatements by growth from warm to cold, µs per event (execution + planning; planning alone), calls per 1,000 events cold:`);
  for (const g of growth.slice(0, top)) {
    console.log(`  ${String(g.warm).padStart(6)} → ${String(g.cold).padStart(6)}  (${g.warmPlan} → ${g.coldPlan})  ${String(g.calls).padStart(5)}  ${g.name}`);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
