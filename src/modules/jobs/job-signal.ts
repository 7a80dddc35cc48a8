import { Injectable } from '@nestjs/common';

/** Lets code that enqueued a job wake this process's worker instead of waiting for its next poll. */
@Injectable()
export class JobSignal {
  private waiters: (() => void)[] = [];
  private pending = false;

  nudge(): void {
    this.pending = true;
    const wake = this.waiters;
    this.waiters = [];
    for (const w of wake) w();
  }

  /** Resolves on the next nudge or after `ms`, whichever is first. */
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
