import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { hrisEventId } from '../../src/domain/hris-events/employer-changes';
import { ManualClock } from '../../src/domain/shared/clock';
import { ApplicationsService, IssuedCredentials } from '../../src/modules/applications/applications.service';
import { validateHrisEvent } from '../../src/modules/hris-events/hris-event-validation';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, connectEmployer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, request, startTestService, TestService } from '../utils/test-app';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface OutboxRow {
  message_id: string;
  topic: string;
  message_key: string;
  type: string;
  payload: { id: string; type: string; entity_id: string; data: Record<string, string> };
  headers: Record<string, string>;
}

describeWithPostgres('HRIS events from data syncs', () => {
  let service: TestService;
  let app: IssuedCredentials;
  const clock = new ManualClock('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    // Edits here stand for changes made in the payroll system between syncs: no edit-triggered syncs.
    service = await startTestService({ clock, env: { SANDBOX_EDIT_SYNCS: 'false' } });
    app = await createApplication(service);
  });
  afterAll(() => service?.close());

  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const db = () => service.app.get(DataSource);

  async function sandboxEmployer(employeeSize: number) {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: employeeSize }, basic(app)));
    expect(res.status).toBe(200);
    return { token: res.body.access_token as string, connectionId: res.body.connection_id as string, entityId: res.body.entity_id as string };
  }

  async function syncNow(token: string): Promise<void> {
    const started = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(started.status).toBe(201);
    await expectEventually(async () => {
      const job = await service.request(`/jobs/automated/${started.body.job_id}`, { headers: bearer(token) });
      expect(job.body.status).toBe('complete');
    });
  }

  /** The HRIS events in the outbox about a connection, oldest first. */
  async function hrisEventsOf(connectionId: string): Promise<OutboxRow[]> {
    return db().query(
      `SELECT message_id::text, topic, message_key, type, payload, headers FROM outbox_messages
       WHERE topic = 'hris.events' AND payload->>'connection_id' = $1 ORDER BY id`,
      [connectionId],
    );
  }

  async function addPerson(token: string, person: Record<string, unknown>, query = ''): Promise<string> {
    const res = await service.request(`/sandbox/directory${query}`, json([person], auth(token)));
    expect(res.status).toBe(200);
    return res.body[0].id;
  }

  async function setEmployment(token: string, id: string, body: Record<string, unknown>): Promise<void> {
    const res = await service.request(`/sandbox/employment/${id}`, { ...json(body, auth(token)), method: 'PUT' });
    expect(res.status).toBe(200);
  }

  /** Someone employed now, whose end date can be set. */
  async function anEmployee(token: string): Promise<string> {
    const directory = await service.request('/employer/directory?limit=10000', { headers: bearer(token) });
    const ids: string[] = directory.body.individuals.map((i: { id: string }) => i.id);
    const employments = await service.request('/employer/employment', json({ requests: ids.map((id) => ({ individual_id: id })) }, bearer(token)));
    const employed = employments.body.responses.find((r: { body: { end_date: string | null; is_active: boolean } }) => r.body.end_date === null && r.body.is_active);
    expect(employed).toBeDefined();
    return employed.body.id;
  }

  /** Points the entity back at the generation before its last sync, as if that sync's switch had not happened. */
  async function rewindSync(entityId: string, generation: string): Promise<void> {
    await db().query(`UPDATE employer_syncs SET generation = $2 WHERE entity_id = $1`, [entityId, generation]);
  }

  const generationOf = async (entityId: string): Promise<string> =>
    (await db().query(`SELECT generation::text AS generation FROM employer_syncs WHERE entity_id = $1`, [entityId]))[0].generation;

  it('publishes one EmployeeHired and one EmployeeTerminated for a sandbox hire and termination, once, with ids a re-run repeats', async () => {
    const employer = await sandboxEmployer(8);
    await syncNow(employer.token);
    expect(await hrisEventsOf(employer.connectionId)).toEqual([]);
    const baseline = await generationOf(employer.entityId);

    const hired = await addPerson(employer.token, {
      first_name: 'Grace',
      last_name: 'Hopper',
      dob: '1986-12-09',
      title: 'Engineer',
      income: { unit: 'yearly', amount: 12_000_000 },
      start_date: '2026-05-25',
    });
    const leaver = await anEmployee(employer.token);
    await setEmployment(employer.token, leaver, { end_date: '2026-06-12', is_active: false });
    // Nothing is published before the sync sees the change.
    expect(await hrisEventsOf(employer.connectionId)).toEqual([]);

    clock.set('2026-06-02T09:30:00Z');
    await syncNow(employer.token);

    const idOf = (individualId: string, type: 'EmployeeHired' | 'EmployeeTerminated', date: string) =>
      hrisEventId({ connectionId: employer.connectionId, entityId: employer.entityId, individualId, type, date });
    const expected = [
      {
        id: idOf(hired, 'EmployeeHired', '2026-05-25'),
        type: 'EmployeeHired',
        data: { individual_id: hired, start_date: '2026-05-25', dob: '1986-12-09' },
      },
      {
        id: idOf(leaver, 'EmployeeTerminated', '2026-06-12'),
        type: 'EmployeeTerminated',
        data: { individual_id: leaver, end_date: '2026-06-12' },
      },
    ].map((e) => ({ ...e, version: 1, occurred_at: '2026-06-02T09:30:00.000Z', connection_id: employer.connectionId, entity_id: employer.entityId }));

    const published = await hrisEventsOf(employer.connectionId);
    expect(published.map((m) => m.payload).sort((a, b) => a.type.localeCompare(b.type))).toEqual(expected);
    for (const message of published) {
      // What the hris.events consumer accepts.
      expect(validateHrisEvent(message.payload)).toEqual({ ok: true, event: message.payload });
      expect(message.message_id).toMatch(UUID_V5);
      expect(message).toMatchObject({
        message_id: message.payload.id,
        topic: 'hris.events',
        message_key: employer.connectionId,
        type: message.payload.type,
        headers: { 'message-id': message.payload.id, 'message-type': message.payload.type },
      });
    }

    // A re-run of the changing sync (against the same previous data) repeats the same ids: with the
    // first messages still in the outbox nothing is added and the sync completes ...
    await rewindSync(employer.entityId, baseline);
    await syncNow(employer.token);
    expect((await hrisEventsOf(employer.connectionId)).map((m) => m.message_id)).toEqual(published.map((m) => m.message_id));
    // ... and once they are gone from it (published and cleaned up), the same ids are written again.
    await db().query(`DELETE FROM outbox_batches WHERE topic = 'hris.events' AND $1 = ALL(message_keys)`, [employer.connectionId]);
    await rewindSync(employer.entityId, baseline);
    await syncNow(employer.token);
    const again = await hrisEventsOf(employer.connectionId);
    expect(again.map((m) => m.payload.id).sort()).toEqual(expected.map((e) => e.id).sort());

    // A sync with no changes publishes nothing more.
    await syncNow(employer.token);
    expect(await hrisEventsOf(employer.connectionId)).toHaveLength(2);
  });

  it('treats a sync whose previous data is gone as a first sync, not a wave of hires', async () => {
    const employer = await sandboxEmployer(4);
    await syncNow(employer.token);
    const first = await generationOf(employer.entityId);
    await syncNow(employer.token);
    await syncNow(employer.token);
    // Only the current generation and the one before it are kept: the first one's rows go, after
    // the commit that completes the job (so a moment after the job reads complete).
    await expectEventually(async () => {
      const [{ rows }] = await db().query(`SELECT count(*)::int AS rows FROM employer_data WHERE entity_id = $1 AND generation = $2`, [
        employer.entityId,
        first,
      ]);
      expect(rows).toBe(0);
    });
    await rewindSync(employer.entityId, first);
    await syncNow(employer.token);
    expect(await hrisEventsOf(employer.connectionId)).toEqual([]);
  });

  it('repeats a termination that was undone and set again with the same id, and adds no second message', async () => {
    const employer = await sandboxEmployer(5);
    await syncNow(employer.token);
    const leaver = await anEmployee(employer.token);

    await setEmployment(employer.token, leaver, { end_date: '2026-06-19', is_active: false });
    await syncNow(employer.token);
    const [terminated] = await hrisEventsOf(employer.connectionId);
    expect(terminated.payload).toMatchObject({ type: 'EmployeeTerminated', data: { individual_id: leaver, end_date: '2026-06-19' } });

    // Undone: nothing to say. Set again to the same date: the same event, already in the outbox.
    await setEmployment(employer.token, leaver, { end_date: null, is_active: true });
    await syncNow(employer.token);
    await setEmployment(employer.token, leaver, { end_date: '2026-06-19', is_active: false });
    await syncNow(employer.token);
    expect(await hrisEventsOf(employer.connectionId)).toEqual([terminated]);

    // Moved to another date: a new termination.
    await setEmployment(employer.token, leaver, { end_date: '2026-06-26' });
    await syncNow(employer.token);
    const events = await hrisEventsOf(employer.connectionId);
    expect(events.map((m) => [m.payload.type, m.payload.data.end_date])).toEqual([
      ['EmployeeTerminated', '2026-06-19'],
      ['EmployeeTerminated', '2026-06-26'],
    ]);
    expect(events[1].message_id).not.toBe(terminated.message_id);
  });

  it('publishes per entity, keyed by the connection, and only for the entity that changed', async () => {
    const employer = await connectEmployer(service, app, { entityNames: ['Alpha Co', 'Beta Co'] });
    const [alpha, beta] = employer.entityIds;
    await syncNow(employer.accessToken);
    expect(await hrisEventsOf(employer.connectionId)).toEqual([]);

    const bea = await addPerson(
      employer.accessToken,
      { first_name: 'Bea', last_name: 'Beta', dob: '1990-01-02', title: 'Analyst', income: { unit: 'hourly', amount: 4_000 }, start_date: '2026-05-27' },
      `?entity_ids[]=${beta}`,
    );
    await syncNow(employer.accessToken);
    const events = await hrisEventsOf(employer.connectionId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      message_key: employer.connectionId,
      payload: { type: 'EmployeeHired', entity_id: beta, data: { individual_id: bea, start_date: '2026-05-27' } },
    });
    expect(events[0].payload.entity_id).not.toBe(alpha);
  });
});

