import { GroupCommit } from './group-commit';

/** An apply that records its rounds and answers each item doubled; `release` ends the round in flight. */
function recorder() {
  const rounds: number[][][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const gates: (() => void)[] = [];
  let held = false;
  const apply = async (submissions: readonly number[][]) => {
    rounds.push(submissions.map((s) => [...s]));
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (held) await new Promise<void>((resolve) => gates.push(resolve));
    inFlight--;
    if (submissions.flat().includes(-1)) throw new Error('poisoned round');
    return submissions.map((s) => s.map((n) => n * 2));
  };
  return {
    apply,
    rounds,
    get maxInFlight() {
      return maxInFlight;
    },
    hold: () => (held = true),
    releaseAll: () => {
      held = false;
      gates.splice(0).forEach((g) => g());
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('applies submissions of the same turn in one round, each submitter getting its own results', async () => {
    const r = recorder();
    const commit = new GroupCommit(r.apply, { maxItems: 100, concurrency: 2 });
    const answers = await Promise.all([commit.submit([1, 2]), commit.submit([3]), commit.submit([4, 5, 6])]);
    expect(answers).toEqual([[2, 4], [6], [8, 10, 12]]);
    expect(r.rounds).toEqual([[[1, 2], [3], [4, 5, 6]]]);
  });

  it('cuts rounds at maxItems, never splits a submission, and keeps at most `concurrency` rounds in flight', async () => {
    const r = recorder();
    const commit = new GroupCommit(r.apply, { maxItems: 4, concurrency: 2 });
    r.hold();
    const all = Promise.all([commit.submit([1, 2, 3]), commit.submit([4, 5]), commit.submit([6, 7, 8, 9, 10]), commit.submit([11])]);
    await tick();
    expect(r.rounds).toEqual([[[1, 2, 3]], [[4, 5]]]);
    r.releaseAll();
    const answers = await all;
    expect(answers).toEqual([[2, 4, 6], [8, 10], [12, 14, 16, 18, 20], [22]]);
    expect(r.rounds).toEqual([[[1, 2, 3]], [[4, 5]], [[6, 7, 8, 9, 10]], [[11]]]);
    expect(r.maxInFlight).toBe(2);
  });

  it('gathers what comes in while the rounds in flight are busy into the next round', async () => {
    const r = recorder();
    const commit = new GroupCommit(r.apply, { maxItems: 100, concurrency: 1 });
    r.hold();
    const first = commit.submit([1]);
    await tick();
    expect(r.rounds).toHaveLength(1);
    const later = [commit.submit([2]), commit.submit([3])];
    await tick();
    await tick();
    expect(r.rounds).toHaveLength(1); // still waiting for the round in flight
    r.releaseAll();
    await first;
    await tick();
    r.releaseAll();
    expect(await Promise.all(later)).toEqual([[4], [6]]);
    expect(r.rounds).toEqual([[[1]], [[2], [3]]]);
  });

  it('fails every submitter of a failed round, and only them', async () => {
    const r = recorder();
    const commit = new GroupCommit(r.apply, { maxItems: 2, concurrency: 2 });
    const outcomes = await Promise.allSettled([commit.submit([1]), commit.submit([-1]), commit.submit([5, 6])]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toEqual(new Error('poisoned round'));
    expect((outcomes[2] as PromiseFulfilledResult<number[]>).value).toEqual([10, 12]);
    // The queue goes on after a failure.
    expect(await commit.submit([7])).toEqual([14]);
  });
});
