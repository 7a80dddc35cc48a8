import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Admin, ConfigResourceTypes, Kafka, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { CLUSTER_SCENARIOS } from '../../bench/faults';
import { clusterAnswers, ensureKafkaCluster, kafkaClusterBrokers, kafkaNode, sleep } from '../../bench/hris-kit';
import { kafkaNodeAsync } from '../../bench/kafka-acks';
import { missingIds, readTopics } from '../../bench/topic-audit';
import { OutboxWriter } from '../../src/infrastructure/messaging/outbox/outbox-writer';
import { TOPICS } from '../../src/infrastructure/messaging/topics';
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
      await dropTopicsAndClose(admin, service);
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
   * The outbox relay publishing through a broker's crash: rows committed steadily while the
   * broker leading most of `benefits.events`'s partitions is SIGKILLed and, 12 s later, started
   * again. Every row the relay marked published must then be in the topic, read back from the
   * brokers: kafkajs can resolve a send with partitions no broker wrote (acknowledged-send.ts).
   */
  describe('outbox relay through a broker kill', () => {
    let service: TestService | undefined;
    let kafka: Kafka;
    let admin: Admin | undefined;
    let victim: number | undefined;

    beforeAll(async () => {
      service = await startTestService({ kafka: true, env: { KAFKA_BROKERS: kafkaClusterBrokers(), KAFKA_CLIENT_ID: `relay-kill-e2e-${randomBytes(3).toString('hex')}` } });
      kafka = new Kafka({ clientId: `relay-kill-e2e-reader-${randomBytes(3).toString('hex')}`, brokers: kafkaClusterBrokers().split(','), logLevel: logLevel.NOTHING });
      admin = kafka.admin();
      await admin.connect();
    }, 180_000);

    afterAll(async () => {
      if (victim !== undefined) await kafkaNodeAsync('start-node', victim).catch((error) => console.error(error));
      await dropTopicsAndClose(admin, service);
    }, 180_000);

    it('every row the relay marked published is in the topic', async () => {
      const dataSource = service!.app.get(DataSource);
      const writer = service!.app.get(OutboxWriter);
      const topic = `${service!.topicPrefix}${TOPICS.benefitsEvents}`;
      const pending = async () => Number((await dataSource.query(`SELECT count(*)::int AS n FROM outbox_pending`))[0].n);
      let written = 0;
      /** Commits `count` outbox rows in one transaction, keyed over 40 connections as the service's events are. */
      const commit = (count: number) =>
        dataSource.transaction((manager) =>
          writer.append(
            manager,
            Array.from({ length: count }, () => {
              const n = written++;
              return { topic: TOPICS.benefitsEvents, key: `connection-${n % 40}`, type: 'RelayKillProbe', payload: { n } };
            }),
          ),
        );

      const [{ partitions }] = (await admin!.fetchTopicMetadata({ topics: [topic] })).topics;
      const byLeader = new Map<number, number>();
      for (const p of partitions) byLeader.set(p.leader, (byLeader.get(p.leader) ?? 0) + 1);
      const killed = [...byLeader].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
      victim = killed;

      // Rows keep coming (50 every 50 ms) from 2 s before the kill until the broker serves again.
      let faultOver = false;
      const fault = (async () => {
        await sleep(2_000);
        await kafkaNodeAsync('stop-node', killed, 'KILL');
        await sleep(12_000);
        await kafkaNodeAsync('start-node', killed);
        victim = undefined;
      })().finally(() => (faultOver = true));
      while (!faultOver) {
        await commit(50);
        await sleep(50);
      }
      await fault;
      await expectEventually(async () => expect(await pending()).toBe(0), { timeoutMs: 120_000, intervalMs: 250 });

      const published: { id: string }[] = await dataSource.query(
        `SELECT m.message_id::text AS id FROM outbox_messages m
         WHERE m.topic = $1 AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.lane = m.lane AND p.id = m.batch_id)`,
        [TOPICS.benefitsEvents],
      );
      const logged = await readTopics(kafka, [topic]);
      const missing = missingIds(published.map((r) => r.id), logged);
      console.log(`relay through a kill of broker ${killed}: ${published.length} rows marked published, ${logged.length} messages in ${topic}, ${missing.length} published rows missing from it`);
      expect(published.length).toBe(written);
      expect(missing).toEqual([]);
    }, 300_000);
  });

  /**
   * The cluster fault scenarios (bench/faults.ts, `npm run faults -- --cluster`): a broker
   * SIGKILLed, a rolling restart, a scale-out from one instance to three and back, and a broker
   * paused past the session timeout, each mid-stream, each with 0 lost, 0 doubled and every
   * poison event dead-lettered; those that strike a broker also read their topics back and fail
   * on any acknowledged message missing from them (bench/faults.ts, auditTopics).
   */
  describe('HRIS events fault suite (short)', () => {
    it.each(CLUSTER_SCENARIOS.map((s) => [s.name, s] as const))('%s: 0 lost, 0 doubled, every poison dead-lettered', (_name, scenario) => expectScenarioPasses(scenario), 480_000);
  });
});

/** Deletes the topics a test service made on the shared cluster, then closes the admin and the service. */
async function dropTopicsAndClose(admin: Admin | undefined, service: { topicPrefix: string; close(): Promise<void> } | undefined): Promise<void> {
  if (admin && service) {
    const ours = (await admin.listTopics().catch(() => [])).filter((t) => t.startsWith(service.topicPrefix));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours }).catch(() => undefined);
  }
  await admin?.disconnect().catch(() => undefined);
  await service?.close();
}
