import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** How the receiver answers one request: a status, a status after a delay, or 'hang' (never answers). */
export type Answer = number | 'hang' | { status: number; delayMs: number };

/**
 * A local HTTP server that records every webhook it gets (raw body and headers, for signature
 * checks) and answers as told: by default 200; `answer` decides per request.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: (request: ReceivedWebhook, index: number) => Answer = () => 200;
  /** Requests being answered right now (to see concurrency caps). */
  inFlight = 0;
  /** While set, answers wait for it (then for their own delay): see hold(). */
  private gate: Promise<void> | undefined;
  maxInFlight = 0;
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  private port = 0;

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  get listeningPort(): number {
    return this.port;
  }

  /** Event ids received, in arrival order (repeats included). */
  get ids(): string[] {
    return this.received.map((r) => r.headers['webhook-id']);
  }

  bodies<T = Record<string, unknown>>(): T[] {
    return this.received.map((r) => JSON.parse(r.body) as T);
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const webhook: ReceivedWebhook = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = this.received.length;
      this.received.push(webhook);
      const answer = this.answer(webhook, index);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.on('close', () => this.inFlight--);
      if (answer === 'hang') {
        this.hanging.add(res);
        return;
      }
      const { status, delayMs } = typeof answer === 'number' ? { status: answer, delayMs: 0 } : answer;
      const send = () => {
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `status ${status}`);
      };
      const answerNow = () => (delayMs > 0 ? setTimeout(send, delayMs) : send());
      if (this.gate) void this.gate.then(answerNow);
      else answerNow();
    });
  }

  /**
   * Holds every answer until the returned function is called: requests arrive and wait, so a
   * test can queue all its work before any delivery completes, however fast or slow the machine.
   */
  hold(): () => void {
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    this.gate = gate;
    return () => {
      if (this.gate === gate) this.gate = undefined;
      release();
    };
  }
}

/**
 * Deletes every webhook endpoint, locking them in id order first, the order the dispatcher
 * locks them in when it records attempts: a plain delete locks in scan order and can deadlock
 * with a dispatcher recording attempts of two endpoints.
 */
export const DELETE_ALL_ENDPOINTS = `DELETE FROM webhook_endpoints WHERE id IN (SELECT id FROM webhook_endpoints ORDER BY id FOR UPDATE)`;
