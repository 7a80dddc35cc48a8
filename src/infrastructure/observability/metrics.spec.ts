import { Metrics } from './metrics';

const busySeconds = async (metrics: Metrics): Promise<number> => {
  const line = (await metrics.render()).split('\n').find((l) => l.startsWith('nodejs_eventloop_busy_seconds_total '));
  if (!line) throw new Error('nodejs_eventloop_busy_seconds_total is not rendered');
  return Number(line.split(' ')[1]);
};

describe('Metrics', () => {
  it('counts the event loop busy time, growing by what the thread spends running', async () => {
    const metrics = new Metrics();
    const before = await busySeconds(metrics);
    // 200 ms of synchronous work: busy time; the second of waiting after it is not. (Counted
    // busy, the wait would make it 1.2 s; below 0.9 leaves a loaded host's stalls room.)
    const until = Date.now() + 200;
    while (Date.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = await busySeconds(metrics);
    expect(after - before).toBeGreaterThanOrEqual(0.19);
    expect(after - before).toBeLessThan(0.9);
  });

  it('never counts backwards across scrapes', async () => {
    const metrics = new Metrics();
    const readings = [];
    for (let i = 0; i < 5; i++) readings.push(await busySeconds(metrics));
    expect(readings).toEqual([...readings].sort((a, b) => a - b));
  });
});
