/**
 * `npm run bench`: the benchmarks below, one after another, each on a fresh database with the
 * service in a child process; then every target, met or missed. The figures are printed and
 * written under bench/results/; a missed target does not fail the run (figures, not
 * assertions), a benchmark that cannot run does.
 *
 *   npm run bench                       all of them (over an hour on 2 vCPUs: 100,000 HRIS events)
 *   npm run bench -- --quick            short runs and small sizes; results in *.tmp.json
 *   npm run bench -- enrollment memory  only those, in this order
 *
 * A new benchmark is one more entry: a name, what it measures, and a function that runs it
 * (printing its own table and writing its own result) and returns its target checks.
 */
import { measureBackgroundHeap } from './background-heap';
import { measureGustoEnroll } from './gusto-enroll';
import { runBenchmark } from './bench-database';
import { BenchOptions, benchOptions, ensureBuild, printTargets, TargetCheck } from './bench-service';
import { measureEnrollment } from './enrollment';
import { measureHrisEvents } from './hris-events';
import { measureHttpReads } from './http-reads';
import { measureMemory } from './memory';
import { measureReconciliation } from './reconciliation';

export interface BenchmarkEntry {
  name: string;
  measures: string;
  run(options: BenchOptions): Promise<TargetCheck[]>;
}

export const BENCHMARKS: BenchmarkEntry[] = [
  { name: 'http-reads', measures: 'directory, company and pay-statement reads vs a bare node:http server', run: measureHttpReads },
  { name: 'enrollment', measures: 'enrolling 1,000 and 10,000 individuals in one request', run: measureEnrollment },
  { name: 'memory', measures: 'the service RSS under a steady read load', run: measureMemory },
  { name: 'background-heap', measures: 'the heap while twenty 10,000-person enrollments are worked in the background', run: measureBackgroundHeap },
  { name: 'gusto-enroll', measures: 'enrolling 1,000 employees through the fake Gusto under its rate limit vs the minimum the limit allows', run: measureGustoEnroll },
  {
    name: 'reconciliation',
    measures: 'reconciling one pay run of a 10,000-employee sandbox employer (2,000 with --quick) vs the data sync that brings it',
    run: measureReconciliation,
  },
  {
    name: 'hris-events',
    measures: 'HRIS events from Kafka to completed jobs vs a raw kafkajs consumer (10,000 with --quick, else 100,000 events)',
    run: measureHrisEvents,
  },
];

async function main(): Promise<void> {
  const options = benchOptions();
  const names = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const unknown = names.filter((name) => !BENCHMARKS.some((b) => b.name === name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const selected = names.length === 0 ? BENCHMARKS : names.map((name) => BENCHMARKS.find((b) => b.name === name)!);

  ensureBuild();
  const outcomes: { name: string; seconds: number; targets?: TargetCheck[]; error?: unknown }[] = [];
  for (const benchmark of selected) {
    console.log(`\n=== ${benchmark.name}: ${benchmark.measures}${options.quick ? ' (quick)' : ''}`);
    const started = Date.now();
    try {
      const targets = await benchmark.run(options);
      outcomes.push({ name: benchmark.name, seconds: (Date.now() - started) / 1000, targets });
    } catch (error) {
      console.error(error);
      outcomes.push({ name: benchmark.name, seconds: (Date.now() - started) / 1000, error });
    }
  }

  console.log('\n=== summary');
  for (const outcome of outcomes) {
    console.log(`${outcome.name} (${outcome.seconds.toFixed(0)} s)${outcome.error ? ': FAILED to run' : ''}`);
    if (outcome.targets) printTargets(outcome.targets);
  }
  if (outcomes.some((o) => o.error)) process.exitCode = 1;
}

if (require.main === module) runBenchmark(main);
