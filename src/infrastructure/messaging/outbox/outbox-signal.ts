import { Injectable } from '@nestjs/common';

/** Lets writers wake the relay instead of waiting for its next poll. */
@Injectable()
export class OutboxSignal {
  private waiter: (() => void) | undefined;
  private pending = false;

  nudge(): void {
    this.pending = true;
    const wake = this.waiter;
    this.waiter = undefined;
    wake?.();
  }

  /** Resolves on the next nudge or after `ms`, whichever is first. */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve();
      }, ms);
      this.waiter = () => {
        clearTimeout(timer);
        this.pending = false;
        resolve();
      };
    });
  }
}
