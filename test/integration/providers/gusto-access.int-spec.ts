import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { ManualClock } from '../../../src/domain/shared/clock';
import { GustoAccess, GustoTokenRefresher } from '../../../src/infrastructure/providers/gusto/gusto-access';
import { GustoUnauthorized } from '../../../src/infrastructure/providers/gusto/gusto-http';
import { GustoTokens } from '../../../src/infrastructure/providers/gusto/gusto-oauth';
import { ProviderGrants } from '../../../src/infrastructure/providers/provider-grants';
import { SealingKey } from '../../../src/infrastructure/secrets/sealing-key';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const COMPANY = 'c0a8f1e2-5b7d-4e1a-9c3f-2d4b6a8e0f13';
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unauthorized = (message = 'The access token is invalid') => new GustoUnauthorized(message, { status: 401, attempts: 1 });

/** A Gusto token endpoint stand-in: counts refreshes, answers the next pair, or refuses. */
class Refresher implements GustoTokenRefresher {
  readonly spent: string[] = [];
  refuse = false;
  constructor(private readonly clock: ManualClock) {}

  async refresh(refreshToken: string): Promise<GustoTokens> {
    this.spent.push(refreshToken);
    await sleep(50);
    if (this.refuse) throw unauthorized('invalid_grant: the refresh token was revoked');
    const n = this.spent.length + 1;
    return { accessToken: `access-${n}`, refreshToken: `refresh-${n}`, expiresAt: new Date(this.clock.now().getTime() + 2 * HOUR) };
  }
}

/**
 * A connection's access to its Gusto company on PostgreSQL: tokens refreshed ahead of expiry and
 * on a 401, once however many callers find them due, and a grant Gusto refuses for good put the
 * connection in reauth.
 */
describeWithPostgres('Gusto access tokens (PostgreSQL)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let grants: ProviderGrants;
  let clock: ManualClock;
  let refresher: Refresher;
  let lost: string[];
  let access: GustoAccess;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
    const config = Object.assign(new AppConfig(), { DATABASE_URL: 'postgres://set', WEBHOOK_SECRETS_KEY: 'gusto-access-test-key-of-at-least-32-chars' });
    grants = new ProviderGrants(dataSource, new SealingKey(config));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    clock = new ManualClock('2026-11-29T12:00:00Z');
    refresher = new Refresher(clock);
    lost = [];
    access = new GustoAccess(grants, refresher, clock, async (connectionId) => void lost.push(connectionId));
  });

  const connected = async (expiresInMs = 2 * HOUR): Promise<string> => {
    const { id } = await createConnection(dataSource, { providerId: 'gusto', sandbox: false });
    await grants.save({
      connectionId: id,
      providerId: 'gusto',
      accountRef: COMPANY,
      accessToken: 'access-1',
      refreshToken: 'refresh-1',
      expiresAt: new Date(clock.now().getTime() + expiresInMs),
    });
    return id;
  };

  it('calls with the stored token while it is fresh, naming the company it reaches', async () => {
    const id = await connected();
    expect(await access.withToken(id, async (token, company) => [token, company])).toEqual(['access-1', COMPANY]);
    expect(refresher.spent).toEqual([]);
  });

  it('refreshes a token about to expire before the call, once for ten callers at once', async () => {
    const id = await connected(4 * 60_000);
    const tokens = await Promise.all(Array.from({ length: 10 }, () => access.withToken(id, async (token) => token)));
    expect(refresher.spent).toEqual(['refresh-1']);
    expect(new Set(tokens)).toEqual(new Set(['access-2']));
    expect(await grants.find(id)).toMatchObject({ generation: 2, refreshToken: 'refresh-2' });
  });

  it('on a 401 refreshes and calls once more; a second 401 is the answer', async () => {
    const id = await connected();
    const seen: string[] = [];
    const answer = await access.withToken(id, async (token) => {
      seen.push(token);
      if (token === 'access-1') throw unauthorized();
      return 'ok';
    });
    expect([answer, seen, refresher.spent]).toEqual(['ok', ['access-1', 'access-2'], ['refresh-1']]);

    await expect(access.withToken(id, () => Promise.reject(unauthorized()))).rejects.toBeInstanceOf(GustoUnauthorized);
    expect(refresher.spent).toEqual(['refresh-1', 'refresh-2']);
  });

  it('a refresh Gusto refuses loses the grant: reauth once, and no call or refresh after', async () => {
    const id = await connected(60_000);
    refresher.refuse = true;
    let calls = 0;
    const call = async () => void calls++;
    await expect(access.withToken(id, call)).rejects.toMatchObject({ family: 'authentication_error', serviceCode: 'reauthenticate_user' });
    await expect(access.withToken(id, call)).rejects.toMatchObject({ serviceCode: 'reauthenticate_user' });
    expect([calls, refresher.spent.length, lost]).toEqual([0, 1, [id]]);
    expect((await grants.find(id))?.failure).toContain('invalid_grant');
  });

  it('a connection with no grant needs reauthentication, and nothing is called', async () => {
    const { id } = await createConnection(dataSource, { providerId: 'gusto', sandbox: false });
    await expect(access.withToken(id, async () => 'called')).rejects.toMatchObject({ serviceCode: 'reauthenticate_user' });
    expect(refresher.spent).toEqual([]);
  });
});
