/**
 * Above this many individuals of one benefit, a transaction locks the whole benefit instead of
 * each of them: PostgreSQL's lock table is shared and bounded (`max_locks_per_transaction` ×
 * connections), and a few 10,000-individual requests at once would exhaust it.
 */
export const INDIVIDUAL_LOCKS_PER_BENEFIT = 1_000;

export interface AdvisoryLock {
  key: string;
  shared: boolean;
}

/**
 * The advisory locks for these (benefit, individual) keys, in the order to take them: every
 * benefit first, shared when its individuals are locked one by one, exclusive when it has more
 * than INDIVIDUAL_LOCKS_PER_BENEFIT of them; then the individuals; each part sorted. A
 * benefit-wide change therefore waits for (and holds off) every change of its individuals,
 * changes of different individuals still run side by side, and everyone locks in one order.
 */
export function advisoryLocksFor(keys: readonly (readonly [benefitId: string, individualId: string])[]): AdvisoryLock[] {
  const individualsOf = new Map<string, Set<string>>();
  for (const [benefitId, individualId] of keys) {
    const b = benefitId.toLowerCase();
    const individuals = individualsOf.get(b) ?? new Set<string>();
    individuals.add(individualId.toLowerCase());
    individualsOf.set(b, individuals);
  }
  const benefits = [...individualsOf.keys()].sort();
  const oneByOne = new Set(benefits.filter((b) => individualsOf.get(b)!.size <= INDIVIDUAL_LOCKS_PER_BENEFIT));
  return [
    ...benefits.map((b) => ({ key: `benefit:${b}`, shared: oneByOne.has(b) })),
    ...[...oneByOne]
      .flatMap((b) => [...individualsOf.get(b)!].map((i) => `${b}:${i}`))
      .sort()
      .map((key) => ({ key, shared: false })),
  ];
}
