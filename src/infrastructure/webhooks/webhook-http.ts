import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { toStorableText } from '../../domain/shared/hostile-input';
import { addressRefusal } from './webhook-address';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookSendPolicy {
  /** The whole exchange: waiting for a socket, DNS, connect, TLS, the answer and its body. */
  timeoutMs: number;
  /** The response body is read up to this many bytes, then the socket is destroyed. */
  maxResponseBytes: number;
  /** Sandbox applications may send to loopback. */
  allowLoopback: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_ADDRESSES: private, unique-local, link-local and CGNAT receivers. */
  allowPrivate: boolean;
}

export type WebhookOutcome = 'delivered' | 'retry' | 'stop';

export interface WebhookResponse {
  /** Null when no HTTP answer came (refused, timed out, blocked address, TLS error…). */
  statusCode: number | null;
  latencyMs: number;
  /** The first maxResponseBytes of the body as text, ready to store (see toStorableText). */
  excerpt: string;
  /**
   * Why no answer came; or, beside a status code, why its body was cut short (timeout, reset).
   * Null when the exchange completed.
   */
  error: string | null;
  outcome: WebhookOutcome;
}

export const WEBHOOK_USER_AGENT = 'benefits-orchestrator-webhooks/1';

/**
 * What an answer means for the delivery: 2xx delivered; 408 and 429 say "later"; any other 4xx
 * is the receiver refusing this message for good. Redirects are not followed, so a 3xx, like
 * a 5xx or no answer at all, is retried.
 */
export function outcomeOf(statusCode: number | null): WebhookOutcome {
  if (statusCode === null) return 'retry';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 408 || statusCode === 429) return 'retry';
  if (statusCode >= 400 && statusCode < 500) return 'stop';
  return 'retry';
}

/**
 * POSTs one webhook. Never throws and never follows a redirect. Every address it connects to
 * passes `addressRefusal` (webhook-address.ts, the rule saved URLs pass too): IP literals before
 * the request, names at connect time through the agent's `lookup`, so a DNS answer that changes
 * after a check cannot slip a private address in.
 */
export async function sendWebhook(request: WebhookRequest, policy: WebhookSendPolicy): Promise<WebhookResponse> {
  const started = performance.now();
  const result = (statusCode: number | null, excerpt: string, error: string | null, outcome = outcomeOf(statusCode)) => ({
    statusCode,
    latencyMs: Math.round(performance.now() - started),
    excerpt,
    error,
    outcome,
  });
  try {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return result(null, '', 'url is not a valid absolute URL', 'stop');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return result(null, '', `url scheme ${url.protocol} is neither https: nor http:`, 'stop');
    }
    // A literal never goes through `lookup`; check it here, before any connection.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) {
      const refusal = addressRefusal(host, policy);
      if (refusal) return result(null, '', refusal);
    }
    const answer = await exchange(url, request, policy);
    return result(answer.statusCode, answer.excerpt, answer.error);
  } catch (error) {
    // Only a request Node cannot even build lands here (e.g. a header value with a newline);
    // sending it again would fail the same way.
    return result(null, '', `invalid request: ${describeError(error)}`, 'stop');
  }
}

/** Closes the pooled sockets, at shutdown. */
export function destroyWebhookAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

interface Answer {
  statusCode: number | null;
  excerpt: string;
  error: string | null;
}

/**
 * One POST under one overall timer. A receiver whose headers arrived has answered: if its body
 * then stalls past the timer or breaks off, the status still counts (a 200 is a delivery; sending
 * again would duplicate it), with the excerpt read so far and the reason in `error`.
 */
function exchange(url: URL, request: WebhookRequest, policy: WebhookSendPolicy): Promise<Answer> {
  const body = Buffer.from(request.body, 'utf8');
  const cap = Math.max(0, policy.maxResponseBytes);
  return new Promise((resolve) => {
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (error: string | null, destroy: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Destroyed whenever the body was not read to its end: the socket is not fit for reuse.
      if (destroy) req.destroy();
      const excerpt = toStorableText(Buffer.concat(chunks, Math.min(received, cap)).toString('utf8'));
      resolve({ statusCode, excerpt, error });
    };

    const transport = url.protocol === 'https:' ? https : http;
    // Built before the timer: it throws on a request it cannot build (sendWebhook maps that).
    const req = transport.request(url, {
      method: 'POST',
      headers: outgoingHeaders(request.headers, body.length),
      agent: agentFor(url.protocol, policy),
    });
    const timer = setTimeout(() => {
      const timedOut = `timed out after ${policy.timeoutMs} ms`;
      settle(statusCode === null ? timedOut : `response body ${timedOut}`, true);
    }, policy.timeoutMs);
    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      if (cap === 0) return settle(null, true);
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        // The cap bounds what an endless or huge body costs: stop reading, close the socket.
        if (received >= cap) settle(null, true);
      });
      res.on('end', () => settle(null, false));
      res.on('error', (error) => settle(`response body cut short: ${describeError(error)}`, true));
      res.on('close', () => settle(res.complete ? null : 'response body cut short', true));
    });
    req.on('error', (error) => {
      settle(statusCode === null ? describeError(error) : `response body cut short: ${describeError(error)}`, true);
    });
    req.end(body);
  });
}

function outgoingHeaders(given: Record<string, string>, contentLength: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value;
  headers['user-agent'] ??= WEBHOOK_USER_AGENT;
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(contentLength);
  return headers;
}

/**
 * Keep-alive pools, one per protocol and address policy: a socket a sandbox application opened to
 * loopback must never be handed to a request whose policy refuses loopback, and the Agent's pool
 * key (host:port) does not know the policy. The guard sits in the agent's options, which the Agent
 * passes to every connection it opens.
 */
const agents = new Map<string, http.Agent>();

function agentFor(protocol: string, policy: WebhookSendPolicy): http.Agent {
  const key = `${protocol} loopback=${policy.allowLoopback} private=${policy.allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, maxSockets: 256, lookup: guardedLookup(policy) };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

/**
 * dns.lookup that passes on only the addresses the policy allows. Node calls it as
 * `(host, { all: true }, cb(err, addresses[]))` when it races address families
 * (autoSelectFamily), else as `(host, options, cb(err, address, family))`; both are answered.
 */
function guardedLookup(policy: WebhookSendPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const wantsAll = (options as LookupOptions | undefined)?.all === true;
    dnsLookup(hostname, { ...(options as LookupOptions), all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const allowed = addresses.filter((a) => addressRefusal(a.address, policy) === null);
      if (allowed.length === 0) {
        const refusal = addresses.length > 0 ? addressRefusal(addresses[0].address, policy)! : 'host has no address';
        return callback(new RefusedAddressError(refusal), '', 0);
      }
      if (wantsAll) (callback as (e: null, all: LookupAddress[]) => void)(null, allowed);
      else callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
};

/** A short reason for the delivery log. */
function describeError(error: unknown): string {
  if (error instanceof RefusedAddressError) return error.message;
  // Racing address families, Node reports one AggregateError for all the attempts.
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0]);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (message === 'socket hang up') return 'connection closed without an answer';
  if (typeof code === 'string') {
    if (SYSTEM_ERRORS[code]) return SYSTEM_ERRORS[code];
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET/.test(code)) return `TLS error: ${code}`;
  }
  const text = typeof message === 'string' && message ? message : String(code ?? error);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
