import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../../domain/shared/domain-error';

/**
 * What the connect page carries from one step to the next. It travels in a hidden form field,
 * signed, so the browser can hold it but not change it: the provider, the entities the
 * sign-in found and the state the application sent cannot be forged. The password never
 * enters it; after sign-in only the entity names the sandbox returned are kept.
 */
export interface FlowState {
  sessionId: string;
  /** The application's `state`, returned unchanged. */
  state: string | null;
  /** The registered origin the embedded flow posts its result to, settled at the first step; null for a redirect flow. */
  origin: string | null;
  providerId?: string;
  authMethod?: string;
  /** Entities of the employer account signed in to; present once sign-in succeeded. */
  entityNames?: string[];
  /**
   * A real provider's OAuth step (GustoOAuthStep): the id of the tokens it keeps server-side,
   * sealed, until Allow or Deny. The tokens themselves never enter the page.
   */
  pendingGrant?: string;
  /** Milliseconds since the epoch. */
  issuedAt: number;
}

/** A step's form is good for this long; the session's own expiry is checked on every step too. */
export const FLOW_STATE_TTL_MS = 60 * 60_000;

export const invalidFlowState = () =>
  new DomainError('bad_request_error', 'This page was changed or is too old to continue. Open the connect link again to start over.', {
    serviceCode: 'invalid_flow_state',
  });

/**
 * Signs and verifies FlowState with HMAC-SHA256. The key comes from
 * CONNECT_PAGE_SIGNING_KEY so instances behind one address accept each other's pages; without
 * it the key is random per process, and a restart only sends people in the middle of a step
 * back to the start of the link. Provided with a factory in the module, since its
 * constructor takes plain values.
 */
export class FlowStateSigner {
  private readonly key: Buffer;

  constructor(key: Buffer = randomBytes(32), private readonly now: () => number = Date.now) {
    this.key = key;
  }

  /** A signer keyed by a configured secret (any length ≥ 32), else by a random key. */
  static fromSecret(secret: string | undefined): FlowStateSigner {
    return new FlowStateSigner(secret === undefined ? randomBytes(32) : createHash('sha256').update(secret).digest());
  }

  sign(state: Omit<FlowState, 'issuedAt'>): string {
    const payload = Buffer.from(JSON.stringify({ ...state, issuedAt: this.now() })).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The state the token was signed with, or 400 `invalid_flow_state` if it was altered or is stale. */
  verify(token: unknown): FlowState {
    if (typeof token !== 'string' || token.length > 20_000) throw invalidFlowState();
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) throw invalidFlowState();
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidFlowState();
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as FlowState;
    const age = this.now() - state.issuedAt;
    if (!(age >= 0 && age <= FLOW_STATE_TTL_MS)) throw invalidFlowState();
    return state;
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
