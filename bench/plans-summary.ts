/**
 * Summarizes the plans `auto_explain` wrote to a PostgreSQL server log: by statement (its first
 * 110 characters), the plans logged, their time, and the rows each kind of scan read per plan
 * (returned, and removed by its filter), the most first. A plan that reads far more than it
 * returns is the one to look at. How to log the plans of a benchmark run: bench/README.md,
 * "Method".
 *
 *   npx ts-node --transpile-only bench/plans-summary.ts <server log> [first line] [statements to show]
 */
import { readFileSync } from 'node:fs';

interface Summary {
  plans: number;
  ms: number;
  /** Rows read by scan (`<kind> <index> <table>`): in all, and the most by one plan. */
  read: Map<string, { total: number; most: number }>;
}

const [file, firstLine = '1', shown = '25'] = process.argv.slice(2);
if (!file) {
  console.error('usage: plans-summary.ts <server log> [first line] [statements to show]');
  process.exit(2);
}
const lines = readFileSync(file, 'utf8').split('\n').slice(Number(firstLine) - 1);
const byStatement = new Map<string, Summary>();
let plan: { ms: number; text: string | undefined; scans: [string, number][] } | undefined;
const close = () => {
  if (!plan) return;
  const key = (plan.text ?? '?').replace(/\s+/g, ' ').slice(0, 110);
  const summary = byStatement.get(key) ?? { plans: 0, ms: 0, read: new Map() };
  byStatement.set(key, summary);
  summary.plans++;
  summary.ms += plan.ms;
  const ofPlan = new Map<string, number>();
  for (const [scan, rows] of plan.scans) ofPlan.set(scan, (ofPlan.get(scan) ?? 0) + rows);
  for (const [scan, rows] of ofPlan) {
    const read = summary.read.get(scan) ?? { total: 0, most: 0 };
    summary.read.set(scan, { total: read.total + rows, most: Math.max(read.most, rows) });
  }
  plan = undefined;
};
for (let i = 0; i < lines.length; i++) {
  const line = lines[i];
  const logged = /LOG: {2}duration: ([\d.]+) ms {2}plan:/.exec(line);
  if (logged) {
    close();
    plan = { ms: Number(logged[1]), text: undefined, scans: [] };
    continue;
  }
  if (!plan) continue;
  if (/^\d{4}-\d\d-\d\d /.test(line)) {
    close();
    continue;
  }
  if (line.startsWith('\tQuery Text:')) {
    plan.text = line.slice('\tQuery Text:'.length).trim();
    continue;
  }
  const scan = /(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan)(?: Backward)?(?: using (\S+))? on (\S+).*actual rows=(\d+) loops=(\d+)/.exec(line);
  if (!scan) continue;
  const removed = /Rows Removed by Filter: (\d+)/.exec(lines[i + 1] ?? '') ?? /Rows Removed by Filter: (\d+)/.exec(lines[i + 2] ?? '');
  const loops = Number(scan[5]);
  plan.scans.push([`${scan[1]} ${scan[2] ?? ''} ${scan[3]}`.replace(/\s+/g, ' '), Number(scan[4]) * loops + (removed ? Number(removed[1]) * loops : 0)]);
}
close();

const statements = [...byStatement].sort((a, b) => b[1].ms - a[1].ms).slice(0, Number(shown));
console.log(`${[...byStatement.values()].reduce((n, s) => n + s.plans, 0)} plans of ${byStatement.size} statements`);
for (const [text, summary] of statements) {
  console.log(`${Math.round(summary.ms).toString().padStart(9)} ms ${String(summary.plans).padStart(5)} plans  ${text}`);
  const reads = [...summary.read].sort((a, b) => b[1].total - a[1].total).slice(0, 3);
  for (const [scan, read] of reads) {
    console.log(`${''.padStart(17)}rows read per plan ${Math.round(read.total / summary.plans).toString().padStart(8)}, at most ${String(read.most).padStart(8)}  ${scan}`);
  }
}