// The embedded database (PGlite, one backend session) runs the same statements inside the sync's
// transaction.
describe('HRIS events from data syncs on the embedded database', () => {
  let service: RunningService;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bo-embedded-hris-'));
    service = await startService(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', EMBEDDED_DATA_DIR: dataDir, PROVIDER_LATENCY_MS: '0', JOB_POLL_MS: '20' }),
    );
  });

  afterAll(async () => {
    await service?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('publishes a sandbox hire after the second sync', async () => {
    const app = await service.app.get(ApplicationsService).create({ name: 'Embedded', redirectUris: [], sandbox: true });
    const connection = await request(service.url, '/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 10 }, basic(app)));
    expect(connection.status).toBe(200);
    const { access_token: token, connection_id: connectionId, entity_id: entityId } = connection.body;
    const syncNow = async () => {
      const started = await request(service.url, '/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
      expect(started.status).toBe(201);
      await expectEventually(
        async () => expect((await request(service.url, `/jobs/automated/${started.body.job_id}`, { headers: bearer(token) })).body.status).toBe('complete'),
        { timeoutMs: 60_000 },
      );
    };
    const events = async () =>
      (await service.app.get(DataSource).query(`SELECT message_key, payload FROM outbox_messages WHERE topic = 'hris.events' ORDER BY id`)) as {
        message_key: string;
        payload: { id: string; data: unknown };
      }[];

    await syncNow();
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
    expect(await events()).toEqual([
      {
        message_key: connectionId,
        payload: expect.objectContaining({
          id: hrisEventId({ connectionId, entityId, individualId: id, type: 'EmployeeHired', date: '2026-01-05' }),
          data: { individual_id: id, start_date: '2026-01-05', dob: '1985-12-10' },
        }),
      },
    ]);
  });
});
