import { loadConfig } from '../../config/app-config';
import { ManualClock } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';
import { ClientSecretCheck, StoredSecret, VERIFIED_SECRET_TTL_MS } from './client-secret-check';

/** Stands in for Argon2id: `hash:<secret>` matches `<secret>`; every verification is recorded and may be held. */
class FakeHasher {
  readonly verified: string[] = [];
  private held: (() => void)[] | undefined;

  hold(): void {
    this.held = [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const go of waiting) go();
  }

  async verify(hashed: string, secret: string): Promise<boolean> {
    this.verified.push(hashed);
    if (this.held) await new Promise<void>((go) => this.held!.push(go));
    return hashed === `hash:${secret}`;
  }

  async decoyHash(): Promise<string> {
    return 'decoy';
  }
}

const APP: StoredSecret = { id: '6f1d6a52-4b7e-4c39-9a3e-2f0c8d9b1e47', secretHash: 'hash:right-secret' };

/** Three failures per address, nine per client_id, in a one-minute window. */
function check() {
  const clock = new ManualClock('2026-07-02T15:00:00Z');
  const hasher = new FakeHasher();
  const config = loadConfig({ CLIENT_SECRET_MAX_FAILURES: '3', CLIENT_SECRET_LOCKOUT_SECONDS: '60' }, {}, { tool: true });
  return { clock, hasher, subject: new ClientSecretCheck(config, clock, hasher as unknown as SecretHasher) };
}

/** true / false, or the 429's message. */
async function outcome(promise: Promise<boolean>): Promise<boolean | string> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof DomainError) return error.message;
    throw error;
  }
}

describe('ClientSecretCheck', () => {
  it('verifies a right secret once, then remembers it until it goes unused for a day', async () => {
    const { clock, hasher, subject } = check();
    for (let i = 0; i < 5; i++) expect(await subject.matches(APP.id, 'right-secret', APP, '192.0.2.1')).toBe(true);
    expect(hasher.verified).toEqual(['hash:right-secret']);
    clock.advance(VERIFIED_SECRET_TTL_MS - 1);
    expect(await subject.matches(APP.id, 'right-secret', APP, '192.0.2.1')).toBe(true);
    clock.advance(VERIFIED_SECRET_TTL_MS + 1);
    expect(await subject.matches(APP.id, 'right-secret', APP, '192.0.2.1')).toBe(true);
    expect(hasher.verified).toHaveLength(2);
  });

  it('checks an unknown client_id against the decoy: one verification, never a match', async () => {
    const { hasher, subject } = check();
    expect(await subject.matches('no-such-client', 'right-secret', undefined, '192.0.2.1')).toBe(false);
    expect(await subject.matches(APP.id, 'wrong', APP, '192.0.2.2')).toBe(false);
    expect(hasher.verified).toEqual(['decoy', 'hash:right-secret']);
  });

  it('does not take a remembered secret once the stored hash has changed', async () => {
    const { subject } = check();
    expect(await subject.matches(APP.id, 'right-secret', APP, '192.0.2.1')).toBe(true);
    const rotated = { ...APP, secretHash: 'hash:new-secret' };
    expect(await subject.matches(APP.id, 'right-secret', rotated, '192.0.2.1')).toBe(false);
    expect(await subject.matches(APP.id, 'new-secret', rotated, '192.0.2.1')).toBe(true);
  });

  it('lets concurrent wrong secrets from one address through only up to the limit', async () => {
    const { hasher, subject } = check();
    hasher.hold();
    const attempts = Array.from({ length: 10 }, (_, i) => outcome(subject.matches(APP.id, `wrong-${i}`, APP, '192.0.2.1')));
    hasher.release();
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o === false)).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'Too many failed client authentications from this address; try again in 60 s')).toHaveLength(7);
    expect(hasher.verified).toHaveLength(3);
  });

  it('shares one verification among concurrent checks of one secret, and counts a right one as no failure', async () => {
    const { hasher, subject } = check();
    hasher.hold();
    const attempts = Array.from({ length: 3 }, () => subject.matches(APP.id, 'right-secret', APP, '192.0.2.1'));
    hasher.release();
    expect(await Promise.all(attempts)).toEqual([true, true, true]);
    expect(hasher.verified).toHaveLength(1);
    // The address has all its failures left.
    for (let i = 0; i < 3; i++) expect(await subject.matches(APP.id, `wrong-${i}`, APP, '192.0.2.1')).toBe(false);
    expect(await outcome(subject.matches(APP.id, 'wrong', APP, '192.0.2.1'))).toMatch(/from this address/);
  });

  it('limits a client_id across addresses, and without an address only by the client_id', async () => {
    const { clock, subject } = check();
    for (let i = 0; i < 9; i++) expect(await subject.matches(APP.id, 'wrong', APP, i % 2 ? undefined : `192.0.2.${i}`)).toBe(false);
    clock.advance(15_000);
    expect(await outcome(subject.matches(APP.id, 'right-secret', APP, undefined))).toBe(
      'Too many failed client authentications for this client_id; try again in 45 s',
    );
    expect(await outcome(subject.matches('other-client', 'wrong', undefined, undefined))).toBe(false);
    clock.advance(45_000);
    expect(await subject.matches(APP.id, 'right-secret', APP, '192.0.2.1')).toBe(true);
  });
});
