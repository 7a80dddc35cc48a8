import { Client } from 'pg';
import { describeWithPostgres } from '../setup/test-env';
import { basic, bearer, createApplication } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, startTestService, TestService } from '../utils/test-app';

/**
 * A request whose transaction the database refused for now (here: its statement canceled while
 * it waited for a lock, as a lock or statement timeout would) is asked to come back, 429
 * `server_busy` with Retry-After, not answered 500: nothing of it was written, and the same
 * request succeeds once the database has room.
 */
describeWithPostgres('a request the database refused for now', () => {
  let service: TestService;
  let token: string;
  let entityId: string;
  let individualId: string;
  let benefitId: string;

  beforeAll(async () => {
    service = await startTestService();
    const app = await createApplication(service);
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 3 }, basic(app)));
    expect(connection.status).toBe(200);
    ({ access_token: token, entity_id: entityId } = connection.body);
    const directory = await service.request('/employer/directory', { headers: bearer(token) });
    individualId = directory.body.individuals[0].id;
    const benefit = await service.request('/employer/benefits', json({ type: '401k', description: 'Busy 401(k)', frequency: 'every_paycheck' }, bearer(token)));
    expect(benefit.status).toBe(200);
    benefitId = benefit.body.benefit_id;
    await expectEventually(async () => expect((await service.request(`/jobs/automated/${benefit.body.job_id}`, { headers: bearer(token) })).body.status).toBe('complete'));
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  const adjustments = async () => (await service.request('/sandbox/payroll/adjustments', { headers: bearer(token) })).body.adjustments;

  it('answers 429 server_busy with Retry-After, writes nothing, and succeeds when sent again', async () => {
    expect(await adjustments()).toEqual([]);
    const body = { adjustments: [{ individual_id: individualId, benefit_id: benefitId, action: 'skip' }] };
    // The employer's row held by another session: the request's transaction waits for it.
    const holder = new Client({ connectionString: service.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM sandbox_employers WHERE entity_id = $1 FOR UPDATE', [entityId]);
      const answer = service.request('/sandbox/payroll/adjustments', json(body, bearer(token)));
      let waiting: number | undefined;
      // The session the holder blocks (its statement's text is not always the one shown: prepared statements).
      await expectEventually(async () => {
        const { rows } = await holder.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`);
        expect(rows).toHaveLength(1);
        waiting = rows[0].pid;
      });
      await holder.query('SELECT pg_cancel_backend($1)', [waiting]);
      const refused = await answer;
      expect({ status: refused.status, body: refused.body, retryAfter: refused.headers.get('retry-after') }).toEqual({
        status: 429,
        body: { code: 429, name: 'rate_limit_error', service_code: 'server_busy', message: 'The service is busy; retry shortly', retry_after: 1 },
        retryAfter: '1',
      });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await adjustments()).toEqual([]);

    const again = await service.request('/sandbox/payroll/adjustments', json(body, bearer(token)));
    expect(again.status).toBe(200);
    expect(again.body.adjustments).toEqual([{ individual_id: individualId, benefit_id: benefitId, action: 'skip', employee_amount: null, employer_amount: null }]);
  }, 60_000);
});
