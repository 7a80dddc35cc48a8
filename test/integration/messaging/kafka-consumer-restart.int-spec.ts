import { describeWithKafka } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { kafkaConsumerTestbed } from './kafka-consumer-testbed';
import { effects } from './messaging-test-kit';

const TOPIC = 'restart.test';
const CONSUMER = 'restart-it';

/**
 * A consumer that crashes for real: its topic is deleted under it, so kafkajs gives up on it,
 * and a restart fails for as long as the topic is missing (the case kafkajs's own single
 * restart never recovers from). Once the topic is back, a new consumer joins and applies what
 * is produced.
 */
describeWithKafka('Kafka consumer restarted after a crash (real broker)', () => {
  const bed = kafkaConsumerTestbed(TOPIC, CONSUMER, 6_000);

  const produce = (seq: number) =>
    bed.producer.send({ topic: bed.topics.physical(TOPIC), messages: [{ key: 'k', value: JSON.stringify({ key: 'k', seq }), headers: { 'message-id': `m-${bed.suffix}-${seq}` } }] });
  const applied = async () => (await effects(bed.dataSource, CONSUMER)).map((e) => e.message_id).sort();

  it('replaces a crashed consumer, trying again until it can join, and goes on consuming', async () => {
    const { runner } = bed.runnerFor();
    await runner.start();
    await produce(1);
    await expectEventually(async () => expect(await applied()).toEqual([`m-${bed.suffix}-1`]), { timeoutMs: 30_000 });

    const admin = await bed.client.admin();
    await admin.deleteTopics({ topics: [bed.topics.physical(TOPIC)] });
    // While the topic is gone the consumer crashes, and every restart fails at its subscribe.
    await expectEventually(async () => expect(runner.crashes).toBeGreaterThan(0), { timeoutMs: 90_000, intervalMs: 500 });
    await new Promise((done) => setTimeout(done, 3_000));
    expect(runner.restarts).toBe(0);

    await bed.client.ensureTopics([TOPIC]);
    await expectEventually(async () => expect(runner.restarts).toBeGreaterThan(0), { timeoutMs: 60_000, intervalMs: 500 });
    await produce(2);
    await expectEventually(async () => expect(await applied()).toEqual([`m-${bed.suffix}-1`, `m-${bed.suffix}-2`]), { timeoutMs: 60_000 });
    expect((await bed.metrics.consumerRestarts.get()).values[0].value).toBe(runner.restarts);
  }, 240_000);
});
