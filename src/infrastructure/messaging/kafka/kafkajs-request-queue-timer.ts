/* eslint-disable @typescript-eslint/no-require-imports */

/**
 * A fix of kafkajs 2.2.4's request queue (unmaintained, pinned; kafkajs issue #1556, its fix
 * proposed in pull request #1667 and never released): every broker connection's queue re-arms a
 * timer to look at its pending requests whether or not any are pending, with a negative delay
 * when the connection is not throttled. Node runs such a timer after 1 ms, so each connection
 * keeps a timer firing about a thousand times a second for as long as it is open: an idle
 * service woke its event loop ~1,700 times a second (~290 with this fix), about 0.6 % of a core
 * spent on nothing (bench/README.md, "An idle instance's own cost").
 *
 * Fixed: the check is scheduled only while requests are pending (held back by client-side
 * throttling or the in-flight limit): at the throttle's end, or after the library's own 10 ms
 * while merely held by the in-flight limit. A queue with none pending needs no timer: a request
 * pushed later schedules the check itself, and a fulfilled or timed-out request checks at once.
 */
interface KafkaJsRequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's own interval for re-checking requests held by the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

const RequestQueue: { prototype: KafkaJsRequestQueue } = require('kafkajs/src/network/requestQueue');
if (!(RequestQueue.prototype.scheduleCheckPendingRequests as { onlyWhilePending?: boolean }).onlyWhilePending) {
  const scheduleCheckPendingRequests = function (this: KafkaJsRequestQueue): void {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const throttledFor = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
  Object.assign(scheduleCheckPendingRequests, { onlyWhilePending: true });
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
}
