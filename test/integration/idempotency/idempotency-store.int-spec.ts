import { DataSource } from 'typeorm';
import { AppConfig } from '../../../src/config/app-config';
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
  /** Each scope its own owner, unless a test shares one. */
  const holder = (scope: string, owner = `owner-of-${scope}`) => ({ scope, owner });
  const withLimits = (limits: Partial<AppConfig>) => new IdempotencyStore(dataSource, clock, Object.assign(new AppConfig(), limits));

  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource());
  });
  beforeEach(() => {
    clock = new ManualClock('2026-06-01T12:00:00Z');
    store = withLimits({});
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const rowCount = async (scope: string, key: string) =>
    Number((await dataSource.query(`SELECT count(*) AS n FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key]))[0].n);

  it('claims a new key once; the next claim sees it in flight, then answered', async () => {
    const key = freshKey();
    const first = await store.claim(holder('scope-a'), key, 'hash-1');
    expect(first.kind).toBe('claimed');
    expect(await store.claim(holder('scope-a'), key, 'hash-1')).toEqual({ kind: 'in_flight', requestHash: 'hash-1' });
    await store.complete(holder('scope-a'), key, (first as { attempt: string }).attempt, { statusCode: 201, body: '{"b":1,"a":2}' });
    expect(await store.claim(holder('scope-a'), key, 'hash-2')).toEqual({
      kind: 'answered',
      requestHash: 'hash-1',
      answer: { statusCode: 201, body: '{"b":1,"a":2}', notKept: null },
    });
  });

  it('keeps keys apart per scope', async () => {
    const key = freshKey();
    expect((await store.claim(holder('scope-a'), key, 'h')).kind).toBe('claimed');
    expect((await store.claim(holder('scope-b'), key, 'h')).kind).toBe('claimed');
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const key = freshKey();
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claim(holder('scope-a'), key, 'h')));
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'in_flight')).toHaveLength(7);
  });

  it('release frees the key for a retry', async () => {
    const key = freshKey();
    const first = (await store.claim(holder('scope-a'), key, 'h')) as { attempt: string };
    await store.release('scope-a', key, first.attempt);
    expect(await rowCount('scope-a', key)).toBe(0);
    expect((await store.claim(holder('scope-a'), key, 'h')).kind).toBe('claimed');
  });

  it('treats an answer older than 24 h as absent and replaces it', async () => {
    const key = freshKey();
    const first = (await store.claim(holder('scope-a'), key, 'h1')) as { attempt: string };
    await store.complete(holder('scope-a'), key, first.attempt, { statusCode: 200, body: '{}' });
    clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    expect((await store.claim(holder('scope-a'), key, 'h2')).kind).toBe('answered');
    clock.advance(1000);
    expect((await store.claim(holder('scope-a'), key, 'h2')).kind).toBe('claimed');
    expect(await rowCount('scope-a', key)).toBe(1);
  });

  it('takes over a request abandoned in flight, and the old owner can no longer write', async () => {
    const key = freshKey();
    const abandoned = (await store.claim(holder('scope-a'), key, 'h')) as { attempt: string };
    clock.advance(IN_FLIGHT_TIMEOUT_MS - 1000);
    expect((await store.claim(holder('scope-a'), key, 'h')).kind).toBe('in_flight');
    clock.advance(1000);
    const retry = (await store.claim(holder('scope-a'), key, 'h')) as { kind: string; attempt: string };
    expect(retry.kind).toBe('claimed');
    await store.complete(holder('scope-a'), key, abandoned.attempt, { statusCode: 500, body: 'late' });
    await store.release('scope-a', key, abandoned.attempt);
    expect(await store.claim(holder('scope-a'), key, 'h')).toEqual({ kind: 'in_flight', requestHash: 'h' });
    await store.complete(holder('scope-a'), key, retry.attempt, { statusCode: 201, body: '{"ok":true}' });
    expect(await store.claim(holder('scope-a'), key, 'h')).toMatchObject({ kind: 'answered', answer: { statusCode: 201 } });
  });

  it('sweeps expired rows away', async () => {
    const old = freshKey();
    const recent = freshKey();
    await store.claim(holder('scope-sweep'), old, 'h');
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    await store.claim(holder('scope-sweep'), recent, 'h');
    clock.advance(IDEMPOTENCY_TTL_MS / 2);
    expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await rowCount('scope-sweep', old)).toBe(0);
    expect(await rowCount('scope-sweep', recent)).toBe(1);
  });

  describe('what one owner may keep (issue 38, finding 7)', () => {
    const keptOf = async (scope: string, key: string) =>
      (await dataSource.query(`SELECT response_body, response_not_kept FROM idempotency_keys WHERE scope = $1 AND key = $2`, [scope, key]))[0];
    const answered = async (bounded: IdempotencyStore, who: { scope: string; owner: string }, key: string, body: string) => {
      const claim = await bounded.claim(who, key, 'h');
      if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
      await bounded.complete(who, key, claim.attempt, { statusCode: 200, body });
    };

    it('keeps only the outcome of an answer over IDEMPOTENCY_MAX_ANSWER_BYTES, and charges nothing for it', async () => {
      const bounded = withLimits({ IDEMPOTENCY_MAX_ANSWER_BYTES: 1024 });
      const who = holder('scope-large');
      const key = freshKey();
      await answered(bounded, who, key, 'x'.repeat(1025));
      expect(await keptOf(who.scope, key)).toEqual({ response_body: null, response_not_kept: expect.stringMatching(/1025 bytes.*larger than the 1024 bytes/) });
      expect(await bounded.claim(who, key, 'h')).toMatchObject({ kind: 'answered', answer: { statusCode: 200, body: null, notKept: expect.any(String) } });
      const [allowance] = await dataSource.query(`SELECT keys, answer_bytes FROM idempotency_allowances WHERE owner = $1`, [who.owner]);
      expect(allowance).toEqual({ keys: 1, answer_bytes: '0' });
    });

    it('shares one allowance of answer bytes between the scopes of one owner', async () => {
      const bounded = withLimits({ IDEMPOTENCY_ANSWER_BYTES_PER_APPLICATION: 2048 });
      const [a, b] = [holder('scope-c1', 'application:shared'), holder('scope-c2', 'application:shared')];
      const keys = [freshKey(), freshKey(), freshKey()];
      await answered(bounded, a, keys[0], 'x'.repeat(1000));
      await answered(bounded, b, keys[1], 'y'.repeat(1000));
      await answered(bounded, a, keys[2], 'z'.repeat(100));
      expect((await keptOf(a.scope, keys[0])).response_body).toHaveLength(1000);
      expect((await keptOf(b.scope, keys[1])).response_body).toHaveLength(1000);
      expect(await keptOf(a.scope, keys[2])).toEqual({ response_body: null, response_not_kept: expect.stringMatching(/2048 bytes of answers/) });
      // Another owner is not held back.
      const other = holder('scope-c3');
      const key = freshKey();
      await answered(bounded, other, key, 'w'.repeat(1000));
      expect((await keptOf(other.scope, key)).response_body).toHaveLength(1000);
    });

    it('refuses a new key past IDEMPOTENCY_KEYS_PER_APPLICATION until the owner’s day is over, and still answers its taken keys', async () => {
      const bounded = withLimits({ IDEMPOTENCY_KEYS_PER_APPLICATION: 2 });
      const who = holder('scope-keys');
      const [first, second] = [freshKey(), freshKey()];
      await answered(bounded, who, first, '{}');
      clock.advance(60_000);
      await answered(bounded, who, second, '{}');
      expect(await bounded.claim(who, freshKey(), 'h')).toEqual({ kind: 'exhausted', keysPerOwner: 2, retryAfterSeconds: IDEMPOTENCY_TTL_MS / 1000 - 60 });
      expect((await bounded.claim(who, second, 'h')).kind).toBe('answered');
      // An expired key cannot be taken over either while the day's keys are taken ...
      clock.advance(IDEMPOTENCY_TTL_MS - 60_000 - 1000);
      expect((await bounded.claim(who, freshKey(), 'h')).kind).toBe('exhausted');
      // ... and a new day starts a new count.
      clock.advance(1000);
      expect((await bounded.claim(who, freshKey(), 'h')).kind).toBe('claimed');
      expect((await bounded.claim(who, first, 'h2')).kind).toBe('claimed');
      expect((await bounded.claim(who, freshKey(), 'h')).kind).toBe('exhausted');
    });
  });
});
