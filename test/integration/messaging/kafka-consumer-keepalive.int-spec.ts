import { describeWithKafka } from '../../setup/test-env';
import { expectEventually } from '../../utils/expect-eventually';
import { kafkaConsumerTestbed } from './kafka-consumer-testbed';
import { effects } from './messaging-test-kit';

const TOPIC = 'keepalive.test';
const CONSUMER = 'keepalive-it';
const SESSION_TIMEOUT_MS = 6_000;

/**
 * kafkajs sends a heartbeat only when it is asked to, between batches. A transaction that runs
 * longer than the session timeout (a loaded host, a lock held by other work) must not get the
 * only member of the group evicted: its resolved offsets would then never be committed, and
 * everything it applied since the last commit would come back as duplicates.
 */
describeWithKafka('Kafka consumer kept in its group while a batch is applied (real broker)', () => {
  const bed = kafkaConsumerTestbed(TOPIC, CONSUMER, SESSION_TIMEOUT_MS);

  const consumed = async (outcome: string) =>
    (await bed.metrics.messagesConsumed.get()).values.find((v) => v.labels.consumer === CONSUMER && v.labels.outcome === outcome)?.value ?? 0;

  it('applies messages that each take longer than the session timeout once, with no rejoin and no redelivery', async () => {
    const { runner, handler } = bed.runnerFor();
    // Each message's transaction outlasts the session timeout by half.
    handler.workMs = SESSION_TIMEOUT_MS * 1.5;
    await runner.start();
    const ids = [1, 2].map((seq) => `m-${bed.suffix}-${seq}`);
    await bed.producer.send({
      topic: bed.topics.physical(TOPIC),
      messages: ids.map((id, seq) => ({ key: 'k', value: JSON.stringify({ key: 'k', seq }), headers: { 'message-id': id } })),
    });

    await expectEventually(async () => expect((await effects(bed.dataSource, CONSUMER)).map((e) => e.message_id)).toEqual(ids), { timeoutMs: 90_000, intervalMs: 500 });
    // A redelivery would show as a duplicate at once; give one more session timeout for it.
    await new Promise((done) => setTimeout(done, SESSION_TIMEOUT_MS));
    expect({ applied: await consumed('applied'), duplicate: await consumed('duplicate'), seen: handler.seen.length, crashes: runner.crashes, crash: runner.lastCrash }).toEqual({
      applied: 2,
      duplicate: 0,
      seen: 2,
      crashes: 0,
      crash: undefined,
    });
  }, 180_000);
});
