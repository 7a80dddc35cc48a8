import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from '../../../src/config/app-config';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InboundMessage } from '../../../src/infrastructure/messaging/message';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, effects, TestBody } from './messaging-test-kit';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';

const TOPIC = 'inbox.batch.test';

const inbound = (body: TestBody | string, messageId: string = randomUUID(), offset?: number): InboundMessage => ({
  topic: TOPIC,
  key: typeof body === 'string' ? 'raw' : body.key,
  value: typeof body === 'string' ? body : JSON.stringify(body),
  headers: { 'message-id': messageId },
  ...(offset !== undefined && { partition: 0, offset: String(offset) }),
});

/**
 * A run of messages applied in one transaction (the Kafka consumer's batches): every message
 * still commits with its own inbox row; duplicates are skipped, poison rolls back only itself
 * and is dead-lettered in the same transaction, and a transient failure leaves nothing of the
 * batch behind.
 */
describeWithPostgres('inbox batches (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let processor: MessageProcessor;
  let metrics: Metrics;
  let handler: EffectHandler;
  let consumerSeq = 0;

  const inboxIds = async (): Promise<string[]> =>
    (await dataSource.query(`SELECT message_id FROM inbox_messages WHERE consumer = $1 ORDER BY message_id`, [handler.consumer])).map(
      (r: { message_id: string }) => r.message_id,
    );
  const deadLetters = (): Promise<{ message_id: string; reason: string; offset: string | null }[]> =>
    dataSource.query(`SELECT message_id, reason, "offset" FROM dead_letters WHERE consumer = $1 ORDER BY created_at`, [handler.consumer]);
  const consumed = async (outcome: string): Promise<number> => {
    const metric = await metrics.messagesConsumed.get();
    return metric.values.find((v) => v.labels.consumer === handler.consumer && v.labels.outcome === outcome)?.value ?? 0;
  };

  /** `messages_applied_per_transaction` of the handler: transactions and their messages so far. */
  const perTransaction = async (): Promise<{ count: number; sum: number }> => {
    const values = (await metrics.messagesPerTransaction.get()).values.filter((v) => v.labels.consumer === handler.consumer);
    const of = (name: string) => values.find((v) => v.metricName === `messages_applied_per_transaction_${name}`)?.value ?? 0;
    return { count: of('count'), sum: of('sum') };
  };

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(4));
    await createEffectsTable(dataSource);
  });

  beforeEach(() => {
    handler = new EffectHandler(TOPIC, `batch-consumer-${++consumerSeq}`);
    metrics = new Metrics();
    processor = new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), metrics);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('applies a run in order, skipping a message already applied and a copy inside the run', async () => {
    const first = inbound({ key: 'k', seq: 1 });
    expect(await processor.process(handler, first)).toBe('applied');
    const second = inbound({ key: 'k', seq: 2 });
    const third = inbound({ key: 'k', seq: 3 });

    const transactionsBefore = await perTransaction();
    const outcomes = await processor.processBatch(handler, [first, second, third, { ...second, headers: { ...second.headers } }]);

    expect(outcomes).toEqual(['duplicate', 'applied', 'applied', 'duplicate']);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await inboxIds()).toEqual([first, second, third].map((m) => m.headers['message-id']).sort());
    expect({ applied: await consumed('applied'), duplicate: await consumed('duplicate') }).toEqual({ applied: 3, duplicate: 2 });
    // One transaction of four messages (the single message before it is not a batch).
    const transactionsAfter = await perTransaction();
    expect({ count: transactionsAfter.count - transactionsBefore.count, sum: transactionsAfter.sum - transactionsBefore.sum }).toEqual({ count: 1, sum: 4 });
  });

  it('rolls back only a poison message: the rest commit, the poison is dead-lettered with its inbox row in the same commit', async () => {
    const before = inbound({ key: 'emp', seq: 1 }, randomUUID(), 10);
    const poison = inbound({ key: 'emp', seq: 2, poison: true }, randomUUID(), 11);
    const notJson = inbound('{"key": "emp", "seq": ', randomUUID(), 12);
    const after = inbound({ key: 'emp', seq: 3 }, randomUUID(), 13);

    const outcomes = await processor.processBatch(handler, [before, poison, notJson, after, poison]);

    expect(outcomes).toEqual(['applied', 'dead_lettered', 'dead_lettered', 'applied', 'duplicate']);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 3]);
    expect(await deadLetters()).toEqual([
      { message_id: poison.headers['message-id'], reason: 'seq 2 is not acceptable', offset: '11' },
      { message_id: notJson.headers['message-id'], reason: expect.stringMatching(/not valid JSON/), offset: '12' },
    ]);
    expect(await inboxIds()).toEqual([before, poison, notJson, after].map((m) => m.headers['message-id']).sort());
    // Each dead letter is on its way to the .dlq topic through the outbox.
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM outbox_messages WHERE topic = $1 AND payload->>'consumer' = $2`, [
      `${TOPIC}.dlq`,
      handler.consumer,
    ]);
    expect(n).toBe(2);
  });

  it('stores a reason quoting half an emoji, the half replaced, on the batch path and the single one', async () => {
    // A handler's reason may quote the message; jsonb and text refuse an unpaired surrogate.
    const reason = `unknown type "${'😀'.repeat(3)}\ud83d"`;
    const inBatch = inbound({ key: 'emoji', seq: 1, poison: true, reason }, randomUUID(), 20);
    const alone = inbound({ key: 'emoji', seq: 2, poison: true, reason }, randomUUID(), 21);
    const fine = inbound({ key: 'emoji', seq: 3 }, randomUUID(), 22);

    expect(await processor.processBatch(handler, [inBatch, fine])).toEqual(['dead_lettered', 'applied']);
    expect(await processor.process(handler, alone)).toBe('dead_lettered');

    const stored = `unknown type "${'😀'.repeat(3)}\ufffd"`;
    expect((await deadLetters()).map((d) => d.reason)).toEqual([stored, stored]);
    const published = await dataSource.query(`SELECT payload->>'reason' AS reason FROM outbox_messages WHERE payload->>'consumer' = $1`, [handler.consumer]);
    expect(published).toEqual([{ reason: stored }, { reason: stored }]);
  });

  it('leaves nothing of the batch behind on a transient failure; applied one by one afterwards, each message counts once', async () => {
    const messages = [1, 2, 3].map((seq) => inbound({ key: 'blip', seq }));
    handler.failTransiently(messages[2].headers['message-id'], 1);

    await expect(processor.processBatch(handler, messages)).rejects.toThrow(/database blip/);
    // The first two had written their effects inside the batch: rolled back with it.
    expect(await effects(dataSource, handler.consumer)).toEqual([]);
    expect(await inboxIds()).toEqual([]);
    expect(await consumed('applied')).toBe(0);

    for (const message of messages) expect(await processor.process(handler, message)).toBe('applied');
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await processor.processBatch(handler, messages)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(await consumed('applied')).toBe(3);
  });

  it('commits a batch as one transaction: nothing of it is visible before the last message is applied', async () => {
    const messages = [1, 2, 3].map((seq) => inbound({ key: 'visible', seq }));
    let seenMidway: number | undefined;
    const original = handler.handle.bind(handler);
    handler.handle = async (message, manager) => {
      await original(message, manager);
      if (JSON.parse(message.value).seq === 3) {
        const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM test_effects WHERE consumer = $1`, [handler.consumer]);
        seenMidway = n;
      }
    };
    expect(await processor.processBatch(handler, messages)).toEqual(['applied', 'applied', 'applied']);
    expect(seenMidway).toBe(0);
    expect(await effects(dataSource, handler.consumer)).toHaveLength(3);
  });

  it('ends early when told to stop: what was applied commits, the rest is left for later', async () => {
    const messages = [1, 2, 3, 4].map((seq) => inbound({ key: 'stop', seq }));
    let applied = 0;
    const outcomes = await processor.processBatch(handler, messages, { stop: () => ++applied >= 2 });
    expect(outcomes).toEqual(['applied', 'applied']);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await inboxIds()).toEqual(messages.slice(0, 2).map((m) => m.headers['message-id']).sort());
    // The rest, delivered again, is applied; the first two are duplicates.
    expect(await processor.processBatch(handler, messages)).toEqual(['duplicate', 'duplicate', 'applied', 'applied']);
  });

  it('commits once it has run maxMs, after the message in progress, never with nothing applied', async () => {
    handler.workMs = 40;
    const messages = [1, 2, 3, 4, 5, 6].map((seq) => inbound({ key: 'time', seq }));
    const outcomes = await processor.processBatch(handler, messages, { maxMs: 60 });
    // At least one message, and not all six: 6 × 40 ms is well over 60 ms.
    expect(outcomes.length).toBeGreaterThanOrEqual(1);
    expect(outcomes.length).toBeLessThan(messages.length);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual(messages.slice(0, outcomes.length).map((_, i) => i + 1));
    expect(await processor.processBatch(handler, [messages[0]], { maxMs: 0 })).toEqual(['duplicate']);
  });

  it('an empty batch is a no-op', async () => {
    expect(await processor.processBatch(handler, [])).toEqual([]);
  });
});

