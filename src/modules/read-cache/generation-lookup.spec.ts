import { ChangeNotifications } from '../../infrastructure/database/change-notifications';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { GenerationLookup } from './generation-lookup';

/** The repository's generation read, answered by the test. */
class GenerationReads {
  calls = 0;
  private pending: ((generation: string | null) => void)[] = [];
  currentGeneration(): Promise<string | null> {
    this.calls++;
    return new Promise((resolve) => this.pending.push(resolve));
  }
  answer(generation: string | null): void {
    for (const resolve of this.pending.splice(0)) resolve(generation);
  }
}

describe('GenerationLookup', () => {
  let reads: GenerationReads;
  let heard: (entityId: string) => void;
  let lookup: GenerationLookup;

  beforeEach(() => {
    jest.useFakeTimers();
    // lru-cache reads a start time of 0 as "no time-to-live": the fake clock starts past it.
    jest.advanceTimersByTime(1_000);
    reads = new GenerationReads();
    const notifications = { live: true, on: (_: string, listener: (id: string) => void) => (heard = listener), onReset: () => undefined };
    lookup = new GenerationLookup(reads as unknown as EmployerDataRepository, notifications as unknown as ChangeNotifications);
  });
  afterEach(() => jest.useRealTimers());

  it('readers missing one entity at once share a read; a change heard starts a new one', async () => {
    const together = [lookup.find('e'), lookup.find('e')];
    expect(reads.calls).toBe(1);
    heard('e');
    const later = lookup.find('e');
    expect(reads.calls).toBe(2);
    reads.answer('7');
    const seen = await Promise.all([...together, later]);
    expect(seen.map((s) => s.generation)).toEqual(['7', '7', '7']);
    expect(lookup.changedSince(seen[0])).toBe(true);
    expect(lookup.changedSince(seen[2])).toBe(false);
  });
});
