import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { MessageProcessor } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InProcessTransport } from '../../../src/infrastructure/messaging/in-process-transport';
import { InboundMessage } from '../../../src/infrastructure/messaging/message';
import { MessageHandlerRegistry } from '../../../src/infrastructure/messaging/message-handler-registry';
import { OutboxRelay } from '../../../src/infrastructure/messaging/outbox/outbox-relay';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, effects, relaySettings, TestBody } from './messaging-test-kit';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';

const TOPIC = 'inbox.test';

const inbound = (body: TestBody | string, messageId: string | undefined = randomUUID()): InboundMessage => ({
  topic: TOPIC,
  key: typeof body === 'string' ? 'raw' : body.key,
  value: typeof body === 'string' ? body : JSON.stringify(body),
  headers: messageId === undefined ? { 'trace-id': 't-1' } : { 'message-id': messageId, 'trace-id': 't-1' },
});

describeWithPostgres('inbox and dead letters (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let processor: MessageProcessor;
  let handler: EffectHandler;
  let consumerSeq = 0;

  const inboxRows = (messageId: string): Promise<unknown[]> =>
    dataSource.query(`SELECT consumer, topic FROM inbox_messages WHERE consumer = $1 AND message_id = $2`, [
      handler.consumer,
      messageId,
    ]);

  /** Outbox → relay → in-process transport → this test's processor and handler. */
  const inProcess = () => {
    const registry = new MessageHandlerRegistry();
    registry.register(handler);
    const transport = new InProcessTransport(registry, processor);
    return {
      writer: new OutboxWriter(new OutboxSignal()),
      relay: new OutboxRelay(dataSource, transport, new OutboxSignal(), new Metrics(), relaySettings()),
    };
  };

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    ({ dataSource, database } = await openTestDataSource(6));
    await createEffectsTable(dataSource);
  });

  beforeEach(() => {
    // A fresh consumer name per test: the inbox dedupes per consumer, so tests stay independent.
    handler = new EffectHandler(TOPIC, `consumer-${++consumerSeq}`);
    processor = new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), new Metrics());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('applies a message delivered twice only once', async () => {
    const message = inbound({ key: 'k', seq: 1 });
    expect(await processor.process(handler, message)).toBe('applied');
    expect(await processor.process(handler, message)).toBe('duplicate');
    expect(handler.seen).toHaveLength(1);
    expect(await effects(dataSource, handler.consumer)).toEqual([
      { consumer: handler.consumer, message_id: message.headers['message-id'], key: 'k', seq: 1 },
    ]);
    expect(await inboxRows(message.headers['message-id'])).toEqual([{ consumer: handler.consumer, topic: TOPIC }]);

    // Another consumer of the same topic has its own inbox entry and applies it too.
    const other = new EffectHandler(TOPIC, `${handler.consumer}-other`);
    expect(await processor.process(other, message)).toBe('applied');
    expect(await effects(dataSource, other.consumer)).toHaveLength(1);
  });

  it('applies a message delivered twice at the same moment only once', async () => {
    const message = inbound({ key: 'k', seq: 2 });
    const outcomes = await Promise.all([processor.process(handler, message), processor.process(handler, message)]);
    expect(outcomes.sort()).toEqual(['applied', 'duplicate']);
    expect(await effects(dataSource, handler.consumer)).toHaveLength(1);
  });

  it('dedupes on a JSON body id when there is no message-id header', async () => {
    const id = randomUUID();
    const message: InboundMessage = { topic: TOPIC, key: 'k', value: JSON.stringify({ id, key: 'k', seq: 3 }), headers: {} };
    expect(await processor.process(handler, message)).toBe('applied');
    expect(await processor.process(handler, message)).toBe('duplicate');
    expect(await inboxRows(id)).toHaveLength(1);
  });

  it('commits the effect and the inbox row together: a transient failure leaves neither, a retry applies once', async () => {
    const message = inbound({ key: 'k', seq: 4 });
    const messageId = message.headers['message-id'];
    handler.failTransiently(messageId, 2);

    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(processor.process(handler, message)).rejects.toThrow(`database blip while applying ${messageId}`);
      expect(await effects(dataSource, handler.consumer)).toEqual([]);
      expect(await inboxRows(messageId)).toEqual([]);
    }

    expect(await processor.process(handler, message)).toBe('applied');
    expect(await processor.process(handler, message)).toBe('duplicate');
    expect((await effects(dataSource, handler.consumer)).map((e) => e.message_id)).toEqual([messageId]);
    expect(await inboxRows(messageId)).toHaveLength(1);
    expect(handler.seen).toHaveLength(3);
  });

  it('dead-letters a message its handler rejects as poison, with reason, payload and headers, and goes on', async () => {
    const poison = inbound({ key: 'emp-1', seq: 5, poison: true });
    const poisonId = poison.headers['message-id'];
    expect(await processor.process(handler, poison)).toBe('dead_lettered');

    const [deadLetter] = await dataSource.query(
      `SELECT id, consumer, topic, message_key, message_id, payload, headers, reason, status
       FROM dead_letters WHERE message_id = $1`,
      [poisonId],
    );
    expect(deadLetter).toMatchObject({
      consumer: handler.consumer,
      topic: TOPIC,
      message_key: 'emp-1',
      payload: poison.value,
      headers: poison.headers,
      reason: 'seq 5 is not acceptable',
      status: 'open',
    });
    // Its effect (none was written) and its inbox row committed with the dead letter.
    expect(await effects(dataSource, handler.consumer)).toEqual([]);
    expect(await inboxRows(poisonId)).toHaveLength(1);

    const [dlq] = await dataSource.query(
      `SELECT m.topic, m.message_key, m.type, m.payload, m.headers, p.id IS NOT NULL AS pending
       FROM outbox_messages m LEFT JOIN outbox_pending p ON p.lane = m.lane AND p.id = m.batch_id WHERE m.message_id = $1`,
      [deadLetter.id],
    );
    expect(dlq).toMatchObject({
      topic: `${TOPIC}.dlq`,
      message_key: 'emp-1',
      type: 'DeadLetter',
      pending: true,
      payload: {
        dead_letter_id: deadLetter.id,
        reason: 'seq 5 is not acceptable',
        consumer: handler.consumer,
        original: { topic: TOPIC, key: 'emp-1', headers: poison.headers, value: poison.value },
      },
      headers: { 'dead-letter-reason': 'seq 5 is not acceptable', 'original-topic': TOPIC },
    });

    // A redelivery of the poison is acknowledged, not dead-lettered again.
    expect(await processor.process(handler, poison)).toBe('duplicate');
    expect(await dataSource.query(`SELECT count(*)::int AS n FROM dead_letters WHERE message_id = $1`, [poisonId])).toEqual([
      { n: 1 },
    ]);

    const next = inbound({ key: 'emp-1', seq: 6 });
    expect(await processor.process(handler, next)).toBe('applied');
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([6]);
  });

  it('dead-letters a body that is not JSON instead of retrying it forever', async () => {
    const bad = inbound('{"key": "emp-2", "seq": ', randomUUID());
    expect(await processor.process(handler, bad)).toBe('dead_lettered');
    const rows = await dataSource.query(`SELECT payload, headers, reason FROM dead_letters WHERE message_id = $1`, [
      bad.headers['message-id'],
    ]);
    expect(rows).toEqual([{ payload: bad.value, headers: bad.headers, reason: expect.stringMatching(/not valid JSON/) }]);
    expect(
      await dataSource.query(`SELECT count(*)::int AS n FROM outbox_messages WHERE topic = $1 AND payload->>'consumer' = $2`, [
        `${TOPIC}.dlq`,
        handler.consumer,
      ]),
    ).toEqual([{ n: 1 }]);
    expect(await processor.process(handler, inbound({ key: 'emp-2', seq: 7 }))).toBe('applied');
  });

  it('keeps going past poison inside one relayed batch (in-process transport)', async () => {
    const { writer, relay } = inProcess();
    const key = `batch-${handler.consumer}`;
    await dataSource.transaction((manager) =>
      writer.append(manager, [
        { topic: TOPIC, key, type: 'T', payload: { key, seq: 1 } },
        { topic: TOPIC, key, type: 'T', payload: { key, seq: 2, poison: true } },
        { topic: TOPIC, key, type: 'T', payload: { key, seq: 3 } },
      ]),
    );
    // Drain: the batch, then the dead-letter message (nobody consumes `.dlq` in process).
    while ((await relay.publishRound()) > 0);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 3]);
    expect(
      await dataSource.query(`SELECT reason FROM dead_letters WHERE consumer = $1`, [handler.consumer]),
    ).toEqual([{ reason: 'seq 2 is not acceptable' }]);
    expect(
      await dataSource.query(`SELECT count(*)::int AS n FROM outbox_pending`),
    ).toEqual([{ n: 0 }]);
  });

  it('a relayed batch whose handler fails transiently is retried without applying anything twice', async () => {
    const { writer, relay } = inProcess();
    const key = `retry-${handler.consumer}`;
    const ids = await dataSource.transaction((manager) =>
      writer.append(manager, [1, 2, 3].map((seq) => ({ topic: TOPIC, key, type: 'T', payload: { key, seq } }))),
    );
    handler.failTransiently(ids[1], 1);
    await expect(relay.publishRound()).rejects.toThrow('database blip');
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1]);
    expect(await relay.publishRound()).toBe(3);
    expect((await effects(dataSource, handler.consumer)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});
