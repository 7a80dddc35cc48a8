import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Product } from '../../domain/providers/provider';

/** A synced read's answer as sent, and what a request needs to be given it. */
export interface CachedAnswer {
  /** The answer's bytes (UTF-8): sent as they are, with nothing to encode or measure. */
  body: Buffer;
  etag: string;
  /** The product the read requires: a token must still hold it to be given the answer. */
  product: Product;
  /** The route it was answered by, as the HTTP metrics name it. */
  route: string;
}

/**
 * Synced read answers by key (entity, sync generation, request), bounded by their bytes, least
 * recently used out first. A key names a generation, so an answer never goes stale: once the
 * entity's generation switches, nothing asks for the old keys and they age out.
 */
export class ResponseCache {
  private readonly answers: LRUCache<string, CachedAnswer> | undefined;

  constructor(maxBytes: number) {
    this.answers =
      maxBytes > 0
        ? new LRUCache<string, CachedAnswer>({ maxSize: maxBytes, sizeCalculation: (answer, key) => answer.body.length + key.length * 2 + 200 })
        : undefined;
  }

  get(key: string): CachedAnswer | undefined {
    return this.answers?.get(key);
  }

  set(key: string, answer: CachedAnswer): void {
    // An answer larger than the whole cache is not kept (lru-cache would refuse it anyway).
    this.answers?.set(key, answer);
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.answers?.size ?? 0, bytes: this.answers?.calculatedSize ?? 0 };
  }
}

/** A strong validator of the bytes sent: equal bodies, equal tags, whichever instance sent them. */
export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** Whether `If-None-Match` names this tag (`*`, a list, weak or strong forms: weak comparison, RFC 9110 §13.1.2). */
export function ifNoneMatchHolds(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}
