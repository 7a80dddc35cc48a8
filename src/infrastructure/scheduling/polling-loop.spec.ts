import { backoffMs, MAX_BACKOFF_MS, PollingLoop, RoundOutcome } from './polling-loop';
import { WakeSignal } from './wake-signal';

/** A round that plays a script of outcomes (an Error is thrown), then says `wait`; records when each round started. */
class ScriptedRound {
  readonly startedAt: number[] = [];
  private readonly script: (RoundOutcome | Error)[];

  constructor(...script: (RoundOutcome | Error)[]) {
    this.script = script;
  }

  readonly run = async (): Promise<RoundOutcome> => {
    this.startedAt.push(Date.now());
    const next = this.script.shift() ?? 'wait';
    if (next instanceof Error) throw next;
    return next;
  };
}

class RecordingLogger {
  readonly warnings: string[] = [];
  warn(message: string): void {
    this.warnings.push(message);
  }
}

describe('backoffMs', () => {
  it('doubles the poll interval per failure in a row', () => {
    expect([1, 2, 3, 4].map((failures) => backoffMs(100, failures))).toEqual([200, 400, 800, 1600]);
  });

  it('stops doubling after eight failures', () => {
    expect(backoffMs(10, 8)).toBe(2560);
    expect(backoffMs(10, 9)).toBe(2560);
    expect(backoffMs(10, 1000)).toBe(2560);
  });

  it('never waits longer than 30 s', () => {
    expect(MAX_BACKOFF_MS).toBe(30_000);
    expect(backoffMs(250, 6)).toBe(16_000);
    expect(backoffMs(250, 7)).toBe(30_000);
    expect(backoffMs(250, 8)).toBe(30_000);
    expect(backoffMs(60_000, 1)).toBe(30_000);
  });
});

describe('PollingLoop', () => {
  const loops: PollingLoop[] = [];
  let signal: WakeSignal;
  let logger: RecordingLogger;

  const startLoop = (round: ScriptedRound, options: { pollMs?: number; onFailure?: (error: unknown) => void } = {}) => {
    const loop = new PollingLoop({
      name: 'test round',
      pollMs: options.pollMs ?? 100,
      signal,
      logger,
      round: round.run,
      onFailure: options.onFailure,
    });
    loops.push(loop);
    loop.start();
    return loop;
  };

  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
    signal = new WakeSignal();
    logger = new RecordingLogger();
  });

  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
    jest.useRealTimers();
  });

  it('runs the next round at once while rounds say there is more, then waits pollMs between rounds', async () => {
    const round = new ScriptedRound('more', 'more', 'wait', 'wait');
    startLoop(round);
    await jest.advanceTimersByTimeAsync(250);
    expect(round.startedAt).toEqual([0, 0, 0, 100, 200]);
  });

  it('starts the next round at a nudge instead of waiting out pollMs', async () => {
    const round = new ScriptedRound();
    startLoop(round, { pollMs: 10_000 });
    await jest.advanceTimersByTimeAsync(30);
    signal.nudge();
    await jest.advanceTimersByTimeAsync(0);
    expect(round.startedAt).toEqual([0, 30]);
  });

  it('backs off while rounds fail, warning with the attempt and the wait, and polls again after a success', async () => {
    const failures: unknown[] = [];
    const round = new ScriptedRound(new Error('database gone'), new Error('database gone'), new Error('still gone'), 'wait');
    startLoop(round, { onFailure: (error) => failures.push(error) });

    await jest.advanceTimersByTimeAsync(1_500);

    // 0 fails; 200 (100·2) fails; 600 (+400) fails; 1400 (+800) succeeds; 1500 (+100) polls as usual.
    expect(round.startedAt).toEqual([0, 200, 600, 1_400, 1_500]);
    expect(logger.warnings).toEqual([
      'test round failed (attempt 1), next in 200 ms: database gone',
      'test round failed (attempt 2), next in 400 ms: database gone',
      'test round failed (attempt 3), next in 800 ms: still gone',
    ]);
    expect(failures.map((e) => (e as Error).message)).toEqual(['database gone', 'database gone', 'still gone']);
  });

  it('counts failures afresh after a success', async () => {
    const round = new ScriptedRound(new Error('first'), new Error('second'), 'more', new Error('third'));
    startLoop(round);
    await jest.advanceTimersByTimeAsync(1_000);
    // 0 fails; 200 fails; 600 succeeds with more; 600 fails again: attempt 1 → 200 ms.
    expect(round.startedAt.slice(0, 5)).toEqual([0, 200, 600, 600, 800]);
    expect(logger.warnings[2]).toBe('test round failed (attempt 1), next in 200 ms: third');
  });

  it('wakes the wait on stop and runs no further round', async () => {
    const round = new ScriptedRound();
    const loop = startLoop(round, { pollMs: 60_000 });
    await jest.advanceTimersByTimeAsync(10);
    expect(loop.running).toBe(true);

    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);

    expect(stopped).toBe(true);
    expect(loop.running).toBe(false);
    expect(round.startedAt).toEqual([0]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('lets the round in flight finish on stop, then waits no more', async () => {
    let finishRound!: () => void;
    const rounds: number[] = [];
    const loop = new PollingLoop({
      name: 'test round',
      pollMs: 100,
      signal,
      logger,
      round: () => {
        rounds.push(Date.now());
        return new Promise<RoundOutcome>((resolve) => (finishRound = () => resolve('wait')));
      },
    });
    loop.start();

    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(stopped).toBe(false);

    finishRound();
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    expect(rounds).toEqual([0]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops out of a back-off wait too', async () => {
    const round = new ScriptedRound(new Error('down'));
    const loop = startLoop(round, { pollMs: 10_000 });
    await jest.advanceTimersByTimeAsync(0);
    let stopped = false;
    void loop.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    expect(round.startedAt).toEqual([0]);
  });

  it('runs one loop however often it is started, and starts again after a stop', async () => {
    const round = new ScriptedRound();
    const loop = startLoop(round);
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(round.startedAt).toEqual([0]);

    await loop.stop();
    expect(loop.running).toBe(false);
    await jest.advanceTimersByTimeAsync(50);
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(loop.running).toBe(true);
    expect(round.startedAt).toEqual([0, 50]);
  });
});
