import { randomUUID } from 'node:crypto';
import Finch from '@tryfinch/finch-api';
import { Kafka, logLevel, Producer } from 'kafkajs';
import { DataSource } from 'typeorm';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithKafka, testEnv } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';
import { WebhookReceiver } from '../utils/webhook-receiver';

interface HrisWebhook {
  event_type: string;
  connection_id: string;
  entity_id?: string;
  data: { saga_id?: string; saga_type?: string; source_event_id?: string; outcome?: string; dead_letter_id?: string; message_id?: string; reason?: string };
}

/**
 * The opt-in types, from HRIS events on the real broker: an event carried out is
 * `hris.saga.completed`, a poison one keyed by the connection is `hris.event.dead_lettered`; an
 * endpoint that did not name them gets neither.
 */
describeWithKafka('opt-in HRIS webhooks from events on Kafka', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let producer: Producer;
  let optIn: WebhookReceiver;
  let standard: WebhookReceiver;
  const finch = new Finch({ accessToken: 'unused' });

  beforeAll(async () => {
    service = await startTestService({ kafka: true, env: { SANDBOX_EDIT_SYNCS: 'false' } });
    app = await createApplication(service);
    producer = new Kafka({ clientId: 'webhooks-hris-test', brokers: testEnv.kafkaBrokers!.split(','), logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    optIn = await new WebhookReceiver().start();
    standard = await new WebhookReceiver().start();
  }, 60_000);
  afterAll(async () => {
    await producer?.disconnect();
    await optIn?.stop();
    await standard?.stop();
    await service?.close();
  });

  it('delivers saga outcomes and dead letters to the endpoint that opted in, signed', async () => {
    const endpoint = await service.request(
      '/webhooks/endpoints',
      json({ url: optIn.url, event_types: ['hris.saga.completed', 'hris.saga.failed', 'hris.event.dead_lettered'] }, basic(app)),
    );
    expect(endpoint.status).toBe(201);
    expect((await service.request('/webhooks/endpoints', json({ url: standard.url }, basic(app)))).status).toBe(201);

    const employer = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)));
    const connectionId: string = employer.body.connection_id;
    const entityId: string = employer.body.entity_id;
    const directory = await service.request('/employer/directory', { headers: bearer(employer.body.access_token) });
    const person: string = directory.body.individuals[0].id;

    const hire = {
      id: randomUUID(),
      type: 'EmployeeHired',
      version: 1,
      occurred_at: new Date().toISOString(),
      connection_id: connectionId,
      entity_id: entityId,
      data: { individual_id: person, start_date: '2026-07-01' },
    };
    await producer.send({
      topic: `${service.topicPrefix}hris.events`,
      messages: [
        { key: connectionId, value: JSON.stringify(hire) },
        // Poison: not JSON at all, but keyed by a connection of this application.
        { key: connectionId, value: '{"id": "broken' },
      ],
    });

    await expectEventually(() => {
      const types = optIn.bodies<HrisWebhook>().map((b) => b.event_type);
      expect(types).toContain('hris.saga.completed');
      expect(types).toContain('hris.event.dead_lettered');
    }, { timeoutMs: 30_000 });
    const events = optIn.received.map((r) => finch.webhooks.unwrap(r.body, r.headers, endpoint.body.secret) as unknown as HrisWebhook);
    const saga = events.find((e) => e.event_type === 'hris.saga.completed')!;
    expect(saga).toMatchObject({ connection_id: connectionId, entity_id: entityId, data: { saga_type: 'new_hire', source_event_id: hire.id } });
    const poison = events.find((e) => e.event_type === 'hris.event.dead_lettered')!;
    expect(poison).toMatchObject({ connection_id: connectionId, data: { reason: expect.stringMatching(/JSON/i) } });
    const [deadLetter] = await service.app.get(DataSource).query(`SELECT id FROM dead_letters WHERE message_key = $1`, [connectionId]);
    expect(poison.data.dead_letter_id).toBe(deadLetter.id);

    // The endpoint with the standard types got none of them.
    await new Promise((r) => setTimeout(r, 300));
    expect(standard.bodies<HrisWebhook>().filter((b) => b.event_type.startsWith('hris.'))).toEqual([]);
  }, 60_000);
});
