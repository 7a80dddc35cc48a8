/* eslint-disable @typescript-eslint/no-require-imports */
import { KafkaJSError } from 'kafkajs';

/**
 * A guard on kafkajs 2.2.4's consumer runner (unmaintained, pinned): when a broker leaves, the
 * fetch manager stops its fetchers and makes new ones. A runner stopped in that window stops
 * the old fetchers; the new ones start after it, and the runner answers each of their fetches
 * with `[]` at once, since it is no longer running: an endless chain of microtasks with no I/O.
 * The event loop is blocked (no timer fires, not even a shutdown deadline), the consumer's
 * disconnect never returns, and the process spins at full CPU until it is killed. Seen in CI
 * with a broker killed under a stopping service.
 *
 * Guarded: a stopped runner's fetch fails instead. Its fetcher ends, the fetch manager gives up,
 * the runner's retrier sees the runner stopped and returns, and the disconnect completes. A
 * runner stopped outside that window never fetches again, so nothing else changes.
 */
interface KafkaJsRunner {
  running: boolean;
  fetch(nodeId: number): Promise<unknown[]>;
}

const Runner: { prototype: KafkaJsRunner } = require('kafkajs/src/consumer/runner');
const fetch = Runner.prototype.fetch;
if (!(fetch as { stopGuarded?: boolean }).stopGuarded) {
  const guarded = function (this: KafkaJsRunner, nodeId: number): Promise<unknown[]> {
    if (!this.running) return Promise.reject(new KafkaJSError('the consumer was stopped; its fetchers end'));
    return fetch.call(this, nodeId);
  };
  Object.assign(guarded, { stopGuarded: true });
  Runner.prototype.fetch = guarded;
}
