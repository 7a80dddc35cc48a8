import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { Metrics } from '../../src/infrastructure/observability/metrics';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { HRIS_CONSUMER } from '../../src/modules/hris-events/hris-events.consumer';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { basic, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

interface Employer {
  app: IssuedCredentials;
  connectionId: string;
  entityId: string;
}

type Outcomes = { applied: number; duplicate: number; dead_lettered: number };

/**
 * An HRIS event's id is unique within its connection, not across the service: two applications
 * (two employers' HRIS systems) numbering their events alike each get theirs applied, while
 * the same event redelivered is still a duplicate, over `POST /hris/events` and on the topic,
 * inside one batch and across batches. The service runs on the real broker and PostgreSQL.
 */
describeWithKafka('HRIS event ids per connection, over HTTP and Kafka', () => {
  let service: TestService;
  let producer: Producer;
  let one: Employer;
  let two: Employer;
  /** A second connection of the first application. */
  let oneMore: Employer;

  const employer = async (app: IssuedCredentials): Promise<Employer> => {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)));
    expect(res.status).toBe(200);
    return { app, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  };

  beforeAll(async () => {
    service = await startTestService({ kafka: true });
    const [appOne, appTwo] = [await createApplication(service), await createApplication(service)];
    [one, two, oneMore] = [await employer(appOne), await employer(appTwo), await employer(appOne)];
    const kafka = new Kafka({ clientId: `hris-scope-e2e-${randomBytes(3).toString('hex')}`, brokers: testEnv.kafkaBrokers!.split(','), logLevel: logLevel.NOTHING });
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  }, 60_000);

  afterAll(async () => {
    await producer?.disconnect();
    await service?.close();
  });

  const db = () => service.app.get(DataSource);
  /** A new hire without a policy: its saga ends at once (`no_policy`), so `applied` is all there is to wait for. */
  const hired = (to: Employer, id: string, extra: Record<string, unknown> = {}) => ({
    id,
    type: 'EmployeeHired',
    version: 1,
    occurred_at: new Date().toISOString(),
    connection_id: to.connectionId,
    entity_id: to.entityId,
    data: { individual_id: randomUUID(), start_date: '2026-07-01' },
    ...extra,
  });
  const post = (from: Employer, body: unknown) => service.request('/hris/events', json(body, basic(from.app)));
  const sagaConnections = async (id: string): Promise<string[]> =>
    (await db().query(`SELECT connection_id FROM sagas WHERE lower(source_event_id) = $1`, [id.toLowerCase()])).map((r: { connection_id: string }) => r.connection_id).sort();
  const sorted = (...ids: string[]) => [...ids].sort();
  const consumed = async (): Promise<Outcomes> => {
    const metric = await service.app.get(Metrics).messagesConsumed.get();
    const count = (outcome: string) => metric.values.find((v) => v.labels.consumer === HRIS_CONSUMER && v.labels.outcome === outcome)?.value ?? 0;
    return { applied: count('applied'), duplicate: count('duplicate'), dead_lettered: count('dead_lettered') };
  };
  const produce = (events: { connection_id?: unknown }[]) =>
    producer.send({
      topic: `${service.topicPrefix}hris.events`,
      messages: events.map((e) => ({ key: typeof e.connection_id === 'string' ? e.connection_id : null, value: JSON.stringify(e) })),
    });
  /** Waits until the consumer has taken `total` messages since `before`, then answers their outcomes. */
  const consumedSince = async (before: Outcomes, total: number): Promise<Outcomes> =>
    expectEventually(
      async () => {
        const now = await consumed();
        const since = { applied: now.applied - before.applied, duplicate: now.duplicate - before.duplicate, dead_lettered: now.dead_lettered - before.dead_lettered };
        expect(since.applied + since.duplicate + since.dead_lettered).toBeGreaterThanOrEqual(total);
        return since;
      },
      { timeoutMs: 45_000 },
    );

  describe('POST /hris/events', () => {
    it('two applications post events of one id: both are applied; each one’s redelivery is a duplicate', async () => {
      const id = randomUUID();
      const [ofOne, ofTwo] = [hired(one, id), hired(two, id)];
      expect((await post(one, ofOne)).body).toEqual({ id, outcome: 'applied' });
      expect((await post(two, ofTwo)).body).toEqual({ id, outcome: 'applied' });
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId));

      expect((await post(one, ofOne)).body).toEqual({ id, outcome: 'duplicate' });
      expect((await post(two, { ...ofTwo, id: id.toUpperCase() })).body).toEqual({ id: id.toUpperCase(), outcome: 'duplicate' });
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId));
    });

    it('inside one batch and across batches: the copy is a duplicate in its own connection only', async () => {
      const id = randomUUID();
      const [ofOne, ofTwo, ofOneMore] = [hired(one, id), hired(two, id), hired(oneMore, id)];
      expect((await post(one, [ofOne, ofOne])).body).toEqual([
        { id, outcome: 'applied' },
        { id, outcome: 'duplicate' },
      ]);
      expect((await post(two, [ofTwo, ofTwo])).body).toEqual([
        { id, outcome: 'applied' },
        { id, outcome: 'duplicate' },
      ]);
      // One application's two connections: two employers, two events.
      expect((await post(one, [ofOneMore, ofOne, ofOneMore])).body).toEqual([
        { id, outcome: 'applied' },
        { id, outcome: 'duplicate' },
        { id, outcome: 'duplicate' },
      ]);
      expect((await post(two, [ofTwo])).body).toEqual([{ id, outcome: 'duplicate' }]);
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId, oneMore.connectionId));
    });

    it('poison of one id is dead-lettered once per application, each answered with its own reason', async () => {
      const id = randomUUID();
      const noEntity = hired(one, id, { entity_id: randomUUID() });
      const unknownType = hired(two, id, { type: 'EmployeePromoted' });
      expect((await post(one, noEntity)).body).toEqual({ id, outcome: 'dead_lettered', reason: expect.stringContaining('is not an entity of connection') });
      expect((await post(two, unknownType)).body).toEqual({ id, outcome: 'dead_lettered', reason: expect.stringContaining('Unknown HRIS event type') });
      expect((await post(one, noEntity)).body).toEqual({ id, outcome: 'duplicate' });
      expect((await post(two, unknownType)).body).toEqual({ id, outcome: 'duplicate' });

      // Naming no connection at all, the event is the posting application's.
      const other = randomUUID();
      const unnamed: Record<string, unknown> = hired(one, other);
      delete unnamed.connection_id;
      expect((await post(one, unnamed)).body).toEqual({ id: other, outcome: 'dead_lettered', reason: expect.stringContaining('connection_id') });
      expect((await post(two, unnamed)).body).toEqual({ id: other, outcome: 'dead_lettered', reason: expect.stringContaining('connection_id') });
      expect((await post(two, [unnamed, unnamed])).body).toEqual([
        { id: other, outcome: 'duplicate' },
        { id: other, outcome: 'duplicate' },
      ]);
      expect(await db().query(`SELECT count(*)::int AS n FROM dead_letters WHERE consumer = $1 AND message_id = ANY($2::text[])`, [HRIS_CONSUMER, [id, other]])).toEqual([
        { n: 4 },
      ]);
    });

    it('an event naming another application’s connection is rejected, even with an id that connection has taken', async () => {
      const id = randomUUID();
      expect((await post(one, hired(one, id))).body.outcome).toBe('applied');
      expect((await post(two, hired(one, id))).body).toEqual({ id, outcome: 'rejected', reason: `No connection ${one.connectionId} for this application` });
      expect(await sagaConnections(id)).toEqual([one.connectionId]);
    });
  });

  describe('on hris.events', () => {
    it('two connections’ events of one id are both applied, in one batch and across batches; a redelivery is a duplicate', async () => {
      const id = randomUUID();
      const [ofOne, ofTwo] = [hired(one, id), hired(two, id)];
      const before = await consumed();
      await produce([ofOne, ofTwo, ofOne, ofTwo]);
      expect(await consumedSince(before, 4)).toEqual({ applied: 2, duplicate: 2, dead_lettered: 0 });
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId));

      const again = await consumed();
      await produce([ofTwo]);
      await produce([{ ...ofOne, id: id.toUpperCase() }, hired(oneMore, id)]);
      expect(await consumedSince(again, 3)).toEqual({ applied: 1, duplicate: 2, dead_lettered: 0 });
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId, oneMore.connectionId));
    });

    it('an event posted over HTTP and then published is one event; another connection’s copy is another', async () => {
      const id = randomUUID();
      const posted = hired(one, id);
      expect((await post(one, posted)).body.outcome).toBe('applied');
      const before = await consumed();
      await produce([posted, hired(two, id)]);
      expect(await consumedSince(before, 2)).toEqual({ applied: 1, duplicate: 1, dead_lettered: 0 });
      expect(await sagaConnections(id)).toEqual(sorted(one.connectionId, two.connectionId));
    });

    it('an unknown connection’s event is dead-lettered under that connection: once, and without taking the id from others', async () => {
      const id = randomUUID();
      const unknown = hired(one, id, { connection_id: randomUUID() });
      const before = await consumed();
      await produce([unknown, hired(two, id), unknown]);
      expect(await consumedSince(before, 3)).toEqual({ applied: 1, duplicate: 1, dead_lettered: 1 });
      expect(await db().query(`SELECT scope, reason FROM dead_letters WHERE consumer = $1 AND message_id = $2`, [HRIS_CONSUMER, id])).toEqual([
        { scope: unknown.connection_id, reason: `Unknown connection ${unknown.connection_id}` },
      ]);
      expect(await sagaConnections(id)).toEqual([two.connectionId]);
    });
  });
});
