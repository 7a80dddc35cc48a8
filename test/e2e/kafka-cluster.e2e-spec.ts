import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Admin, ConfigResourceTypes, Kafka, logLevel, Producer } from 'kafkajs';
import { CLUSTER_SCENARIOS } from '../../bench/faults';
import { clusterAnswers, ensureKafkaCluster, kafkaClusterBrokers, kafkaNode } from '../../bench/hris-kit';
import { describeWithKafka } from '../setup/test-env';
import { expectEventually } from '../utils/expect-eventually';
import { expectScenarioPasses } from '../utils/fault-scenario';
import { startTestService, TestResponse, TestService } from '../utils/test-app';

/**
 * Everything that runs on the local three-broker cluster (`scripts/kafka/run up --brokers 3`,
 * started here when it is not running and stopped again after), in one file: these tests kill,
 * pause and restart its brokers, so no two of them may run at once, and the suites of a test run
 * run in parallel, file by file.
 */
describeWithKafka('on the three-broker Kafka cluster', () => {
  let startedHere = false;

  beforeAll(async () => {
    startedHere = !(await clusterAnswers());
    await ensureKafkaCluster();
  }, 180_000);

  afterAll(() => {
    if (startedHere) spawnSync('bash', [resolve(__dirname, '../../scripts/kafka/run'), 'down', '--brokers', '3'], { stdio: 'inherit' });
  }, 120_000);

  /**
   * `/health/ready` with the service's topics at replication factor 3 and min.insync.replicas 2:
   * up with one broker stopped, when acks=all writes still go through; down naming the
   * partitions with a second one killed, when they fail; up again once both are back. Killed, not stopped cleanly: without the controller quorum the
   * metadata still lists the dead broker as leader and in sync, and readiness must not believe it.
   */
  describe('readiness', () => {
    let service: TestService | undefined;
    let kafka: Kafka;
    let admin: Admin | undefined;
    let producer: Producer | undefined;
    let topic: string;

    beforeAll(async () => {
      service = await startTestService({ kafka: true, env: { KAFKA_BROKERS: kafkaClusterBrokers(), KAFKA_CLIENT_ID: `readiness-e2e-${randomBytes(3).toString('hex')}` } });
      topic = `${service.topicPrefix}benefits.events`;
      kafka = new Kafka({
        clientId: `readiness-e2e-writer-${randomBytes(3).toString('hex')}`,
        brokers: kafkaClusterBrokers().split(','),
        logLevel: logLevel.NOTHING,
        requestTimeout: 5_000,
        retry: { retries: 2, initialRetryTime: 300 },
      });
      admin = kafka.admin();
      await admin.connect();
      producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
    }, 180_000);

    afterAll(async () => {
      // Every node running again whatever failed, before the service and the clients let go.
      for (const node of [2, 3]) {
        try {
          kafkaNode('start-node', node);
        } catch (error) {
          console.error(error);
        }
      }
      await producer?.disconnect().catch(() => undefined);
      if (admin && service) {
        const ours = (await admin.listTopics().catch(() => [])).filter((t) => t.startsWith(service!.topicPrefix));
        if (ours.length > 0) await admin.deleteTopics({ topics: ours }).catch(() => undefined);
      }
      await admin?.disconnect().catch(() => undefined);
      await service?.close();
    }, 180_000);

    const ready = () => service!.request('/health/ready');

    /** One acks=all message to each partition of the service's own topic (no consumer reads it), so none is spared. */
    async function writeEveryPartition(): Promise<void> {
      const [{ partitions }] = (await admin!.fetchTopicMetadata({ topics: [topic] })).topics;
      const messages = partitions.map((p) => ({ partition: p.partitionId, key: 'readiness-e2e', value: 'acks=all write' }));
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          producer!.send({ topic, acks: -1, timeout: 3_000, messages }),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the write did not finish within 20 s')), 20_000))),
        ]);
      } finally {
        clearTimeout(timer);
      }
    }

    const expectUp = (res: TestResponse) => {
      expect({ status: res.status, kafka: res.body?.details?.kafka }).toEqual({ status: 200, kafka: { status: 'up' } });
    };

    it('stays up with one broker down, goes down naming the partitions with two, and comes back with them', async () => {
      const topics = await admin!.fetchTopicMetadata({ topics: [topic] });
      expect(topics.topics[0].partitions.every((p) => p.replicas.length === 3)).toBe(true);
      const configs = await admin!.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }] });
      expect(configs.resources[0].configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue).toBe('2');
      expectUp(await ready());
      await writeEveryPartition();

      kafkaNode('stop-node', 3, 'TERM');
      await expectEventually(async () => expectUp(await ready()), { timeoutMs: 30_000, intervalMs: 500 });
      await writeEveryPartition();
      expectUp(await ready());

      kafkaNode('stop-node', 2, 'KILL');
      const seen: TestResponse[] = [];
      const down = await expectEventually(
        async () => {
          const res = await ready();
          seen.push(res);
          expect(res.status).toBe(503);
          expect(res.body.error.kafka.message).toMatch(/^the cluster cannot take writes: .*partition \d+/);
          return res;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      // Never up meanwhile: a check that could not reach Kafka says so and is down too.
      expect(seen.map((r) => r.status).filter((s) => s !== 503)).toEqual([]);
      expect(down.body.error.kafka.message).toContain(`${service!.topicPrefix}`);
      expect(down.body.error.kafka.partitions).toBeGreaterThanOrEqual(6);
      await expect(writeEveryPartition()).rejects.toThrow();

      kafkaNode('start-node', 2);
      kafkaNode('start-node', 3);
      await expectEventually(async () => expectUp(await ready()), { timeoutMs: 60_000, intervalMs: 500 });
      await writeEveryPartition();
    }, 300_000);
  });

  /**
   * The cluster fault scenarios (bench/faults.ts, `npm run faults -- --cluster`): a broker
   * SIGKILLed, a rolling restart, a scale-out from one instance to three and back, and a broker
   * paused past the session timeout, each mid-stream, each with 0 lost, 0 doubled and every
   * poison event dead-lettered.
   */
  describe('HRIS events fault suite (short)', () => {
    it.each(CLUSTER_SCENARIOS.map((s) => [s.name, s] as const))('%s: 0 lost, 0 doubled, every poison dead-lettered', (_name, scenario) => expectScenarioPasses(scenario), 480_000);
  });
});
