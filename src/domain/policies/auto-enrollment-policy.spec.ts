import {
  escalationProblems,
  MAX_ESCALATION_STEPS,
  newHireSchedule,
  parsePolicyConfiguration,
  PolicyConfiguration,
  PolicyEscalation,
} from './auto-enrollment-policy';

const configuration = (employeeDeduction: PolicyConfiguration['employee_deduction'], rest: Partial<PolicyConfiguration> = {}): PolicyConfiguration => ({
  employee_deduction: employeeDeduction,
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
  ...rest,
});
const percent = (amount: number) => ({ type: 'percent' as const, amount });
const fixed = (amount: number) => ({ type: 'fixed' as const, amount });

const policy = (config: PolicyConfiguration, waitingPeriodDays: number, escalation: PolicyEscalation | null = null) => ({
  configuration: config,
  waitingPeriodDays,
  escalation,
});

/** The schedule as [date, employee deduction amount] pairs. */
const steps = (schedule: ReturnType<typeof newHireSchedule>) => schedule.map((s) => [s.effectiveDate, s.configuration.employee_deduction?.amount]);

describe('newHireSchedule', () => {
  it('3 % rising 1 point a year to a 6 % cap: 3 → 4 → 5 → 6 on each anniversary of the first date', () => {
    const schedule = newHireSchedule(policy(configuration(percent(300)), 0, { increase: 100, cap: 600 }), '2026-03-02', '2026-03-01');
    expect(steps(schedule)).toEqual([
      ['2026-03-02', 300],
      ['2027-03-02', 400],
      ['2028-03-02', 500],
      ['2029-03-02', 600],
    ]);
    expect(schedule.every((s) => s.configuration.employee_deduction?.type === 'percent')).toBe(true);
  });

  it('keeps the rest of the configuration on every step', () => {
    const config = configuration(percent(300), { company_contribution: percent(400), catch_up: true, annual_maximum: 2_350_000 });
    const schedule = newHireSchedule(policy(config, 0, { increase: 100, cap: 500 }), '2026-03-02', '2026-03-02');
    expect(schedule.map((s) => s.configuration)).toEqual([
      config,
      { ...config, employee_deduction: percent(400) },
      { ...config, employee_deduction: percent(500) },
    ]);
  });

  it('lands the last step exactly on the cap when the increase overshoots it', () => {
    const schedule = newHireSchedule(policy(configuration(percent(300)), 0, { increase: 200, cap: 600 }), '2026-01-10', '2026-01-01');
    expect(steps(schedule)).toEqual([
      ['2026-01-10', 300],
      ['2027-01-10', 500],
      ['2028-01-10', 600],
    ]);
  });

  it('adds no step when the deduction is already at or over the cap', () => {
    for (const cap of [300, 250]) {
      const schedule = newHireSchedule(policy(configuration(percent(300)), 0, { increase: 100, cap }), '2026-01-10', '2026-01-01');
      expect(steps(schedule)).toEqual([['2026-01-10', 300]]);
    }
  });

  it('escalates a fixed deduction in cents', () => {
    const schedule = newHireSchedule(policy(configuration(fixed(5_000)), 0, { increase: 2_500, cap: 10_000 }), '2026-05-01', '2026-05-01');
    expect(steps(schedule)).toEqual([
      ['2026-05-01', 5_000],
      ['2027-05-01', 7_500],
      ['2028-05-01', 10_000],
    ]);
    expect(schedule[2].configuration.employee_deduction).toEqual(fixed(10_000));
  });

  it('counts a 90-day waiting period across the year end', () => {
    const schedule = newHireSchedule(policy(configuration(percent(300)), 90), '2026-11-15', '2026-11-01');
    expect(steps(schedule)).toEqual([['2027-02-13', 300]]);
  });

  it('starts today when the start date plus the waiting period is already past', () => {
    const schedule = newHireSchedule(policy(configuration(percent(300)), 30, { increase: 100, cap: 500 }), '2026-01-05', '2026-03-10');
    // 2026-01-05 + 30 days is 2026-02-04, before today: anniversaries count from today.
    expect(steps(schedule)).toEqual([
      ['2026-03-10', 300],
      ['2027-03-10', 400],
      ['2028-03-10', 500],
    ]);
  });

  it('uses the start date plus the waiting period when that is exactly today', () => {
    expect(steps(newHireSchedule(policy(configuration(percent(300)), 10), '2026-03-01', '2026-03-11'))).toEqual([['2026-03-11', 300]]);
  });

  it('without escalation: one enrollment with the policy configuration', () => {
    const config = configuration(percent(300), { company_contribution: fixed(1_000) });
    const schedule = newHireSchedule(policy(config, 30), '2026-06-15', '2026-06-01');
    expect(schedule).toEqual([{ effectiveDate: '2026-07-15', configuration: config }]);
  });

  it('with escalation but no employee deduction: one enrollment', () => {
    const config = configuration(null, { company_contribution: fixed(1_000) });
    expect(newHireSchedule(policy(config, 0, { increase: 100, cap: 600 }), '2026-06-15', '2026-06-01')).toEqual([
      { effectiveDate: '2026-06-15', configuration: config },
    ]);
  });

  it('a February 29th first date falls on February 28th in common years, back on the 29th in leap years', () => {
    // 2027-12-01 + 90 days = 2028-02-29.
    const schedule = newHireSchedule(policy(configuration(percent(100)), 90, { increase: 100, cap: 600 }), '2027-12-01', '2027-12-01');
    expect(schedule.map((s) => s.effectiveDate)).toEqual(['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29', '2033-02-28']);
  });

  it(`schedules at most ${MAX_ESCALATION_STEPS} escalation steps`, () => {
    const schedule = newHireSchedule(policy(configuration(percent(0)), 0, { increase: 1, cap: 10_000 }), '2026-01-01', '2026-01-01');
    expect(schedule).toHaveLength(MAX_ESCALATION_STEPS + 1);
    expect(schedule[schedule.length - 1]).toMatchObject({ effectiveDate: '2076-01-01', configuration: { employee_deduction: percent(50) } });
  });

  it('hands out copies: changing a scheduled configuration leaves the policy alone', () => {
    const config = configuration(percent(300));
    const [first] = newHireSchedule(policy(config, 0), '2026-01-01', '2026-01-01');
    first.configuration.employee_deduction!.amount = 999;
    expect(config.employee_deduction).toEqual(percent(300));
  });

  it.each([
    ['a malformed start date', '2026-1-5', '2026-01-01', 0],
    ['an impossible start date', '2026-02-30', '2026-01-01', 0],
    ['a malformed today', '2026-01-05', '01/01/2026', 0],
    ['a negative waiting period', '2026-01-05', '2026-01-01', -1],
    ['a fractional waiting period', '2026-01-05', '2026-01-01', 1.5],
  ])('refuses %s', (_label, startDate, today, waitingPeriodDays) => {
    expect(() => newHireSchedule(policy(configuration(percent(300)), waitingPeriodDays), startDate, today)).toThrow(RangeError);
  });
});

