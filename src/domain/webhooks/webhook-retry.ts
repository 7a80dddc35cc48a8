/**
 * When a delivery that failed is tried again. Exponential (base, 2×base, 4×base …, capped),
 * with jitter so receivers that failed together are not hit together again; tried until the
 * window since the event is spent (about three days by default), then failed for good.
 */
export interface WebhookRetryPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
  /** From the delivery's creation; no attempt is scheduled past it. */
  windowMs: number;
}

export const DEFAULT_WEBHOOK_RETRY_POLICY: WebhookRetryPolicy = {
  baseDelayMs: 5_000,
  maxDelayMs: 6 * 3_600_000,
  windowMs: 3 * 24 * 3_600_000,
};

/**
 * The next attempt after the `attempts`-th failed, or undefined when the window is spent.
 * `random` in [0, 1): the delay is drawn from [½, 1½) of the exponential step.
 */
export function nextWebhookAttemptAt(
  now: Date,
  createdAt: Date,
  attempts: number,
  policy: WebhookRetryPolicy,
  random: () => number = Math.random,
): Date | undefined {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, Math.min(attempts - 1, 40)));
  const delay = Math.round(step * (0.5 + random()));
  const next = now.getTime() + delay;
  const end = createdAt.getTime() + policy.windowMs;
  if (now.getTime() >= end) return undefined;
  // The last try lands at the window's end rather than being skipped.
  return new Date(Math.min(next, end));
}
