import { describeWithKafka } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { kafkaConsumerTestbed } from './kafka-consumer-testbed';
import { effects } from './messaging-test-kit';

const TOPIC = 'fetch-wait.test';
const CONSUMER = 'fetch-wait-it';
const FETCH_WAIT_MS = 500;

/**
 * The consumer's fetch waits for company (KAFKA_FETCH_MIN_BYTES, KAFKA_FETCH_MAX_WAIT_MS): a
 * stream that trickles in is applied in a few transactions of many messages, and a message that
 * comes alone is still applied once the wait runs out.
 */
describeWithKafka('Kafka consumer fetch waiting for company (real broker)', () => {
  const bed = kafkaConsumerTestbed(TOPIC, CONSUMER, 6_000);

  const send = (seq: number) =>
    bed.producer.send({ topic: bed.topics.physical(TOPIC), messages: [{ key: 'k', value: JSON.stringify({ key: 'k', seq }), headers: { 'message-id': `m-${bed.suffix}-${seq}` } }] });
  /** The transactions that wrote this consumer's effects. */
  const transactions = async (): Promise<number> => Number((await bed.dataSource.query(`SELECT count(DISTINCT tx) AS n FROM test_effects WHERE consumer = $1`, [CONSUMER]))[0].n);

  it('applies a trickle in a few transactions, and a lone message once the wait is over', async () => {
    // A run's transaction is not cut short by time here: what is counted is the fetches.
    const { runner } = bed.runnerFor({ fetchMinBytes: 1_048_576, fetchMaxWaitMs: FETCH_WAIT_MS, batchMaxMs: 60_000 });
    await runner.start();

    // Alone, far from the minimum: applied after the wait, not held for more.
    await send(0);
    await expectEventually(async () => expect((await effects(bed.dataSource, CONSUMER)).map((e) => e.seq)).toEqual([0]), { timeoutMs: 30_000, intervalMs: 100 });

    // 40 messages, one every 15 ms (600 ms in all): with a fetch answered as soon as anything is
    // there, each would be a transaction of one or two; held up to 500 ms, they come in a few
    // fetches (kafkajs applies each fetch's messages of a partition in one run).
    const trickle = Array.from({ length: 40 }, (_, i) => i + 1);
    const started = Date.now();
    for (const seq of trickle) {
      await send(seq);
      await new Promise((done) => setTimeout(done, 15));
    }
    const sendingMs = Date.now() - started;
    await expectEventually(async () => expect((await effects(bed.dataSource, CONSUMER)).map((e) => e.seq)).toEqual([0, ...trickle]), { timeoutMs: 30_000, intervalMs: 100 });
    // The lone message's transaction, then one per fetch: those the sending spanned, and the one
    // in flight when it ended (about four for 600–1,000 ms of sending, against dozens unheld).
    expect(await transactions()).toBeLessThanOrEqual(1 + Math.ceil(sendingMs / FETCH_WAIT_MS) + 1);
    expect(runner.crashes).toBe(0);
  }, 90_000);
});
