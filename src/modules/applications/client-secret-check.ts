import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError } from '../../domain/shared/domain-error';
import { Failures, FailureWindows } from '../../infrastructure/auth/failure-windows';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';

/** The stored side of a client secret: the application's id and the secret's hash. */
export interface StoredSecret {
  id: string;
  secretHash: string;
}

/** A client_id may fail this many times the per-address limit, from all addresses together. */
export const CLIENT_ID_LIMIT_FACTOR = 3;
/** Most addresses and client ids each failure table holds; beyond it the rest share one count. */
export const MAX_TRACKED = 10_000;
/** Secrets verified recently, remembered so that their next calls skip the slow hash. */
export const VERIFIED_SECRETS_KEPT = 10_000;
/** How long a verified secret is remembered without being used; every use renews it. */
export const VERIFIED_SECRET_TTL_MS = 24 * 3600 * 1000;

/**
 * Checks a client secret against its stored Argon2id hash, at a bounded cost:
 * - Failures are limited per client address and per client_id (CLIENT_SECRET_MAX_FAILURES, three
 *   times as many per client_id, in a window of CLIENT_SECRET_LOCKOUT_SECONDS from the first).
 *   Past either, the check is refused with 429 and Retry-After without hashing anything. Every
 *   client_id is counted, known or not, so a 429 tells nothing about which exist.
 * - A client_id that does not exist (a UUID nobody has, or not a UUID at all) is checked
 *   against a decoy hash made with the same parameters: the same one slow verification, so the
 *   answer takes as long as for a wrong secret of a real application.
 * - A secret verified once is remembered, as an HMAC under a key drawn per process, beside the
 *   stored hash it was verified against: its next calls cost a digest, not the slow hash, and
 *   are never refused. Rotating the secret changes the stored hash, so a remembered old secret
 *   no longer matches anything.
 * - An attempt is counted before its slow check and forgiven when it succeeds, so concurrent
 *   attempts cannot all pass under the limit; concurrent checks of the same secret share one
 *   verification.
 * Kept in memory, per instance, as the other limits are: they protect this instance's CPU, which
 * is also what they are measured in, and no check needs a database write.
 */
@Injectable()
export class ClientSecretCheck implements OnApplicationBootstrap {
  private readonly addresses: FailureWindows;
  private readonly clientIds: FailureWindows;
  private readonly verified: LRUCache<string, true>;
  /** Checks under way, by remembered-secret key: concurrent callers share one verification. */
  private readonly checking = new Map<string, Promise<boolean>>();
  private readonly rememberKey = randomBytes(32);

  constructor(
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly hasher: SecretHasher,
  ) {
    const windowMs = config.CLIENT_SECRET_LOCKOUT_SECONDS * 1000;
    this.addresses = new FailureWindows(windowMs, MAX_TRACKED, 'share-one-count');
    this.clientIds = new FailureWindows(windowMs, MAX_TRACKED, 'share-one-count');
    this.verified = new LRUCache<string, true>({
      max: VERIFIED_SECRETS_KEPT,
      ttl: VERIFIED_SECRET_TTL_MS,
      updateAgeOnGet: true,
      // The service's clock, read at every call (no cached reading), so a test can move it.
      perf: { now: () => clock.now().getTime() },
      ttlResolution: 0,
    });
  }

  /** Made at start, so the first unknown client_id is not the one that pays for the decoy. */
  async onApplicationBootstrap(): Promise<void> {
    await this.hasher.decoyHash();
  }

  /**
   * Whether `secret` is the secret of `stored` (undefined: no application has `clientId`).
   * `address`: the client's (clientAddressOf); without one only the client_id is limited.
   * Throws the 429 when the address or the client_id has used up its failures.
   */
  async matches(clientId: string, secret: string, stored: StoredSecret | undefined, address: string | undefined): Promise<boolean> {
    const remembered = this.rememberedKey(clientId, stored, secret);
    if (stored !== undefined && this.verified.get(remembered)) return true;
    const idKey = clientIdKey(clientId);
    const now = this.clock.now().getTime();
    this.assertAllowed(idKey, address, now);
    if (address !== undefined) this.addresses.fail(address, now);
    this.clientIds.fail(idKey, now);
    const ok = (await this.verifyOnce(remembered, stored, secret)) && stored !== undefined;
    if (ok) {
      const later = this.clock.now().getTime();
      if (address !== undefined) this.addresses.forgive(address, later);
      this.clientIds.forgive(idKey, later);
      this.verified.set(remembered, true);
    }
    return ok;
  }

  private assertAllowed(idKey: string, address: string | undefined, now: number): void {
    const max = this.config.CLIENT_SECRET_MAX_FAILURES;
    const byAddress = address === undefined ? undefined : this.addresses.of(address, now);
    if (byAddress && byAddress.count >= max) throw this.refused('from this address', this.addresses, byAddress, now);
    const byClientId = this.clientIds.of(idKey, now);
    if (byClientId && byClientId.count >= max * CLIENT_ID_LIMIT_FACTOR) throw this.refused('for this client_id', this.clientIds, byClientId, now);
  }

  private verifyOnce(remembered: string, stored: StoredSecret | undefined, secret: string): Promise<boolean> {
    let check = this.checking.get(remembered);
    if (!check) {
      check = (async () => this.hasher.verify(stored?.secretHash ?? (await this.hasher.decoyHash()), secret))().finally(() =>
        this.checking.delete(remembered),
      );
      this.checking.set(remembered, check);
    }
    return check;
  }

  /** The secret as remembered: an HMAC of it with the client_id and the hash it is checked against. */
  private rememberedKey(clientId: string, stored: StoredSecret | undefined, secret: string): string {
    // Each part's length first, so no two different triples read the same.
    const parts = [clientId, stored?.secretHash ?? '', secret];
    const hmac = createHmac('sha256', this.rememberKey);
    for (const part of parts) hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    return hmac.digest('base64url');
  }

  private refused(scope: string, table: FailureWindows, failures: Failures, now: number): DomainError {
    const retryAfterSeconds = table.secondsLeft(failures, now);
    return new DomainError('rate_limit_error', `Too many failed client authentications ${scope}; try again in ${retryAfterSeconds} s`, {
      serviceCode: 'too_many_failed_authentications',
      details: { retry_after: retryAfterSeconds },
    });
  }
}

/** Client ids are whatever a client sends; a digest keeps every key small. */
const clientIdKey = (clientId: string) => createHash('sha256').update(clientId, 'utf8').digest('base64url');
