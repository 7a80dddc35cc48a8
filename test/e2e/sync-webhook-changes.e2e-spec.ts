import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { ManualClock } from '../../src/domain/shared/clock';
import { DATA_CHANGE_EVENT_TYPES } from '../../src/domain/webhooks/webhook-event-types';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, request, startTestService, TestService } from '../utils/test-app';

interface ChangeEvent {
  event_type: string;
  data: Record<string, string> | null;
}

interface Employer {
  token: string;
  connectionId: string;
  entityId: string;
}

const ALL_CHANGES = [...DATA_CHANGE_EVENT_TYPES];

describeWithPostgres('data-change webhooks from data syncs', () => {
  let service: TestService;
  const clock = new ManualClock('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    // Edits stand for changes made in the payroll system between syncs: no edit-triggered syncs,
    // and no deliveries, so the queue is read as the sync left it.
    service = await startTestService({ clock, env: { SANDBOX_EDIT_SYNCS: 'false', WEBHOOK_DELIVERY: 'false' } });
  });
  afterAll(() => service?.close());

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const db = () => service.app.get(DataSource);

  async function sandboxEmployer(app: IssuedCredentials, employeeSize = 6): Promise<Employer> {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: employeeSize }, basic(app)));
    expect(res.status).toBe(200);
    return { token: res.body.access_token, connectionId: res.body.connection_id, entityId: res.body.entity_id };
  }

  /** An application with an endpoint for `types` (the application id is its client id). */
  async function subscribedApp(types: string[], { enabled = true } = {}): Promise<IssuedCredentials> {
    const app = await createApplication(service);
    await db().query(
      `INSERT INTO webhook_endpoints (id, application_id, url, event_types, enabled, secret_sealed)
       VALUES (gen_random_uuid(), $1, 'https://receiver.example/hook', $2, $3, 'x')`,
      [app.client_id, types, enabled],
    );
    return app;
  }

  async function syncNow(token: string, status = 'complete'): Promise<void> {
    const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(started.status).toBe(201);
    await expectEventually(async () => {
      const job = await service.request(`/jobs/automated/${started.body.job_id}`, { headers: bearer(token) });
      expect(job.body.status).toBe(status);
    });
  }

  /** The change events queued about a connection, in delivery order. */
  async function changeEventsOf(connectionId: string): Promise<ChangeEvent[]> {
    return db().query(
      `SELECT e.event_type, e.data FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
       WHERE e.connection_id = $1 AND e.event_type = ANY ($2) ORDER BY d.id`,
      [connectionId, ALL_CHANGES],
    );
  }

  async function eventCountOfApp(app: IssuedCredentials): Promise<number> {
    const [{ count }] = await db().query(`SELECT count(*)::int AS count FROM webhook_events WHERE application_id = $1`, [app.client_id]);
    return count;
  }

  async function sandboxEdit(method: 'POST' | 'PUT', path: string, token: string, body: unknown) {
    const res = await service.request(path, { ...json(body, auth(token)), method });
    expect(res.status).toBe(200);
    return res.body;
  }

  const addPerson = async (token: string): Promise<string> =>
    (
      await sandboxEdit('POST', '/sandbox/directory', token, [
        { first_name: 'Grace', last_name: 'Hopper', dob: '1986-12-09', title: 'Engineer', income: { unit: 'yearly', amount: 12_000_000 }, start_date: '2026-05-25' },
      ])
    )[0].id;

  /** Active employees, in directory order. */
  async function employees(token: string): Promise<string[]> {
    const directory = await service.request('/employer/directory?limit=10000', { headers: bearer(token) });
    return directory.body.individuals.filter((i: { is_active: boolean }) => i.is_active).map((i: { id: string }) => i.id);
  }

  async function payStatementIndividuals(token: string, paymentId: string): Promise<string[]> {
    const res = await service.request('/employer/pay-statement', json({ requests: [{ payment_id: paymentId, limit: 100 }] }, bearer(token)));
    expect(res.body.responses[0].code).toBe(200);
    return res.body.responses[0].body.pay_statements.map((s: { individual_id: string }) => s.individual_id);
  }

  const currentGeneration = async (entityId: string): Promise<string> =>
    (await db().query(`SELECT generation::text AS generation FROM employer_syncs WHERE entity_id = $1`, [entityId]))[0].generation;

  const byIndividual = (type: string) => (id: string): ChangeEvent => ({ event_type: type, data: { individual_id: id } });
  const sorted = (events: ChangeEvent[]) => [...events].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

  it('reports nothing for the first sync, then exactly the records the sandbox edits changed, in kind then id order', async () => {
    const app = await subscribedApp(ALL_CHANGES);
    const employer = await sandboxEmployer(app);
    await syncNow(employer.token);
    expect(await changeEventsOf(employer.connectionId)).toEqual([]);

    const [promoted, renamed, leaver] = await employees(employer.token);
    const hired = await addPerson(employer.token);
    // Title is not in the directory entry; is_active is.
    await sandboxEdit('PUT', `/sandbox/employment/${promoted}`, employer.token, { title: 'Principal Engineer' });
    await sandboxEdit('PUT', `/sandbox/employment/${leaver}`, employer.token, { end_date: '2026-06-12', is_active: false });
    await sandboxEdit('PUT', `/sandbox/individual/${renamed}`, employer.token, { preferred_name: 'Ace' });
    await sandboxEdit('PUT', '/sandbox/company', employer.token, { legal_name: 'Renamed Corp' });
    const paid = await sandboxEdit('POST', '/sandbox/payment', employer.token, { pay_date: '2026-05-29' });
    // Nothing is queued before a sync sees the changes.
    expect(await changeEventsOf(employer.connectionId)).toEqual([]);

    await syncNow(employer.token);
    const paidTo = await payStatementIndividuals(employer.token, paid.payment_id);
    expect(paidTo.length).toBeGreaterThan(0);

    const events = await changeEventsOf(employer.connectionId);
    const ordered = (ids: string[]) => [...ids].sort();
    expect(events).toEqual([
      { event_type: 'company.updated', data: null },
      ...ordered([hired, leaver]).map((id) => byIndividual(id === hired ? 'directory.created' : 'directory.updated')(id)),
      ...ordered([hired, renamed]).map((id) => byIndividual(id === hired ? 'individual.created' : 'individual.updated')(id)),
      ...ordered([hired, promoted, leaver]).map((id) => byIndividual(id === hired ? 'employment.created' : 'employment.updated')(id)),
      { event_type: 'payment.created', data: { payment_id: paid.payment_id, pay_date: '2026-05-29' } },
      ...ordered(paidTo).map((id) => ({ event_type: 'pay_statement.created', data: { payment_id: paid.payment_id, individual_id: id } })),
    ]);
    // Each event once, to the one endpoint.
    const [{ events: rows, deliveries }] = await db().query(
      `SELECT count(DISTINCT e.id)::int AS events, count(*)::int AS deliveries FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
       WHERE e.connection_id = $1`,
      [employer.connectionId],
    );
    expect({ rows, deliveries }).toEqual({ rows: events.length, deliveries: events.length });
    const [event] = await db().query(`SELECT application_id, entity_id FROM webhook_events WHERE connection_id = $1 LIMIT 1`, [employer.connectionId]);
    expect(event).toEqual({ application_id: app.client_id, entity_id: employer.entityId });

    // A sync with no edits finds nothing more.
    await syncNow(employer.token);
    expect(await changeEventsOf(employer.connectionId)).toHaveLength(events.length);
  });

  it('reports records gone from the provider as deleted and changed payments and pay statements as updated, not a moved directory entry', async () => {
    const app = await subscribedApp(ALL_CHANGES);
    const employer = await sandboxEmployer(app);
    await syncNow(employer.token);
    await syncNow(employer.token);
    expect(await changeEventsOf(employer.connectionId)).toEqual([]);

    // The synced data as if the provider had held more, and other bodies, at the last sync.
    const generation = await currentGeneration(employer.entityId);
    const ghost = randomUUID();
    const ghostPayment = randomUUID();
    const [payment] = await db().query(
      `SELECT record_id FROM employer_data WHERE entity_id = $1 AND generation = $2 AND kind = 'payment' ORDER BY sort_key LIMIT 1`,
      [employer.entityId, generation],
    );
    const [statement] = await db().query(
      `SELECT parent_id, sort_key FROM employer_data WHERE entity_id = $1 AND generation = $2 AND kind = 'pay_statement' AND parent_id <> $3 LIMIT 1`,
      [employer.entityId, generation, payment.record_id],
    );
    await db().query(
      `INSERT INTO employer_data (entity_id, generation, kind, record_id, parent_id, pay_date, sort_key, body)
       SELECT entity_id, generation, kind, CASE kind WHEN 'payment' THEN $3 WHEN 'pay_statement' THEN $3 || ':' || $4 ELSE $4 END,
              CASE WHEN kind = 'pay_statement' THEN $3 END, CASE WHEN kind IN ('payment', 'pay_statement') THEN DATE '2025-01-03' END,
              CASE kind WHEN 'pay_statement' THEN $4 WHEN 'directory' THEN '99999999' ELSE $4 END, body
       FROM (SELECT DISTINCT ON (kind) * FROM employer_data WHERE entity_id = $1 AND generation = $2
             AND kind IN ('individual', 'employment', 'directory', 'payment', 'pay_statement') ORDER BY kind) one`,
      [employer.entityId, generation, ghostPayment, ghost],
    );
    await db().query(
      `UPDATE employer_data SET body = body || '{"tampered": true}' WHERE entity_id = $1 AND generation = $2
       AND ((kind = 'payment' AND record_id = $3) OR (kind = 'pay_statement' AND record_id = $4))`,
      [employer.entityId, generation, payment.record_id, `${statement.parent_id}:${statement.sort_key}`],
    );
    await db().query(
      `UPDATE employer_data SET sort_key = '0000' || sort_key WHERE entity_id = $1 AND generation = $2 AND kind = 'directory'`,
      [employer.entityId, generation],
    );
    const [{ pay_date: payDate }] = await db().query(
      `SELECT to_char(pay_date, 'YYYY-MM-DD') AS pay_date FROM employer_data WHERE entity_id = $1 AND generation = $2 AND record_id = $3`,
      [employer.entityId, generation, payment.record_id],
    );

    await syncNow(employer.token);
    expect(sorted(await changeEventsOf(employer.connectionId))).toEqual(
      sorted([
        byIndividual('directory.deleted')(ghost),
        byIndividual('individual.deleted')(ghost),
        byIndividual('employment.deleted')(ghost),
        { event_type: 'payment.deleted', data: { payment_id: ghostPayment, pay_date: '2025-01-03' } },
        { event_type: 'payment.updated', data: { payment_id: payment.record_id, pay_date: payDate } },
        { event_type: 'pay_statement.deleted', data: { payment_id: ghostPayment, individual_id: ghost } },
        { event_type: 'pay_statement.updated', data: { payment_id: statement.parent_id, individual_id: statement.sort_key } },
      ]),
    );
  });

  it('queues only the types an enabled endpoint of the application subscribes to', async () => {
    const directoryOnly = await subscribedApp(['directory.created']);
    const disabled = await subscribedApp(ALL_CHANGES, { enabled: false });
    const none = await createApplication(service);
    const employers = await Promise.all([directoryOnly, disabled, none].map((app) => sandboxEmployer(app)));
    const hired: string[] = [];
    for (const employer of employers) {
      await syncNow(employer.token);
      hired.push(await addPerson(employer.token));
      const [someone] = await employees(employer.token);
      await sandboxEdit('PUT', `/sandbox/employment/${someone}`, employer.token, { end_date: '2026-06-12', is_active: false });
      await sandboxEdit('PUT', '/sandbox/company', employer.token, { legal_name: 'Renamed Corp' });
      await syncNow(employer.token);
    }

    expect(await changeEventsOf(employers[0].connectionId)).toEqual([byIndividual('directory.created')(hired[0])]);
    expect(await eventCountOfApp(disabled)).toBe(0);
    expect(await eventCountOfApp(none)).toBe(0);
  });

  it('queues nothing for a sync that fails, and the changes once a sync completes', async () => {
    const app = await subscribedApp(ALL_CHANGES);
    const employer = await sandboxEmployer(app);
    await syncNow(employer.token);
    const hired = await addPerson(employer.token);

    const configure = (status: string) =>
      sandboxEdit('PUT', '/sandbox/jobs/configuration', employer.token, { type: 'data_sync_all', completion_status: status });
    await configure('error');
    await syncNow(employer.token, 'error');
    expect(await changeEventsOf(employer.connectionId)).toEqual([]);

    await configure('complete');
    await syncNow(employer.token);
    expect(sorted(await changeEventsOf(employer.connectionId))).toEqual(
      sorted(['directory.created', 'individual.created', 'employment.created'].map((type) => byIndividual(type)(hired))),
    );
  });
});

