import { DataSource } from 'typeorm';
import { ProviderGrants } from '../../src/infrastructure/providers/provider-grants';
import { describeWithPostgres } from '../setup/test-env';
import { FakeGusto } from '../fakes/gusto/fake-gusto';
import { bearer, connectEmployer, ConnectedEmployer, createApplication } from '../utils/connect';
import { startTestService, TestService } from '../utils/test-app';

const HOUR = 3_600_000;

/**
 * Which payroll system a connection's calls reach, through the whole service: a production
 * connection granted at Gusto reaches Gusto (the fake, held to Gusto's document); sandbox
 * connections and connections made by the simulated sign-in stay on the simulation; a grant
 * Gusto refuses for good puts the connection in `reauth`.
 */
describeWithPostgres('provider routing: real Gusto connections reach Gusto, the rest the simulation', () => {
  let fake: FakeGusto;
  let service: TestService;
  let companyUuid: string;
  let gustoNames: string[];

  beforeAll(async () => {
    fake = await new FakeGusto().start();
    companyUuid = fake.addCompany({ pay_schedule_type: 'single', join_date: '2024-01-01' }).uuid;
    gustoNames = fake.addEmployees(companyUuid, 7).map((e) => `${e.first_name} ${e.last_name}`);
    fake.addPaySchedule(companyUuid);
    service = await startTestService({ env: { GUSTO_CLIENT_ID: fake.clientId, GUSTO_CLIENT_SECRET: fake.clientSecret, GUSTO_BASE_URL: fake.url } });
  }, 60_000);

  afterAll(async () => {
    await service?.close();
    await fake?.stop();
  });

  const connect = async (sandbox: boolean): Promise<ConnectedEmployer> => connectEmployer(service, await createApplication(service, { sandbox }), { providerId: 'gusto' });

  const grant = async (employer: ConnectedEmployer, tokens: { access_token: string; refresh_token: string }, expiresAt = new Date(Date.now() + 2 * HOUR)) =>
    service.app.get(ProviderGrants).save({
      connectionId: employer.connectionId,
      providerId: 'gusto',
      accountRef: companyUuid,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      expiresAt,
    });

  const directoryNames = async (employer: ConnectedEmployer): Promise<string[]> => {
    const res = await service.request('/employer/directory', { headers: bearer(employer.accessToken) });
    expect(res.status).toBe(200);
    return res.body.individuals.map((p: { first_name: string; last_name: string }) => `${p.first_name} ${p.last_name}`).sort();
  };

  it('sends a production connection granted at Gusto to Gusto, with its token and Gusto’s API version', async () => {
    const employer = await connect(false);
    await grant(employer, fake.issueTokens(companyUuid));
    const before = fake.requests.length;
    expect(await directoryNames(employer)).toEqual([...gustoNames].sort());
    const calls = fake.requests.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((call) => call.apiVersion === '2026-02-01')).toBe(true);
    expect(fake.violations).toEqual([]);
  });

  it('keeps a sandbox application’s gusto connection on the simulation, grant or not, and calls Gusto for nothing', async () => {
    const employer = await connect(true);
    await grant(employer, fake.issueTokens(companyUuid));
    const before = fake.requests.length;
    const names = await directoryNames(employer);
    expect(names.length).toBeGreaterThan(0);
    expect(names).not.toEqual([...gustoNames].sort());
    expect(fake.requests.length).toBe(before);
  });

  it('keeps a production connection made by the simulated sign-in (no grant) on the simulation', async () => {
    const employer = await connect(false);
    const before = fake.requests.length;
    expect((await directoryNames(employer)).length).toBeGreaterThan(0);
    expect(fake.requests.length).toBe(before);
  });

  it('a refresh Gusto refuses for good puts the connection in reauth and the call answers reauthenticate_user', async () => {
    const employer = await connect(false);
    // Due for a refresh, with a refresh token Gusto never issued: Gusto answers invalid_grant.
    await grant(employer, { access_token: 'expired-access-token', refresh_token: 'never-issued-refresh-token' }, new Date(Date.now() - 1_000));
    const res = await service.request('/employer/directory', { headers: bearer(employer.accessToken) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).toMatchObject({ service_code: 'reauthenticate_user' });
    const [connection] = await service.app.get(DataSource).query(`SELECT status FROM connections WHERE id = $1`, [employer.connectionId]);
    expect(connection.status).toBe('reauth');
    const [stored] = await service.app.get(DataSource).query(`SELECT failure FROM provider_grants WHERE connection_id = $1`, [employer.connectionId]);
    expect(stored.failure).toEqual(expect.any(String));
    // Nothing calls Gusto for that grant again until the employer connects again.
    const before = fake.requests.length;
    await service.request('/employer/company', { headers: bearer(employer.accessToken) });
    expect(fake.requests.length).toBe(before);
  });
});
