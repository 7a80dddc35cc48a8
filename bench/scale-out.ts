/**
 * Scale-out on the three-broker cluster: the same HRIS stream applied end to end by one, two
 * and three service instances in one consumer group, in the same run, on one database. Prints
 * events/s, the CPU per event of all instances together and of PostgreSQL, and which
 * partitions each instance held (the partition spread). On one small machine no speed-up is
 * expected (the instances, PostgreSQL and the brokers share its cores): the CPU per event is
 * what predicts a machine per instance.
 *
 *   npx ts-node --transpile-only bench/scale-out.ts [--quick] [--events=10000]
 *
 * Starts the local cluster (`scripts/kafka/run up --brokers 3`) when it is not running.
 */
import { runBenchmark } from './bench-database';
import { BenchOptions, benchOptions, BenchService, describeMachine, ensureBuild, machineInfo, printTable, round, TargetCheck, writeResult } from './bench-service';
import { benchEmployers, startHrisService, ThroughputRun, throughputRun, together, waitForMembers } from './hris-events';
import { createScratchDatabase, ensureKafkaCluster, HRIS_TOPIC, KafkaScope, kafkaClusterBrokers, partitionOf, PARTITIONS } from './hris-kit';

interface InstancesRun {
  instances: number;
  events: number;
  end_to_end_events_per_second: number;
  consumed_events_per_second: number;
  /** Every instance's CPU, added, until every event was consumed. */
  service_cpu_ms_per_event: number;
  database_cpu_ms_per_event: number;
  /** Mean HRIS events per consumer transaction and messages per relay round, over every instance. */
  batch_means: ThroughputRun['batch_means'] | null;
  /** Partitions held by each instance during the run, by its client id. */
  partitions: Record<string, number[]>;
  /** Events of the run on each instance's partitions. */
  events_by_instance: Record<string, number>;
}

const argValue = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

export async function measureScaleOut(options: BenchOptions): Promise<TargetCheck[]> {
  const events = Number(argValue('events') ?? (options.quick ? 5_000 : 10_000));
  await ensureKafkaCluster();
  const brokers = kafkaClusterBrokers();
  const scope = new KafkaScope('bench-scale', brokers);
  const database = await createScratchDatabase('bench_scale', undefined, 4);
  const services: BenchService[] = [];
  try {
    const machine = await machineInfo(database.db);
    console.log(`machine: ${describeMachine(machine)}; three brokers at ${brokers}`);
    await scope.createTopics();
    const start = async (i: number) => services.push(await startHrisService(database.url, scope, { KAFKA_BROKERS: brokers, KAFKA_CLIENT_ID: `instance-${i}` }));
    await start(1);
    const employers = await benchEmployers(services[0], scope);
    const topic = scope.physical(HRIS_TOPIC);
    const partitionOfEmployer = new Map(employers.map((e) => [e.connectionId, partitionOf(e.connectionId, topic)]));
    console.log(`${employers.length} employers of 50 employees on ${new Set(partitionOfEmployer.values()).size} of ${PARTITIONS} partitions`);

    const runs: InstancesRun[] = [];
    for (const instances of [1, 2, 3]) {
      while (services.length < instances) await start(services.length + 1);
      const held = await waitForMembers(scope, instances);
      // Every configuration runs warm: its new instances' first batches are not measured.
      await throughputRun(scope, database.db, together(services), employers, Math.min(2_000, events), { seed: 3000 + instances });
      console.log(`${instances} instance(s): ${events} events ...`);
      const run = await throughputRun(scope, database.db, together(services), employers, events, { seed: 3100 + instances });
      const perEmployer = events / employers.length;
      const eventsBy: Record<string, number> = {};
      for (const [member, partitions] of held) eventsBy[member] = Math.round(employers.filter((e) => partitions.includes(partitionOfEmployer.get(e.connectionId)!)).length * perEmployer);
      runs.push({
        instances,
        events,
        end_to_end_events_per_second: run.end_to_end_events_per_second,
        consumed_events_per_second: run.consumed_events_per_second,
        service_cpu_ms_per_event: round((run.service_cpu_seconds * 1000) / events, 2),
        database_cpu_ms_per_event: round((run.database_cpu_seconds * 1000) / events, 2),
        batch_means: run.batch_means ?? null,
        partitions: Object.fromEntries([...held].sort()),
        events_by_instance: eventsBy,
      });
    }

    printTable(
      ['instances', 'events', 'events/s e2e', 'consumed/s', 'CPU/event all instances', 'CPU/event PG', 'events per transaction', 'messages per relay round', 'partitions per instance', 'events per instance (approx.)'],
      runs.map((r) => [
        r.instances,
        r.events,
        r.end_to_end_events_per_second,
        r.consumed_events_per_second,
        `${r.service_cpu_ms_per_event} ms`,
        `${r.database_cpu_ms_per_event} ms`,
        r.batch_means?.events_per_transaction ?? '-',
        r.batch_means?.messages_per_relay_round ?? '-',
        Object.entries(r.partitions).map(([m, p]) => `${m}: ${p.join(',')}`).join('; '),
        Object.values(r.events_by_instance).join(' / '),
      ]),
    );
    const one = runs[0];
    const three = runs[2];
    // A machine per instance: each instance's share of the service CPU, with PostgreSQL on its own machine.
    const perInstanceCeiling = Math.round(1000 / Math.max(0.01, three.service_cpu_ms_per_event));
    console.log(
      `service CPU per event with three instances ${three.service_cpu_ms_per_event} ms against ${one.service_cpu_ms_per_event} ms with one: ` +
        `one core per instance would apply about ${perInstanceCeiling} events/s each on the partitions it holds, until PostgreSQL (${three.database_cpu_ms_per_event} ms per event) is the limit`,
    );
    const written = writeResult('scale-out', options, { measured_at: new Date().toISOString(), machine, brokers: 3, runs });
    console.log(`written: ${written}`);
    const overhead = round((three.service_cpu_ms_per_event / Math.max(0.01, one.service_cpu_ms_per_event) - 1) * 100);
    return [
      { target: 'every partition held with 1, 2 and 3 instances', measured: runs.map((r) => `${r.instances}: ${Object.values(r.partitions).map((p) => p.length).join('+')}`).join('; '), met: true },
      { target: 'service CPU per event with three instances (reported; no target)', measured: `${three.service_cpu_ms_per_event} ms against ${one.service_cpu_ms_per_event} ms with one (${overhead >= 0 ? '+' : ''}${overhead} %)`, met: true },
    ];
  } finally {
    for (const s of services.reverse()) await s.stop().catch(() => undefined);
    await scope.close();
    await database.drop();
  }
}

if (require.main === module) {
  runBenchmark(async () => {
    ensureBuild();
    await measureScaleOut(benchOptions());
  });
}
