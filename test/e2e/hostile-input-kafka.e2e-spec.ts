import { randomBytes, randomUUID } from 'node:crypto';
import { Kafka, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { basic, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * Whatever bytes a producer puts on `hris.events`, the consumer dead-letters what it cannot apply
 * and goes on: a NUL byte in the body, key or headers (text PostgreSQL cannot store), U+0000 or a
 * lone surrogate escaped in the JSON, and nesting deep enough to exhaust a recursive validator.
 */
describeWithKafka('hostile messages on hris.events', () => {
  let service: TestService;
  let producer: Producer;
  let connectionId: string;
  let entityId: string;

  beforeAll(async () => {
    service = await startTestService({ kafka: true });
    const app = await createApplication(service);
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)));
    ({ connection_id: connectionId, entity_id: entityId } = res.body);
    const kafka = new Kafka({ clientId: `hostile-kafka-e2e-${randomBytes(3).toString('hex')}`, brokers: testEnv.kafkaBrokers!.split(','), logLevel: logLevel.NOTHING });
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  }, 60_000);

  afterAll(async () => {
    await producer?.disconnect();
    await service?.close();
  });

  const hired = (id: string) => ({
    id,
    type: 'EmployeeHired',
    version: 1,
    occurred_at: new Date().toISOString(),
    connection_id: connectionId,
    entity_id: entityId,
    data: { individual_id: randomUUID(), start_date: '2026-07-01' },
  });

  it('dead-letters each one with its reason, stores it, and applies the valid event after them', async () => {
    const ids = Array.from({ length: 6 }, () => randomUUID());
    const valid = randomUUID();
    const deep = `{"id":"${ids[4]}","type":"EmployeeHired","data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    await producer.send({
      topic: `${service.topicPrefix}hris.events`,
      messages: [
        { key: connectionId, value: Buffer.from(JSON.stringify(hired(ids[0])).replace('"EmployeeHired"', '"Employee\u0000Hired"')) },
        { key: `${connectionId}\u0000`, value: JSON.stringify(hired(ids[1])) },
        { key: connectionId, value: JSON.stringify(hired(ids[2])), headers: { 'message-id': `${ids[2]}\u0000`, 'x-\u0000': 'v' } },
        { key: connectionId, value: JSON.stringify({ ...hired(ids[3]), entity_id: `${entityId}\u0000` }) },
        { key: connectionId, value: deep },
        { key: connectionId, value: JSON.stringify({ ...hired(ids[5]), data: { individual_id: randomUUID(), start_date: '2026-07-01', note: '\ud800' } }) },
        { key: connectionId, value: JSON.stringify(hired(valid)) },
      ],
    });
    const db = service.app.get(DataSource);
    await expectEventually(async () => {
      const sagas = await db.query(`SELECT 1 FROM sagas WHERE source_event_id = $1`, [valid]);
      expect(sagas).toHaveLength(1);
    }, { timeoutMs: 30_000 });
    // The message keyed with a NUL byte may hash to another partition, consumed apart from the rest:
    // its dead letter can land after the valid event was applied.
    let letters: { message_id: string; message_key: string; payload: string; reason: string }[] = [];
    await expectEventually(async () => {
      letters = await db.query(`SELECT message_id, message_key, payload, reason FROM dead_letters WHERE consumer = 'hris-sagas' ORDER BY created_at`);
      expect(letters).toHaveLength(6);
    }, { timeoutMs: 30_000 });
    const reasons = letters.map((l) => l.reason).join('\n');
    expect(reasons.match(/holds U\+0000 \(in its key, body or headers\)/g)).toHaveLength(3);
    expect(reasons).toMatch(/entity_id: text must not contain U\+0000/);
    expect(reasons).toMatch(/nested deeper than 64 levels/);
    expect(reasons).toMatch(/note: text must not contain U\+0000 or an unpaired UTF-16 surrogate/);
    // Stored with U+FFFD in place of the NUL bytes, so an operator can read what came.
    expect(letters.some((l) => l.payload.includes('Employee\ufffdHired'))).toBe(true);
    expect(letters.some((l) => l.message_key === `${connectionId}\ufffd`)).toBe(true);
    expect((await service.request('/health/ready')).status).toBe(200);
  });
});