describe('consumer batch settings', () => {
  it('defaults to batches of 500 and a 30 s session timeout', () => {
    const config = loadConfig({}, {}, { tool: true });
    expect({ batch: config.KAFKA_BATCH_MAX, session: config.KAFKA_SESSION_TIMEOUT_MS }).toEqual({ batch: 500, session: 30_000 });
    expect(loadConfig({ KAFKA_BATCH_MAX: '1', KAFKA_SESSION_TIMEOUT_MS: '6000' }, {}, { tool: true })).toMatchObject({
      KAFKA_BATCH_MAX: 1,
      KAFKA_SESSION_TIMEOUT_MS: 6_000,
    });
  });

  it('defaults to fetches that wait up to 100 ms for 1 MiB, and takes other values', () => {
    const config = loadConfig({}, {}, { tool: true });
    expect({ minBytes: config.KAFKA_FETCH_MIN_BYTES, maxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS }).toEqual({ minBytes: 1_048_576, maxWaitMs: 100 });
    expect(loadConfig({ KAFKA_FETCH_MIN_BYTES: '1', KAFKA_FETCH_MAX_WAIT_MS: '0' }, {}, { tool: true })).toMatchObject({ KAFKA_FETCH_MIN_BYTES: 1, KAFKA_FETCH_MAX_WAIT_MS: 0 });
  });

  it.each([
    ['KAFKA_BATCH_MAX', '0', 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000'],
    ['KAFKA_BATCH_MAX', '5001', 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000'],
    ['KAFKA_BATCH_MAX', 'many', 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000'],
    ['KAFKA_SESSION_TIMEOUT_MS', '5999', 'KAFKA_SESSION_TIMEOUT_MS must be a whole number of milliseconds from 6000 to 1800000'],
    ['KAFKA_SESSION_TIMEOUT_MS', '10s', 'KAFKA_SESSION_TIMEOUT_MS must be a whole number of milliseconds from 6000 to 1800000'],
    ['KAFKA_FETCH_MIN_BYTES', '0', 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760'],
    ['KAFKA_FETCH_MIN_BYTES', '10485761', 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760'],
    ['KAFKA_FETCH_MIN_BYTES', '1MB', 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760'],
    ['KAFKA_FETCH_MAX_WAIT_MS', '-1', 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000'],
    ['KAFKA_FETCH_MAX_WAIT_MS', '5001', 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000'],
    ['KAFKA_FETCH_MAX_WAIT_MS', '0.5', 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000'],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value }, {}, { tool: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([message]);
  });
});
