import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DataSource, EntityManager, Logger as TypeOrmLogger } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { MessageProcessor, ProcessOutcome } from '../../../src/infrastructure/messaging/inbox/message-processor';
import { InboundMessage, MessageHandler } from '../../../src/infrastructure/messaging/message';
import { OutboxSignal } from '../../../src/infrastructure/messaging/outbox/outbox-signal';
import { OutboxWriter } from '../../../src/infrastructure/messaging/outbox/outbox-writer';
import { Metrics } from '../../../src/infrastructure/observability/metrics';
import { describeWithPostgres } from '../../setup/test-env';
import { createTestDatabase, TestDatabase } from '../../utils/test-database';
import { createEffectsTable, EffectHandler, effects, TestBody } from './messaging-test-kit';

const TOPIC = 'inbox.scope.test';

type ScopedBody = TestBody & { scope: string };

/** A message of `scope` carrying `id`, as a producer in that scope would send it. */
const inbound = (scope: string, id: string, seq: number, extra: Partial<ScopedBody> = {}): InboundMessage => ({
  topic: TOPIC,
  key: scope,
  value: JSON.stringify({ key: scope, seq, scope, ...extra }),
  headers: { 'message-id': id },
});

/** Its ids are unique within the body's `scope` only (as an HRIS event's within its connection); applied one by one. */
class ScopedHandler extends EffectHandler {
  messageScopeOf(message: InboundMessage): string {
    try {
      return (JSON.parse(message.value) as Partial<ScopedBody>).scope ?? '';
    } catch {
      return '';
    }
  }
}

/** The same, applied set-wise (handleBatch), as the HRIS consumer is: one statement for the whole run. */
class SetWiseScopedHandler extends ScopedHandler {
  async handleBatch(messages: readonly InboundMessage[], manager: EntityManager): Promise<(string | null)[]> {
    const bodies = messages.map((m) => JSON.parse(m.value) as ScopedBody);
    const applied = messages.flatMap((m, i) => (bodies[i].poison ? [] : [{ id: m.headers['message-id'], body: bodies[i] }]));
    await manager.query(
      `INSERT INTO test_effects (consumer, message_id, key, seq) SELECT $1, u.id, u.key, u.seq FROM unnest($2::text[], $3::text[], $4::int[]) AS u(id, key, seq)`,
      [this.consumer, applied.map((a) => a.id), applied.map((a) => a.body.key), applied.map((a) => a.body.seq)],
    );
    return bodies.map((b) => (b.poison ? `seq ${b.seq} is not acceptable` : null));
  }
}