describe('parsePolicyConfiguration', () => {
  it('normalizes like an enroll body', () => {
    expect(parsePolicyConfiguration({ employee_deduction: percent(300), company_contribution: percent(300), catch_up: true }, 'retirement')).toEqual({
      ok: true,
      configuration: configuration(percent(300), { company_contribution: percent(300), catch_up: true }),
    });
    expect(parsePolicyConfiguration({ employee_deduction: fixed(1_000), annual_contribution_limit: 'family' }, 'hsa')).toEqual({
      ok: true,
      configuration: configuration(fixed(1_000), { hsa_contribution_limit: 'family' }),
    });
  });

  it('refuses effective_date, whatever its value', () => {
    for (const date of ['2026-07-01', null]) {
      const result = parsePolicyConfiguration({ employee_deduction: percent(300), effective_date: date }, 'retirement');
      expect(result).toEqual({ ok: false, problems: [expect.stringMatching(/^configuration\.effective_date: not accepted in a policy/)] });
    }
  });

  it('reports the enroll rules’ problems with the path', () => {
    expect(parsePolicyConfiguration({ employee_deduction: percent(10_001), catch_up: true }, 'basic', 'body.configuration')).toEqual({
      ok: false,
      problems: [
        expect.stringMatching(/^body\.configuration\.catch_up: not accepted for a Section 125/),
        'body.configuration.employee_deduction.amount: a percent amount must be a whole number of basis points from 0 to 10000',
      ],
    });
    expect(parsePolicyConfiguration([], 'basic')).toEqual({ ok: false, problems: ['configuration: must be an object'] });
  });
});

describe('escalationProblems', () => {
  it('accepts a whole increase and a cap above the starting amount, within the unit’s limits', () => {
    expect(escalationProblems({ increase: 100, cap: 600 }, configuration(percent(300)))).toEqual([]);
    expect(escalationProblems({ increase: 1, cap: 10_000 }, configuration(percent(0)))).toEqual([]);
    expect(escalationProblems({ increase: 20_000, cap: 1_000_000 }, configuration(fixed(5_000)))).toEqual([]);
  });

  it('needs an employee deduction', () => {
    expect(escalationProblems({ increase: 100, cap: 600 }, configuration(null, { company_contribution: percent(300) }))).toEqual([
      'escalation: escalation raises the employee deduction, and the configuration has no employee_deduction',
    ]);
  });

  it.each([0, -100, 1.5, 10_001])('refuses a percent increase of %p', (increase) => {
    expect(escalationProblems({ increase, cap: 600 }, configuration(percent(300)))).toEqual([
      'escalation.increase: must be a whole number of basis points from 1 to 10000 (the employee deduction is percent)',
    ]);
  });

  it('refuses a cap at or below the starting amount', () => {
    for (const cap of [300, 200, 0]) {
      expect(escalationProblems({ increase: 100, cap }, configuration(percent(300)))).toEqual([
        "escalation.cap: must be above the employee deduction's amount (300 basis points), or there is nothing to escalate",
      ]);
    }
  });

  it('refuses a percent cap over 100 % and a fractional cap; a fixed cap may go far beyond', () => {
    expect(escalationProblems({ increase: 100, cap: 10_001 }, configuration(percent(300)))).toEqual([
      'escalation.cap: must be a whole number of basis points up to 10000 (the employee deduction is percent)',
    ]);
    expect(escalationProblems({ increase: 100, cap: 600.5 }, configuration(fixed(300)))).toEqual([
      'escalation.cap: must be a whole number of cents up to 10000000000 (the employee deduction is fixed)',
    ]);
    expect(escalationProblems({ increase: 100, cap: 10_001 }, configuration(fixed(300)))).toEqual([]);
  });

  it('names every problem at once, with the path', () => {
    expect(escalationProblems({ increase: 0, cap: 100 }, configuration(percent(300)), 'body.escalation')).toEqual([
      'body.escalation.increase: must be a whole number of basis points from 1 to 10000 (the employee deduction is percent)',
      "body.escalation.cap: must be above the employee deduction's amount (300 basis points), or there is nothing to escalate",
    ]);
  });
});
