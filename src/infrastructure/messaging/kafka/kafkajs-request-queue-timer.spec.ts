/* eslint-disable @typescript-eslint/no-require-imports */
import './kafkajs-request-queue-timer';

// kafkajs 2.2.4's request queue, as each broker connection makes it.
const RequestQueue = require('kafkajs/src/network/requestQueue');

const quiet = { namespace: () => quiet, info: () => undefined, debug: () => undefined, warn: () => undefined, error: () => undefined };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Queue {
  pending: unknown[];
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(request: { entry: { correlationId: number; resolve: () => void; reject: () => void }; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer | null; size: number }): void;
  maybeThrottle(ms: number): void;
  checkPendingRequests(): void;
  destroy(): void;
}

function queueOf(maxInFlightRequests: number | null): { queue: Queue; sent: number[]; send: (correlationId: number) => void } {
  const queue: Queue = new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:9092', logger: quiet });
  const sent: number[] = [];
  const send = (correlationId: number) => queue.push({ entry: { correlationId, resolve: () => undefined, reject: () => undefined }, expectResponse: true, sendRequest: () => sent.push(correlationId) });
  return { queue, sent, send };
}

describe('kafkajs request queue timer', () => {
  it('keeps no timer while no request is pending (stock 2.2.4 re-armed one every millisecond)', async () => {
    const { queue, sent, send } = queueOf(null);
    send(1);
    queue.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    queue.checkPendingRequests();
    expect(sent).toEqual([1]);
    expect(queue.throttleCheckTimeoutId).toBeNull();
    queue.destroy();
  });

  it('sends a request held by the in-flight limit when the one in flight is answered, then keeps no timer', async () => {
    const { queue, sent, send } = queueOf(1);
    send(1);
    send(2);
    expect(sent).toEqual([1]);
    expect(queue.pending).toHaveLength(1);
    queue.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    expect(sent).toEqual([1, 2]);
    queue.fulfillRequest({ correlationId: 2, payload: null, size: 0 });
    expect(queue.pending).toHaveLength(0);
    await pause(30);
    expect(queue.throttleCheckTimeoutId).toBeNull();
    queue.destroy();
  });

  it('sends a request held by client-side throttling when the throttle ends, with nothing else to wake it', async () => {
    const { queue, sent, send } = queueOf(null);
    queue.maybeThrottle(40);
    send(1);
    expect(sent).toEqual([]);
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    await pause(15);
    expect(sent).toEqual([]);
    await pause(60);
    expect(sent).toEqual([1]);
    expect(queue.throttleCheckTimeoutId).toBeNull();
    queue.destroy();
  });
});
