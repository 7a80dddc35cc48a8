import { WakeSignal } from './wake-signal';

/** What a round reports: `more` runs the next round at once; `wait` waits `pollMs` (or a nudge) first. */
export type RoundOutcome = 'more' | 'wait';

export interface PollingLoopOptions {
  /** Names the round in the warning a failure logs, e.g. `outbox relay round`. */
  name: string;
  /** The wait after a round that says `wait`; failed rounds back off from it. */
  pollMs: number;
  /** A nudge ends a wait early; `stop()` nudges it too. */
  signal: WakeSignal;
  logger: { warn(message: string): void };
  round: () => Promise<RoundOutcome>;
  /** Told of each failed round before the loop backs off (to count failures, say). */
  onFailure?: (error: unknown) => void;
}

export const MAX_BACKOFF_MS = 30_000;
/** Doublings of `pollMs` before the back-off stops growing (then the cap decides). */
const MAX_DOUBLINGS = 8;

/** The wait after `failures` failed rounds in a row: `pollMs` doubled per failure, at most 30 s. */
export function backoffMs(pollMs: number, failures: number): number {
  return Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, MAX_DOUBLINGS));
}

/**
 * Runs round after round until stopped: at once while rounds say there is more, `pollMs` (or
 * until a nudge) after one that says `wait`, and backing off exponentially while rounds fail. A
 * failed round is logged and retried, never fatal: the loop outlives a database restart.
 */
export class PollingLoop {
  private loop: Promise<void> | undefined;
  private stopping = false;
  private failures = 0;

  constructor(private readonly options: PollingLoopOptions) {}

  /** Starts the rounds; does nothing while they already run. */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Lets the round in flight finish, cuts the wait short, and resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.options.signal.nudge();
    await this.loop;
    this.loop = undefined;
  }

  get running(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  private async run(): Promise<void> {
    const { name, pollMs, signal, logger, round, onFailure } = this.options;
    while (!this.stopping) {
      // How long to wait before the next round; undefined: not at all.
      let waitMs: number | undefined;
      try {
        const outcome = await round();
        this.failures = 0;
        if (outcome === 'wait') waitMs = pollMs;
      } catch (error) {
        this.failures++;
        waitMs = backoffMs(pollMs, this.failures);
        onFailure?.(error);
        logger.warn(`${name} failed (attempt ${this.failures}), next in ${waitMs} ms: ${(error as Error)?.message ?? error}`);
      }
      if (this.stopping) break;
      if (waitMs !== undefined) await signal.wait(waitMs);
    }
  }
}
