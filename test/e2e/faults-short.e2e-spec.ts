import { SCENARIOS } from '../../bench/faults';
import { describeWithKafka } from '../setup/test-env';
import { expectScenarioPasses } from '../utils/fault-scenario';

/**
 * The short fault suite (bench/faults.ts, `npm run faults`) as part of the test run: each
 * scenario streams a few thousand HRIS events through service processes on the real broker and
 * PostgreSQL while it breaks something (a SIGKILL, a PostgreSQL restart, provider failures,
 * triple delivery, poison, a group member killed), and must lose nothing, double nothing and
 * dead-letter every poison event.
 */
describeWithKafka('HRIS events fault suite (short)', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s: 0 lost, 0 doubled, every poison dead-lettered', (_name, scenario) => expectScenarioPasses(scenario), 480_000);
});
