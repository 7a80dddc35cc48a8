import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock, SystemClock } from '../../../domain/shared/clock';
import { DomainError } from '../../../domain/shared/domain-error';
import { SealingKey } from '../../secrets/sealing-key';
import { SecretBox } from '../../webhooks/secret-box';
import { GustoApiError, GustoHttp, GustoMethod, GustoQuery, GustoResponse, GustoUnauthorized, GustoUnprocessable } from './gusto-http';
import { GUSTO_SUBSCRIPTION_TYPES } from './gusto-webhooks';

/**
 * The application's side of Gusto's webhooks: the system access token its calls take, the
 * subscription at Gusto, and the verification handshake.
 *   system access tokens: https://docs.gusto.com/app-integrations/docs/api-tokens
 *   webhooks:             https://docs.gusto.com/app-integrations/docs/webhooks
 */

/** Renew a system token this long before it expires. */
const SYSTEM_TOKEN_LEAD_MS = 5 * 60_000;
/** The rate-limit key of application-level calls (not any company's grant). */
const SYSTEM_KEY = 'gusto-system';
/** How often a pending subscription's token is asked for again while none verifies it. */
const TOKEN_ASK_INTERVAL_MS = 10 * 60_000;
/** Handshake tokens kept for pairing with pending subscriptions: a stranger posting tokens fills no table. */
const KEPT_TOKENS = 20;
const TOKEN_RETENTION = '1 day';

export interface GustoApplicationCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * System access tokens (grant_type `system_access` at /oauth/token, the document's "System Access
 * Token Request"): what webhook subscriptions and the events feed take. They last two hours, and
 * Gusto allows several live at once, so each instance keeps its own in memory (nothing stored,
 * no coordination needed) and asks for another shortly before it expires or when Gusto answers 401.
 */
export class GustoSystemTokens {
  private current: { token: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly http: GustoHttp,
    private readonly credentials: GustoApplicationCredentials | undefined,
    private readonly clock: Clock = new SystemClock(),
  ) {}

  get configured(): boolean {
    return this.credentials !== undefined;
  }

  async token(): Promise<string> {
    if (this.current && this.clock.now().getTime() < this.current.renewAt) return this.current.token;
    // Callers that find it due together share one request, which no one caller's signal may abort.
    this.pending ??= this.issue().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Gusto refused the token (401): the next call asks for a new one. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  /** A call with the system token; on a 401 once more with a new one. */
  async call<T>(method: GustoMethod, path: string, options: { body?: unknown; query?: GustoQuery; signal?: AbortSignal } = {}): Promise<GustoResponse<T>> {
    const send = async () => {
      const accessToken = await this.token();
      try {
        return await this.http.request<T>({ method, path, body: options.body, query: options.query, accessToken, key: SYSTEM_KEY, signal: options.signal });
      } catch (error) {
        if (error instanceof GustoUnauthorized) this.invalidate(accessToken);
        throw error;
      }
    };
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof GustoUnauthorized)) throw error;
      return send();
    }
  }

  private async issue(): Promise<string> {
    const credentials = this.credentials;
    if (!credentials) {
      throw new DomainError('conflict_error', 'Gusto is not configured on this service: set GUSTO_CLIENT_ID and GUSTO_CLIENT_SECRET', {
        serviceCode: 'providers_not_configured',
      });
    }
    const requestedAt = this.clock.now().getTime();
    const { body } = await this.http.request<{ access_token?: unknown; expires_in?: unknown }>({
      method: 'POST',
      path: '/oauth/token',
      body: { client_id: credentials.clientId, client_secret: credentials.clientSecret, grant_type: 'system_access' },
      key: `oauth-token:${credentials.clientId}`,
    });
    const expiresIn = typeof body?.expires_in === 'string' ? Number(body.expires_in) : body?.expires_in;
    if (typeof body?.access_token !== 'string' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      throw new GustoApiError('provider_error', 'Gusto answered the system access token request without access_token or expires_in', { status: 200, attempts: 1 });
    }
    // Counted from before the request: errs early, never late.
    const renewAt = requestedAt + Math.max(expiresIn * 1000 - SYSTEM_TOKEN_LEAD_MS, (expiresIn * 1000) / 2);
    this.current = { token: body.access_token, renewAt };
    return body.access_token;
  }
}

/** Gusto's `Webhook-Subscription`. */
interface SubscriptionAnswer {
  uuid?: unknown;
  url?: unknown;
  status?: unknown;
  subscription_types?: unknown;
}

export interface StoredSubscription {
  uuid: string;
  url: string;
  subscriptionTypes: string[];
  status: 'pending' | 'verified' | 'removed';
}

interface SubscriptionRow {
  uuid: string;
  url: string;
  subscription_types: string[];
  status: StoredSubscription['status'];
}

