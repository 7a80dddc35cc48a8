interface Entry<T, R> {
  items: T[];
  resolve: (results: R[]) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** Items one round may hold; a single submission larger than this is a round of its own. */
  maxItems: number;
  /** Rounds in flight at once. */
  concurrency: number;
}

/**
 * Group commit: submissions handed in while the rounds in flight are busy, or in the same turn
 * of the event loop, are applied together in one round (one `apply`, one transaction), up to
 * `maxItems` items. Partitions fetched together, each a handful of messages under a moderate
 * load, then cost one transaction instead of one each, while a big submission still goes alone
 * and at once. Each submitter gets its own items' results; when a round fails, every submitter
 * in it gets the error (and retries as it would have alone).
 */
export class GroupCommit<T, R> {
  private readonly queue: Entry<T, R>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly apply: (submissions: readonly T[][]) => Promise<R[][]>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(items: T[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.concurrency || this.queue.length === 0) return;
    this.scheduled = true;
    // The next turn: what the other partitions of the same fetch hand in meanwhile joins the round.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.options.concurrency && this.queue.length > 0) void this.run(this.nextRound());
    });
  }

  private nextRound(): Entry<T, R>[] {
    const round = [this.queue.shift()!];
    let size = round[0].items.length;
    while (this.queue.length > 0 && size + this.queue[0].items.length <= this.options.maxItems) {
      const next = this.queue.shift()!;
      round.push(next);
      size += next.items.length;
    }
    return round;
  }

  private async run(round: Entry<T, R>[]): Promise<void> {
    this.inFlight++;
    try {
      const results = await this.apply(round.map((e) => e.items));
      round.forEach((entry, i) => entry.resolve(results[i]));
    } catch (error) {
      for (const entry of round) entry.reject(error);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
