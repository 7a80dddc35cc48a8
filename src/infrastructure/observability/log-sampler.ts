/**
 * At most one line per key and interval. During a lock storm every refused request would
 * otherwise log the same warning, thousands of lines a second; this keeps one a second per
 * cause, each telling how many it stands for. Their count by status is in the HTTP metrics.
 */
export class LogSampler {
  private readonly lines = new Map<string, { at: number; leftOut: number }>();

  constructor(
    private readonly intervalMs: number,
    private readonly maxKeys = 100,
  ) {}

  /**
   * Whether to log this one: undefined to leave it out, else how many of the same key were left
   * out since the last line logged for it.
   */
  take(key: string, now: number): number | undefined {
    const last = this.lines.get(key);
    if (last && now - last.at < this.intervalMs) {
      last.leftOut++;
      return undefined;
    }
    // Keys are causes (a few SQL states); the bound only guards against a caller keying by value.
    if (!last && this.lines.size >= this.maxKeys) this.lines.clear();
    this.lines.set(key, { at: now, leftOut: 0 });
    return last?.leftOut ?? 0;
  }
}
