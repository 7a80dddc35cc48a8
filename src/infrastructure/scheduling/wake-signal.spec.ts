import { WakeSignal } from './wake-signal';

/** Whether `promise` has settled once pending callbacks have run (fake timers stay where they are). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await jest.advanceTimersByTimeAsync(0);
  return done;
}

describe('WakeSignal', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits the whole time when no one nudges it', async () => {
    const wait = new WakeSignal().wait(500);
    await jest.advanceTimersByTimeAsync(499);
    expect(await settled(wait)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await settled(wait)).toBe(true);
  });

  it('ends a wait at the nudge, with no timer left behind', async () => {
    const signal = new WakeSignal();
    const wait = signal.wait(60_000);
    expect(await settled(wait)).toBe(false);
    signal.nudge();
    expect(await settled(wait)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('wakes every waiter with one nudge', async () => {
    const signal = new WakeSignal();
    const waits = [signal.wait(60_000), signal.wait(60_000), signal.wait(60_000)];
    signal.nudge();
    expect(await settled(Promise.all(waits))).toBe(true);
  });

  it('keeps a nudge given while no one waits for the next wait only', async () => {
    const signal = new WakeSignal();
    signal.nudge();
    signal.nudge();
    expect(await settled(signal.wait(60_000))).toBe(true);
    expect(await settled(signal.wait(60_000))).toBe(false);
  });

  it('does not keep a nudge that woke a waiter', async () => {
    const signal = new WakeSignal();
    const first = signal.wait(60_000);
    signal.nudge();
    await first;
    expect(await settled(signal.wait(60_000))).toBe(false);
  });

  it('leaves the other waiters to the next nudge when one wait times out', async () => {
    const signal = new WakeSignal();
    const timedOut = signal.wait(100);
    const other = signal.wait(60_000);
    await jest.advanceTimersByTimeAsync(100);
    expect(await settled(timedOut)).toBe(true);
    signal.nudge();
    expect(await settled(other)).toBe(true);
  });
});
