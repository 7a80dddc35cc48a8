import { DataSource } from 'typeorm';
import { ManualClock } from '../../../src/domain/shared/clock';
import { IDEMPOTENCY_TTL_MS, IN_FLIGHT_TIMEOUT_MS } from '../../../src/infrastructure/http/idempotency/idempotency-key';
import { IdempotencyStore } from '../../../src/infrastructure/http/idempotency/idempotency.store';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

describeWithPostgres('IdempotencyStore on PostgreSQL', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  let clock: ManualClock;
  let store: IdempotencyStore;
  let n = 0;
  const freshKey = () => `key-${++n}`;

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
  });
  beforeEach(() => {
    clock = new ManualClock('2026-06-01T12:00:00Z');
    store = new IdempotencyStore(dataSource, clock);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const rowCount = async (scope: string, key: string) =>
    Number((await dataSource.query(`SELECT count(*) AS n FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key]))[0].n);

  it('claims a new key once; the next claim sees it in flight, then answered', async () => {
    const key = freshKey();
    const first = await store.claim('scope-a', key, 'hash-1');
    expect(first.kind).toBe('claimed');
    expect(await store.claim('scope-a', key, 'hash-1')).toEqual({ kind: 'in_flight', requestHash: 'hash-1' });
    await store.complete('scope-a', key, (first as { attempt: string }).attempt, { statusCode: 201, body: '{"b":1,"a":2}' });
    expect(await store.claim('scope-a', key, 'hash-2')).toEqual({
      kind: 'answered',
      requestHash: 'hash-1',
      answer: { statusCode: 201, body: '{"b":1,"a":2}' },
    });
  });

  it('keeps keys apart per scope', async () => {
    const key = freshKey();
    expect((await store.claim('scope-a', key, 'h')).kind).toBe('claimed');
    expect((await store.claim('scope-b', key, 'h')).kind).toBe('claimed');
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const key = freshKey();
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claim('scope-a', key, 'h')));
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'in_flight')).toHaveLength(7);
  });

  it('release frees the key for a retry', async () => {
    const key = freshKey();
    const first = (await store.claim('scope-a', key, 'h')) as { attempt: string };
    await store.release('scope-a', key, first.attempt);
    expect(await rowCount('scope-a', key)).toBe(0);
    expect((await store.claim('scope-a', key, 'h')).kind).toBe('claimed');
  });

  it('treats an answer older than 24 h as absent and replaces it', async () => {
    const key = freshKey();
    const first = (await store.claim('scope-a', key, 'h1')) as { attempt: string };
    await store.complete('scope-a', key, first.attempt, { statusCode: 200, body: '{}' });
    clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    expect((await store.claim('scope-a', key, 'h2')).kind).toBe('answered');
    clock.advance(1000);
    expect((await store.claim('scope-a', key, 'h2')).kind).toBe('claimed');
    expect(await rowCount('scope-a', key)).toBe(1);
  });

  it('takes over a request abandoned in flight, and the old owner can no longer write', async () => {
    const key = freshKey();
    const abandoned = (await store.claim('scope-a', key, 'h')) as { attempt: string };
    clock.advance(IN_FLIGHT_TIMEOUT_MS - 1000);
    expect((await store.claim('scope-a', key, 'h')).kind).toBe('in_flight');
    clock.advance(1000);
    const retry = (await store.claim('scope-a', key, 'h')) as { kind: string; attempt: string };
    expect(retry.kind).toBe('claimed');
    await store.complete('scope-a', key, abandoned.attempt, { statusCode: 500, body: 'late' });
    await store.release('scope-a', key, abandoned.attempt);
    expect(await store.claim('scope-a', key, 'h')).toEqual({ kind: 'in_flight', requestHash: 'h' });
    await store.complete('scope-a', key, retry.attempt, { statusCode: 201, body: '{"ok":true}' });
    expect(await store.claim('scope-a', key, 'h')).toMatchObject({ kind: 'answered', answer: { statusCode: 201 } });
  });

  it('sweeps expired rows away', async () => {
    const old = freshKey();
    const recent = freshKey();
    await store.claim('scope-sweep', old, 'h');
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    await store.claim('scope-sweep', recent, 'h');
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await rowCount('scope-sweep', old)).toBe(0);
    expect(await rowCount('scope-sweep', recent)).toBe(1);
  });
});