/**
 * The application's webhook subscription at Gusto, and the handshake that verifies it:
 *   1. `ensure(url)` subscribes the URL (POST /v1/webhook_subscriptions), unless Gusto already
 *      has a subscription for it: a create is never sent blindly twice, it is looked up first;
 *   2. Gusto POSTs `{"verification_token"}` to the URL, unsigned: `receiveVerificationToken`
 *      keeps it sealed (the POST may come before the create's answer, so tokens are kept apart
 *      from subscriptions and paired later);
 *   3. `verifyPending` sends each kept token to each pending subscription
 *      (PUT /v1/webhook_subscriptions/{uuid}/verify); the one Gusto accepts becomes the
 *      subscription's verification token, the key every delivery is signed with. A token Gusto
 *      refuses (someone else's guess) is dropped: only Gusto decides which token is real.
 */
export class GustoWebhookSubscriptions {

  /** When this instance last asked Gusto to POST a pending subscription's token again, by uuid. */
  private readonly tokenAskedAt = new Map<string, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly sealingKey: SealingKey,
    private readonly tokens: GustoSystemTokens,
  ) {}

  /** The subscription of `url`: the one stored, else Gusto's for the URL adopted, else a new one; then verified if a token waits. */
  async ensure(url: string, types: readonly string[] = GUSTO_SUBSCRIPTION_TYPES, signal?: AbortSignal): Promise<StoredSubscription> {
    const [stored] = await this.rows(`WHERE url = $1 AND status <> 'removed' ORDER BY created_at DESC LIMIT 1`, [url]);
    if (stored) {
      if (stored.status === 'pending') {
        await this.verifyPending(signal);
        if ((await this.find(stored.uuid))?.status === 'pending') await this.askTokenAgain(stored.uuid, signal);
      }
      return (await this.find(stored.uuid)) ?? stored;
    }
    const { body: listed } = await this.tokens.call<SubscriptionAnswer[]>('GET', '/v1/webhook_subscriptions', { signal });
    const existing = (Array.isArray(listed) ? listed : []).map(toSubscription).find((s) => s?.url === url && s.status !== 'removed');
    const subscription =
      existing ?? toSubscription((await this.tokens.call<SubscriptionAnswer>('POST', '/v1/webhook_subscriptions', { body: { url, subscription_types: [...types] }, signal })).body);
    if (!subscription) throw new GustoApiError('provider_error', 'Gusto answered the webhook subscription without uuid or url', { status: 201, attempts: 1 });
    // Verified at Gusto is verified here only with its token: until then deliveries cannot be checked.
    await this.dataSource.query(
      `INSERT INTO gusto_webhook_subscriptions (uuid, url, subscription_types, status) VALUES ($1, $2, $3, 'pending')
       ON CONFLICT (uuid) DO NOTHING`,
      [subscription.uuid, subscription.url, subscription.subscriptionTypes],
    );
    await this.verifyPending(signal);
    return (await this.find(subscription.uuid)) as StoredSubscription;
  }

  /**
   * The handshake: Gusto POSTs a subscription's verification token to its URL. Kept sealed,
   * whichever subscription it is for (it says none), until verifyPending pairs it; only the
   * newest few and those of the last day are kept.
   */
  async receiveVerificationToken(token: string): Promise<void> {
    const digest = createHash('sha256').update(token).digest('hex');
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO gusto_webhook_verification_tokens (token_digest, token_sealed) VALUES ($1, $2)
         ON CONFLICT (token_digest) DO UPDATE SET received_at = now()`,
        [digest, this.box().seal(token)],
      );
      await manager.query(
        `DELETE FROM gusto_webhook_verification_tokens
         WHERE received_at < now() - interval '${TOKEN_RETENTION}'
            OR token_digest NOT IN (SELECT token_digest FROM gusto_webhook_verification_tokens ORDER BY received_at DESC LIMIT ${KEPT_TOKENS})`,
      );
    });
  }

  /**
   * Tries the kept tokens on the pending subscriptions; answers how many were verified. A
   * token Gusto refuses for every pending subscription is dropped. Safe to run on several
   * instances at once: verifying twice with the right token changes nothing.
   */
  async verifyPending(signal?: AbortSignal): Promise<number> {
    const pending = await this.rows(`WHERE status = 'pending' ORDER BY created_at`);
    if (pending.length === 0) return 0;
    const kept: { token_digest: string; token_sealed: string }[] = await this.dataSource.query(
      `SELECT token_digest, token_sealed FROM gusto_webhook_verification_tokens ORDER BY received_at DESC`,
    );
    if (kept.length === 0) return 0;
    const refusedBy = new Map<string, number>();
    let verified = 0;
    for (const subscription of pending) {
      for (const candidate of kept) {
        if (refusedBy.get(candidate.token_digest) === -1) continue;
        const outcome = await this.verify(subscription.uuid, this.box().open(candidate.token_sealed), signal);
        if (outcome === 'refused') {
          refusedBy.set(candidate.token_digest, (refusedBy.get(candidate.token_digest) ?? 0) + 1);
          continue;
        }
        if (outcome === 'verified') {
          await this.dataSource.transaction(async (manager) => {
            await manager.query(
              `UPDATE gusto_webhook_subscriptions SET status = 'verified', verification_token_sealed = $2, verified_at = now(), updated_at = now()
               WHERE uuid = $1`,
              [subscription.uuid, candidate.token_sealed],
            );
            await manager.query(`DELETE FROM gusto_webhook_verification_tokens WHERE token_digest = $1`, [candidate.token_digest]);
          });
          refusedBy.set(candidate.token_digest, -1);
          verified++;
        }
        // Verified, or gone at Gusto: this subscription is settled either way.
        break;
      }
    }
    const refusedByAll = [...refusedBy].filter(([, count]) => count >= pending.length).map(([digest]) => digest);
    if (refusedByAll.length > 0) await this.dataSource.query(`DELETE FROM gusto_webhook_verification_tokens WHERE token_digest = ANY ($1)`, [refusedByAll]);
    return verified;
  }

  /** The tokens deliveries may be signed with: those of the verified subscriptions. */
  async verificationTokens(): Promise<string[]> {
    const rows: { verification_token_sealed: string }[] = await this.dataSource.query(
      `SELECT verification_token_sealed FROM gusto_webhook_subscriptions WHERE status = 'verified'`,
    );
    return rows.map((row) => this.box().open(row.verification_token_sealed));
  }

  /** Whether Gusto delivers events to this service at all: without, the events feed is the only source. */
  async hasVerified(): Promise<boolean> {
    const [row]: { verified: boolean }[] = await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM gusto_webhook_subscriptions WHERE status = 'verified') AS verified`,
    );
    return row.verified;
  }

  async find(uuid: string): Promise<StoredSubscription | undefined> {
    const [row] = await this.rows(`WHERE uuid = $1`, [uuid]);
    return row;
  }

  /**
   * A subscription still pending with no token kept that verifies it: its handshake POST was lost
   * (the service down or unreachable then, or the token gone from the few kept). Gusto is asked to
   * POST it again (GET …/request_verification_token); the next round verifies with it. At most once
   * every TOKEN_ASK_INTERVAL_MS per subscription and instance; a subscription Gusto no longer has is
   * marked removed, so the next round subscribes anew.
   */
  private async askTokenAgain(uuid: string, signal?: AbortSignal): Promise<void> {
    const now = Date.now();
    if (now - (this.tokenAskedAt.get(uuid) ?? -Infinity) < TOKEN_ASK_INTERVAL_MS) return;
    this.tokenAskedAt.set(uuid, now);
    try {
      await this.tokens.call('GET', `/v1/webhook_subscriptions/${encodeURIComponent(uuid)}/request_verification_token`, { signal });
    } catch (error) {
      if (!(error instanceof GustoApiError && error.status === 404)) throw error;
      await this.markRemoved(uuid);
    }
  }

  /** Gusto no longer has the subscription (404): the next round subscribes anew. */
  private async markRemoved(uuid: string): Promise<void> {
    await this.dataSource.query(`UPDATE gusto_webhook_subscriptions SET status = 'removed', updated_at = now() WHERE uuid = $1`, [uuid]);
  }

  private async verify(uuid: string, token: string, signal?: AbortSignal): Promise<'verified' | 'refused' | 'removed'> {
    try {
      await this.tokens.call('PUT', `/v1/webhook_subscriptions/${encodeURIComponent(uuid)}/verify`, { body: { verification_token: token }, signal });
      return 'verified';
    } catch (error) {
      // 422: not this subscription's token.
      if (error instanceof GustoUnprocessable) return 'refused';
      if (error instanceof GustoApiError && error.status === 404) {
        await this.markRemoved(uuid);
        return 'removed';
      }
      throw error;
    }
  }

  private async rows(where: string, params: unknown[] = []): Promise<StoredSubscription[]> {
    const rows: SubscriptionRow[] = await this.dataSource.query(`SELECT uuid, url, subscription_types, status FROM gusto_webhook_subscriptions ${where}`, params);
    return rows.map((row) => ({ uuid: row.uuid, url: row.url, subscriptionTypes: row.subscription_types, status: row.status }));
  }

  private box(): SecretBox {
    return this.sealingKey.requireBox('gusto-webhook-verification-tokens', {
      message: 'Gusto webhooks need WEBHOOK_SECRETS_KEY (the key that encrypts stored secrets; every instance shares it)',
      serviceCode: 'providers_not_configured',
    });
  }

}

function toSubscription(answer: SubscriptionAnswer | undefined): StoredSubscription | undefined {
  if (!answer || typeof answer.uuid !== 'string' || typeof answer.url !== 'string') return undefined;
  const status = answer.status === 'verified' || answer.status === 'removed' ? answer.status : 'pending';
  const types = Array.isArray(answer.subscription_types) ? answer.subscription_types.filter((t): t is string => typeof t === 'string') : [];
  return { uuid: answer.uuid, url: answer.url, subscriptionTypes: types, status };
}