/** Counts the statements that write inbox rows, once `counting` is on. */
class InboxStatementCounter implements TypeOrmLogger {
  counting = false;
  inboxInserts = 0;
  logQuery(query: string): void {
    if (this.counting && /inbox_claim\(/.test(query)) this.inboxInserts++;
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

/**
 * The inbox key is (consumer, scope, id): a handler whose ids are unique only within a scope
 * (the HRIS consumer: within a connection) gets one row per scope and id, on every path the
 * processor has (one by one, a batch under savepoints, a batch set-wise); a handler without a
 * scope keeps one row per id.
 */
describeWithPostgres('inbox keys scoped per handler (PostgreSQL)', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let processor: MessageProcessor;
  const statements = new InboxStatementCounter();
  let seq = 0;

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    database = await createTestDatabase();
    dataSource = new DataSource({ ...dataSourceOptions({ url: database.url, poolSize: 4 }), logging: true, logger: statements });
    await dataSource.initialize();
    await createEffectsTable(dataSource);
    processor = new MessageProcessor(new UnitOfWork(dataSource), new OutboxWriter(new OutboxSignal()), new Metrics());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const inboxKeys = async (handler: MessageHandler): Promise<string[]> =>
    (await dataSource.query(`SELECT scope, message_id FROM inbox_messages WHERE consumer = $1 ORDER BY scope, message_id`, [handler.consumer])).map(
      (r: { scope: string; message_id: string }) => `${r.scope}/${r.message_id}`,
    );

  const paths: [string, () => MessageHandler, (handler: MessageHandler, messages: InboundMessage[]) => Promise<ProcessOutcome[]>][] = [
    [
      'one by one',
      () => new ScopedHandler(TOPIC, `scoped-single-${++seq}`),
      async (handler, messages) => {
        const outcomes: ProcessOutcome[] = [];
        for (const message of messages) outcomes.push(await processor.process(handler, message));
        return outcomes;
      },
    ],
    ['in a batch under savepoints', () => new ScopedHandler(TOPIC, `scoped-batch-${++seq}`), (handler, messages) => processor.processBatch(handler, messages)],
    ['in a set-wise batch', () => new SetWiseScopedHandler(TOPIC, `scoped-setwise-${++seq}`), (handler, messages) => processor.processBatch(handler, messages)],
  ];

  describe.each(paths)('%s', (_, makeHandler, apply) => {
    it('applies one id once in each scope; in its own scope, again, it is a duplicate (within a batch and across batches)', async () => {
      const handler = makeHandler();
      const id = randomUUID();

      expect(await apply(handler, [inbound('a', id, 1), inbound('b', id, 2), inbound('a', id, 3)])).toEqual(['applied', 'applied', 'duplicate']);
      expect(await apply(handler, [inbound('b', id, 4), inbound('a', id, 5), inbound('c', id, 6)])).toEqual(['duplicate', 'duplicate', 'applied']);

      expect((await effects(dataSource, handler.consumer)).map((e) => [e.key, e.seq])).toEqual([
        ['a', 1],
        ['b', 2],
        ['c', 6],
      ]);
      expect(await inboxKeys(handler)).toEqual([`a/${id}`, `b/${id}`, `c/${id}`]);
    });

    it('dead-letters a poison id once in each scope, with the scope on the dead letter', async () => {
      const handler = makeHandler();
      const id = randomUUID();

      expect(await apply(handler, [inbound('a', id, 1, { poison: true }), inbound('b', id, 2, { poison: true })])).toEqual(['dead_lettered', 'dead_lettered']);
      expect(await apply(handler, [inbound('b', id, 3, { poison: true }), inbound('a', id, 4, { poison: true })])).toEqual(['duplicate', 'duplicate']);
      // The same id applies in a third scope: the other scopes' dead letters do not take it.
      expect(await apply(handler, [inbound('c', id, 5)])).toEqual(['applied']);

      const letters = await dataSource.query(`SELECT scope, message_id, reason FROM dead_letters WHERE consumer = $1 ORDER BY scope`, [handler.consumer]);
      expect(letters).toEqual([
        { scope: 'a', message_id: id, reason: 'seq 1 is not acceptable' },
        { scope: 'b', message_id: id, reason: 'seq 2 is not acceptable' },
      ]);
      expect(await inboxKeys(handler)).toEqual([`a/${id}`, `b/${id}`, `c/${id}`]);
    });

    it('scopes a message that is not JSON as the handler says, and dead-letters it once', async () => {
      const handler = makeHandler();
      const id = randomUUID();
      const broken: InboundMessage = { topic: TOPIC, key: null, value: '{"scope": ', headers: { 'message-id': id } };
      expect(await apply(handler, [broken, { ...broken }])).toEqual(['dead_lettered', 'duplicate']);
      expect(await inboxKeys(handler)).toEqual([`/${id}`]);
    });
  });

  it('a handler without a scope keeps one key per id, whatever its messages carry', async () => {
    const handler = new EffectHandler(TOPIC, `unscoped-${++seq}`);
    const id = randomUUID();
    expect(await processor.processBatch(handler, [inbound('a', id, 1), inbound('b', id, 2)])).toEqual(['applied', 'duplicate']);
    expect(await processor.process(handler, inbound('c', id, 3))).toBe('duplicate');
    expect(await inboxKeys(handler)).toEqual([`/${id}`]);
  });

  it('claims a set-wise batch of many scopes in one statement (and its poison in one more)', async () => {
    const handler = new SetWiseScopedHandler(TOPIC, `scoped-statements-${++seq}`);
    const ids = [randomUUID(), randomUUID()];
    const messages = ['a', 'b', 'c'].flatMap((scope, s) => ids.map((id, i) => inbound(scope, id, s * 2 + i)));
    const broken: InboundMessage = { topic: TOPIC, key: null, value: 'not json', headers: { 'message-id': randomUUID() } };

    statements.counting = true;
    statements.inboxInserts = 0;
    try {
      expect(await processor.processBatch(handler, [...messages, broken, ...messages])).toEqual([
        ...messages.map(() => 'applied'),
        'dead_lettered',
        ...messages.map(() => 'duplicate'),
      ]);
    } finally {
      statements.counting = false;
    }
    expect(statements.inboxInserts).toBe(2);
    expect(await inboxKeys(handler)).toHaveLength(messages.length + 1);
  });
});
