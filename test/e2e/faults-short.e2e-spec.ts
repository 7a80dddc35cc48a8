import { runScenario, SCENARIOS, ScenarioResult } from '../../bench/faults';
import { describeWithKafka } from '../setup/test-env';

/**
 * The short fault suite (bench/faults.ts, `npm run faults`) as part of the test run: each
 * scenario streams a few hundred HRIS events through service processes on the real broker and
 * PostgreSQL while it breaks something (a SIGKILL, a PostgreSQL restart, provider failures,
 * triple delivery, poison, a group member killed), and must lose nothing, double nothing and
 * dead-letter every poison event.
 */
describeWithKafka('HRIS events fault suite (short)', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    '%s: 0 lost, 0 doubled, every poison dead-lettered',
    async (_name, scenario) => {
      const lines: string[] = [];
      const result: ScenarioResult = await runScenario(scenario, { long: false, log: (line) => lines.push(line) });
      const o = result.outcome;
      console.log(
        [
          `${scenario.name} (${result.seconds.toFixed(0)} s): ` +
            (o ? `events sent ${o.sent} / applied ${o.applied} / lost ${o.lost} / doubled ${o.doubled} / dead-lettered ${o.deadLettered}` : 'no outcome'),
          ...result.notes.map((n) => `  ${n}`),
          ...lines,
        ].join('\n'),
      );
      expect(result.failures).toEqual([]);
      expect(o).toBeDefined();
      expect({ lost: o!.lost, doubled: o!.doubled, poisonMissing: o!.poisonMissing }).toEqual({ lost: 0, doubled: 0, poisonMissing: 0 });
      // Every distinct valid event was applied and every poison event dead-lettered.
      expect(o!.applied).toBe(o!.validEvents);
      expect(o!.deadLettered).toBe(o!.poisonEvents);
    },
    480_000,
  );
});
