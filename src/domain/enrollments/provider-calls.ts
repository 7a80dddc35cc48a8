/**
 * Splits the groups of one benefit that are due together into provider calls of at most
 * `maxChanges` individual changes each, keeping their order. A group is never split (its
 * individuals succeed or fail as one call), so a group larger than the bound goes alone.
 *
 * Why a bound at all: a provider fails a call as a whole, so one unbounded call puts every
 * due group of a benefit behind a single failure and its backoff; providers' batch endpoints
 * also cap a request's size.
 */
export function packIntoCalls<T>(groups: readonly T[], changesOf: (group: T) => number, maxChanges: number): T[][] {
  const calls: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const group of groups) {
    const changes = changesOf(group);
    if (current.length > 0 && size + changes > maxChanges) {
      calls.push(current);
      current = [];
      size = 0;
    }
    current.push(group);
    size += changes;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}
