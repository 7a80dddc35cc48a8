/**
 * The heap that request bodies may take at once, shared by every request of the process: a
 * parsed body, and what its handler builds from it, take several times the body's text, so
 * without a bound enough concurrent bodies (each within its route's limit) exhaust the heap.
 * A body reserves its estimated cost once it has arrived, before it is parsed, and gives it
 * back when its answer is sent; bodies that do not fit wait, and are refused after a while.
 *
 * Waiters are served in order of arrival among those that fit: a large body waiting does not
 * hold back small ones behind it (a credential exchange is not queued behind a bulk enrollment),
 * at the price that large bodies may wait longer under load.
 */
export class BodyBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    /** Cost units (about bytes of heap) that may be reserved at once. */
    readonly capacity: number,
    /** How long a body may wait for room before it is refused. */
    private readonly maxWaitMs: number,
  ) {}

  get inUse(): number {
    return this.used;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Reserves `cost` (capped at the capacity, so any single body can be served alone) and
   * resolves to the function that gives it back, callable any number of times. Resolves to
   * undefined when no room was found within the wait.
   */
  reserve(cost: number): Promise<(() => void) | undefined> {
    const units = Math.min(Math.max(0, Math.ceil(cost)), this.capacity);
    if (this.waiting.length === 0 && this.used + units <= this.capacity) return Promise.resolve(this.take(units));
    return new Promise((resolve) => {
      const waiter: Waiter = {
        units,
        grant: () => {
          clearTimeout(waiter.timer);
          resolve(this.take(units));
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          resolve(undefined);
        }, this.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  private take(units: number): () => void {
    this.used += units;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= units;
      this.serveWaiting();
    };
  }

  private serveWaiting(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const waiter = this.waiting[i];
      if (this.used + waiter.units <= this.capacity) {
        this.waiting.splice(i, 1);
        waiter.grant();
      } else {
        i++;
      }
    }
  }
}

interface Waiter {
  units: number;
  grant(): void;
  timer: NodeJS.Timeout;
}
