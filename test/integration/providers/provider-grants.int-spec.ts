import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
import { DomainError } from '../../../src/domain/shared/domain-error';
import { GrantTokens, ProviderGrant, ProviderGrants } from '../../../src/infrastructure/providers/provider-grants';
import { SealingKey } from '../../../src/infrastructure/secrets/sealing-key';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';
import { createConnection } from '../sync/sync-test-kit';

const KEY = 'provider-grants-test-key-of-at-least-32-characters';
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Real providers' OAuth grants on PostgreSQL: sealed at rest, and refreshed once whatever the
 * number of instances asking at the same time (a refresh token is single-use: a second refresh
 * with it would be refused, and the connection lost).
 */
describeWithPostgres('provider grants (PostgreSQL)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let other: DataSource;
  let grants: ProviderGrants;
  let otherInstance: ProviderGrants;

  /** `key` null: no WEBHOOK_SECRETS_KEY, on a database that is not the embedded one. */
  const grantsOn = (source: DataSource, key: string | null = KEY) =>
    new ProviderGrants(source, new SealingKey(Object.assign(new AppConfig(), { DATABASE_URL: 'postgres://set', WEBHOOK_SECRETS_KEY: key ?? undefined })));

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
    other = new DataSource({ ...(dataSource.options as object), name: 'second instance' } as DataSource['options']);
    await other.initialize();
    grants = grantsOn(dataSource);
    otherInstance = grantsOn(other);
  });
  afterAll(async () => {
    await other?.destroy();
    await dataSource?.destroy();
    await database?.drop();
  });

  const newGrant = async (): Promise<ProviderGrant> => {
    const connection = await createConnection(dataSource, { providerId: 'gusto' });
    await grants.save({
      connectionId: connection.id,
      providerId: 'gusto',
      accountRef: 'c0a8f1e2-5b7d-4e1a-9c3f-2d4b6a8e0f13',
      accessToken: `access-${connection.id}`,
      refreshToken: `refresh-${connection.id}`,
      expiresAt: new Date(Date.now() + 2 * HOUR),
    });
    return (await grants.find(connection.id))!;
  };

  it('keeps the tokens sealed: the rows hold neither, and another key opens nothing', async () => {
    const grant = await newGrant();
    expect(grant).toMatchObject({ providerId: 'gusto', generation: 1, failure: null, accessToken: `access-${grant.connectionId}` });
    const [row] = await dataSource.query(`SELECT row_to_json(g)::text AS text FROM provider_grants g WHERE connection_id = $1`, [grant.connectionId]);
    expect(row.text).not.toContain(grant.accessToken);
    expect(row.text).not.toContain(grant.refreshToken);
    await expect(grantsOn(dataSource, 'another-key-of-at-least-thirty-two-characters').find(grant.connectionId)).rejects.toThrow(/another/);
  });

  it('refreshes once when two instances find the token due at the same time; both get the new tokens', async () => {
    const grant = await newGrant();
    const spent: string[] = [];
    const refresh = async (current: ProviderGrant): Promise<GrantTokens> => {
      spent.push(current.refreshToken);
      await sleep(100); // the provider's round trip, while the other instance asks too
      return { accessToken: 'access-2', refreshToken: 'refresh-2', expiresAt: new Date(Date.now() + 2 * HOUR) };
    };
    const [a, b] = await Promise.all([grants.refreshOnce(grant.connectionId, 1, refresh), otherInstance.refreshOnce(grant.connectionId, 1, refresh)]);
    expect(spent).toEqual([grant.refreshToken]);
    expect([a, b].map((g) => [g.generation, g.accessToken, g.refreshToken])).toEqual([
      [2, 'access-2', 'refresh-2'],
      [2, 'access-2', 'refresh-2'],
    ]);
    expect(await grants.find(grant.connectionId)).toMatchObject({ generation: 2, accessToken: 'access-2', refreshToken: 'refresh-2' });
  });

  it('leaves the grant as it was when the refresh fails, and a grant failed for good is not refreshed again', async () => {
    const grant = await newGrant();
    await expect(
      grants.refreshOnce(grant.connectionId, 1, () => Promise.reject(new DomainError('provider_error', 'Gusto answered 503'))),
    ).rejects.toThrow('Gusto answered 503');
    expect(await grants.find(grant.connectionId)).toMatchObject({ generation: 1, refreshToken: grant.refreshToken });

    await grants.fail(grant.connectionId, 'invalid_grant: the refresh token was revoked');
    let called = false;
    const after = await grants.refreshOnce(grant.connectionId, 1, async () => {
      called = true;
      return { accessToken: 'x', refreshToken: 'y', expiresAt: new Date() };
    });
    expect(called).toBe(false);
    expect(after.failure).toBe('invalid_grant: the refresh token was revoked');
  });

  it('a connection connected again gets a new generation and is no longer failed', async () => {
    const grant = await newGrant();
    await grants.fail(grant.connectionId, 'revoked');
    await grants.save({ ...grant, accessToken: 'access-new', refreshToken: 'refresh-new' });
    expect(await grants.find(grant.connectionId)).toMatchObject({ generation: 2, failure: null, accessToken: 'access-new' });
  });

  it('refuses to store a grant without a sealing key (409 providers_not_configured), and stores nothing', async () => {
    const connection = await createConnection(dataSource, { providerId: 'gusto' });
    const unkeyed = grantsOn(dataSource, null);
    const stored = unkeyed.save({ connectionId: connection.id, providerId: 'gusto', accountRef: 'c', accessToken: 'a', refreshToken: 'r', expiresAt: new Date() });
    await expect(stored).rejects.toMatchObject({ family: 'conflict_error', serviceCode: 'providers_not_configured' });
    expect(await grants.find(connection.id)).toBeUndefined();
  });
});