// The embedded database (PGlite, one backend session) runs the same statement inside the sync's
// transaction.
describe('data-change webhooks from data syncs on the embedded database', () => {
  let service: RunningService;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bo-embedded-webhook-changes-'));
    service = await startService(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        EMBEDDED_DATA_DIR: dataDir,
        PROVIDER_LATENCY_MS: '0',
        JOB_POLL_MS: '20',
        SANDBOX_EDIT_SYNCS: 'false',
        WEBHOOK_DELIVERY: 'false',
      }),
    );
  });

  afterAll(async () => {
    await service?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('queues the events of a sandbox hire after the second sync', async () => {
    const db = service.app.get(DataSource);
    const app = await service.app.get(ApplicationsService).create({ name: 'Embedded', redirectUris: [], sandbox: true });
    await db.query(
      `INSERT INTO webhook_endpoints (id, application_id, url, event_types, secret_sealed)
       VALUES (gen_random_uuid(), $1, 'https://receiver.example/hook', $2, 'x')`,
      [app.client_id, ALL_CHANGES],
    );
    const connection = await request(service.url, '/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 10 }, basic(app)));
    expect(connection.status).toBe(200);
    const { access_token: token, connection_id: connectionId } = connection.body;
    const syncNow = async () => {
      const started = await request(service.url, '/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
      expect(started.status).toBe(201);
      await expectEventually(
        async () => expect((await request(service.url, `/jobs/automated/${started.body.job_id}`, { headers: bearer(token) })).body.status).toBe('complete'),
        { timeoutMs: 60_000 },
      );
    };
    const events = (): Promise<ChangeEvent[]> =>
      db.query(
        `SELECT e.event_type, e.data FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.connection_id = $1 ORDER BY d.id`,
        [connectionId],
      );

    await syncNow();
    expect(await events()).toEqual([]);
    const added = await request(
      service.url,
      '/sandbox/directory',
      json([{ first_name: 'Ada', last_name: 'Lovelace', dob: '1985-12-10', title: 'Analyst', income: { unit: 'yearly', amount: 9_000_000 }, start_date: '2026-01-05' }], {
        authorization: `Bearer ${token}`,
      }),
    );
    expect(added.status).toBe(200);
    await syncNow();
    const id = added.body[0].id;
    expect(await events()).toEqual(
      ['directory.created', 'individual.created', 'employment.created'].map((event_type) => ({ event_type, data: { individual_id: id } })),
    );
  });
});
