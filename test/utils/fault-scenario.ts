import { runScenario, ScenarioResult } from '../../bench/faults';

type Scenario = Parameters<typeof runScenario>[0];

/** Runs one short fault scenario (bench/faults.ts), prints what it did, and expects it to pass whole. */
export async function expectScenarioPasses(scenario: Scenario): Promise<void> {
  const lines: string[] = [];
  const result: ScenarioResult = await runScenario(scenario, { long: false, log: (line) => lines.push(line) });
  const o = result.outcome;
  console.log(
    [
      `${scenario.name} (${result.seconds.toFixed(0)} s): ` +
        (o ? `events sent ${o.sent} / applied ${o.applied} / lost ${o.lost} / doubled ${o.doubled} / dead-lettered ${o.deadLettered}` : 'no outcome'),
      ...result.notes.map((n) => `  ${n}`),
      ...lines,
      ...result.outputs,
    ].join('\n'),
  );
  // The causes alone (the processes' output is printed above): the end of a failed run's log names them.
  expect(result.failures).toEqual([]);
  expect(o).toBeDefined();
  expect({ lost: o!.lost, doubled: o!.doubled, poisonMissing: o!.poisonMissing }).toEqual({ lost: 0, doubled: 0, poisonMissing: 0 });
  // Every distinct valid event was applied and every poison event dead-lettered.
  expect(o!.applied).toBe(o!.validEvents);
  expect(o!.deadLettered).toBe(o!.poisonEvents);
}
