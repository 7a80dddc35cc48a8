/**
 * Lets code that just made work wake the loops waiting for it, instead of leaving them to their
 * next poll. A nudge while no one waits is kept for the next wait, so a nudge given during a
 * round is not lost.
 */
export class WakeSignal {
  private waiters: (() => void)[] = [];
  private pending = false;

  /** Wakes every waiter; with none, the next wait returns at once. */
  nudge(): void {
    this.pending = true;
    const wake = this.waiters;
    this.waiters = [];
    for (const w of wake) w();
  }

  /** Resolves on the next nudge (at once for one kept since the last wait) or after `ms`, whichever is first. */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      }, ms);
      this.waiters.push(wake);
    });
  }
}
