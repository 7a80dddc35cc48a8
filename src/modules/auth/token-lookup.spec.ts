import { Connection, Principal } from '../../domain/connections/connection';
import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { TOKEN_CACHE_TTL_MS, TokenLookup } from './token-lookup';

/** A notifications double: live, and changes are heard when the test says so. */
class HeardChanges {
  live = true;
  private readonly listeners: ((payload: string) => void)[] = [];
  on(_channel: string, listener: (payload: string) => void): void {
    this.listeners.push(listener);
  }
  onReset(): void {}
  hear(connectionId: string): void {
    for (const listener of this.listeners) listener(connectionId);
  }
}

/** The repository's token read, answered by the test one call at a time. */
class TokenReads {
  calls = 0;
  private pending: ((found: Principal | undefined) => void)[] = [];
  findByTokenDigest(): Promise<Principal | undefined> {
    this.calls++;
    return new Promise((resolve) => this.pending.push(resolve));
  }
  /** Answers every read under way. */
  answer(found: Principal | undefined): void {
    for (const resolve of this.pending.splice(0)) resolve(found);
  }
  /** Answers the oldest read under way. */
  answerOldest(found: Principal | undefined): void {
    this.pending.shift()?.(found);
  }
}

const principal = (connectionId: string): Principal => ({ tokenId: 't1', connection: { id: connectionId } as Connection });
const settle = () => new Promise<void>((resolve) => jest.requireActual<typeof import('timers')>('timers').setImmediate(resolve));

describe('TokenLookup', () => {
  let reads: TokenReads;
  let changes: HeardChanges;
  let lookup: TokenLookup;

  beforeEach(() => {
    jest.useFakeTimers();
    // lru-cache reads a start time of 0 as "no time-to-live": the fake clock starts past it.
    jest.advanceTimersByTime(1_000);
    reads = new TokenReads();
    changes = new HeardChanges();
    lookup = new TokenLookup(reads as unknown as ConnectionsRepository, changes as unknown as ChangeNotifications);
  });
  afterEach(() => jest.useRealTimers());

  it('a refresh that finds the token gone drops it', async () => {
    const first = lookup.find('d');
    reads.answer(principal('c1'));
    await first;
    jest.advanceTimersByTime(TOKEN_CACHE_TTL_MS - 1_000);
    expect(lookup.cached('d')).toBeDefined();
    reads.answer(undefined);
    await settle();
    expect(lookup.cached('d')).toBeUndefined();
  });

  it('after a change is heard, no caller joins a read that began before it, and that read is not kept', async () => {
    const before = lookup.find('d');
    changes.hear('c1');
    const after = lookup.find('d');
    expect(reads.calls).toBe(2);
    reads.answerOldest(principal('as before'));
    expect(await before).toEqual(principal('as before'));
    expect(lookup.cached('d')).toBeUndefined();
    reads.answerOldest(principal('c1'));
    expect(await after).toEqual(principal('c1'));
    expect(lookup.cached('d')).toEqual(principal('c1'));
    changes.hear('c1');
    expect(lookup.cached('d')).toBeUndefined();
  });

  it('answers nothing from memory while notifications are down', async () => {
    const first = lookup.find('d');
    reads.answer(principal('c1'));
    await first;
    changes.live = false;
    expect(lookup.cached('d')).toBeUndefined();
  });
});
