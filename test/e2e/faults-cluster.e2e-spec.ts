import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { CLUSTER_SCENARIOS } from '../../bench/faults';
import { clusterAnswers, ensureKafkaCluster } from '../../bench/hris-kit';
import { describeWithKafka } from '../setup/test-env';
import { expectScenarioPasses } from '../utils/fault-scenario';

/**
 * The cluster fault scenarios (bench/faults.ts, `npm run faults -- --cluster`) as part of the
 * test run, on the local three-broker cluster (`scripts/kafka/run up --brokers 3`, started here
 * when it is not running and stopped again after): a broker SIGKILLed, a rolling restart, a
 * scale-out from one instance to three and back, and a broker paused past the session timeout,
 * each mid-stream, each with 0 lost, 0 doubled and every poison event dead-lettered.
 */
describeWithKafka('HRIS events fault suite on a three-broker cluster (short)', () => {
  let startedHere = false;

  beforeAll(async () => {
    startedHere = !(await clusterAnswers());
    await ensureKafkaCluster();
  }, 180_000);

  afterAll(() => {
    if (startedHere) spawnSync('bash', [resolve(__dirname, '../../scripts/kafka/run'), 'down', '--brokers', '3'], { stdio: 'inherit' });
  }, 120_000);

  it.each(CLUSTER_SCENARIOS.map((s) => [s.name, s] as const))('%s: 0 lost, 0 doubled, every poison dead-lettered', (_name, scenario) => expectScenarioPasses(scenario), 480_000);
});
