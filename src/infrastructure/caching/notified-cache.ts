import { LRUCache } from 'lru-cache';

export interface NotifiedCacheOptions<K, V> {
  /** Entries kept at most; the least recently used go first. */
  max: number;
  /** Longest an entry is kept when no change is heard: a bound, should a notification go missing. */
  ttlMs: number;
  /** In its last this-many ms, an entry in use is read again in the background: it never expires under its readers. */
  refreshAheadMs: number;
  /** Whether changes are heard now: entries answer only then, and reads fill the cache only then. */
  live: () => boolean;
  /** The value as stored. */
  read: (key: K) => Promise<V>;
  /** Whether a value read is kept (an unknown token is not: a new one must work at once); kept by default. */
  keeps?: (value: V) => boolean;
  /** Told of each value kept, and of each one gone (evicted, expired or forgotten): for indexes beside the cache. */
  onKept?: (key: K, value: V) => void;
  onGone?: (key: K, value: V) => void;
}

/**
 * Values read from the database and kept in memory while change notifications are live, each
 * dropped when a change to it is heard (`forget`). What makes it exact under concurrency: a
 * read that began before a change was heard does not fill the cache, and callers missing the
 * same key at once share one read, which a change also cuts loose (later callers read afresh).
 * An entry in steady use is re-read before it expires, so an expiry never sends every
 * concurrent reader to the database at the same moment.
 */
export class NotifiedCache<K extends NonNullable<unknown>, V> {
  // Boxed, so that null and undefined are values like any other.
  private readonly cache: LRUCache<K, { value: V }>;
  /** Reads under way, by key; dropped at every change heard, so no caller joins a read older than the change. */
  private readonly reading = new Map<K, Promise<V>>();
  private changes = 0;

  constructor(private readonly options: NotifiedCacheOptions<K, V>) {
    this.cache = new LRUCache<K, { value: V }>({
      max: options.max,
      ttl: options.ttlMs,
      // The clock read at each call, not the one lru-cache captured when it loaded: a test's fake clock moves it.
      perf: { now: () => performance.now() },
      ...(options.onGone && { dispose: (box: { value: V }, key: K) => options.onGone!(key, box.value) }),
    });
  }

  /** Changes heard so far: an answer built on reads made before a later count is stale. */
  get changeCount(): number {
    return this.changes;
  }

  /** The key's value when kept and changes are heard: `{ value }`, or undefined on a miss. */
  cached(key: K): { value: V } | undefined {
    if (!this.options.live()) return undefined;
    const hit = this.cache.get(key);
    if (hit && this.cache.getRemainingTTL(key) < this.options.refreshAheadMs) void this.read(key).catch(() => undefined);
    return hit;
  }

  async find(key: K): Promise<V> {
    const hit = this.cached(key);
    return hit ? hit.value : this.read(key);
  }

  /** A change heard: these keys are dropped, and no read under way fills the cache. */
  forget(keys: Iterable<K>): void {
    this.changes++;
    this.reading.clear();
    for (const key of keys) this.cache.delete(key);
  }

  /** Changes may have been missed (notifications were down): everything is dropped. */
  clear(): void {
    this.changes++;
    this.reading.clear();
    this.cache.clear();
  }

  private read(key: K): Promise<V> {
    const pending = this.reading.get(key);
    if (pending) return pending;
    const changes = this.changes;
    const read = this.options
      .read(key)
      .then((value) => {
        if (this.options.live() && changes === this.changes) {
          if (this.options.keeps?.(value) ?? true) {
            this.cache.set(key, { value });
            this.options.onKept?.(key, value);
          } else {
            this.cache.delete(key);
          }
        }
        return value;
      })
      .finally(() => {
        if (this.reading.get(key) === read) this.reading.delete(key);
      });
    this.reading.set(key, read);
    return read;
  }
}
