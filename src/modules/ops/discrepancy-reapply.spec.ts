import { EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { parseConfiguration, benefitGroupOf } from '../../domain/benefits/enrollment-configuration';
import { AppliedTimeline } from '../../domain/enrollments/applied-timeline';
import { reapplyPlan } from './discrepancy-reapply';

const TODAY = '2026-07-02';
const config = (over: Partial<EnrollmentConfigurationParams> = {}): EnrollmentConfigurationParams => ({
  employee_deduction: { type: 'percent', amount: 400 },
  company_contribution: { type: 'fixed', amount: 2_500 },
  annual_maximum: 1_500_000,
  catch_up: true,
  hsa_contribution_limit: null,
  ...over,
});

describe('reapplyPlan', () => {
  it('enrolls again from today with the configuration the service applied that is in force today', () => {
    const timeline: AppliedTimeline = [
      { from: '2026-01-01', configuration: config({ employee_deduction: { type: 'percent', amount: 300 } }) },
      { from: '2026-06-01', configuration: config() },
      { from: '2026-08-01', configuration: config({ employee_deduction: { type: 'percent', amount: 900 } }) },
    ];
    expect(reapplyPlan(timeline, '401k', TODAY)).toEqual({
      operation: 'enroll',
      effectiveDate: TODAY,
      configuration: {
        employee_deduction: { type: 'percent', amount: 400 },
        company_contribution: { type: 'fixed', amount: 2_500 },
        catch_up: true,
        annual_maximum: 1_500_000,
        effective_date: TODAY,
      },
    });
  });

  it('writes the configuration in the enroll body’s terms for the benefit’s group, which parse back to the same one', () => {
    const hsa = config({ catch_up: false, annual_maximum: null, hsa_contribution_limit: 'family' });
    const plan = reapplyPlan([{ from: '2026-01-01', configuration: hsa }], 'hsa_pre', TODAY);
    expect(plan).toMatchObject({ operation: 'enroll', configuration: { annual_contribution_limit: 'family' } });
    const parsed = parseConfiguration(plan.operation === 'enroll' ? plan.configuration : null, benefitGroupOf('hsa_pre'));
    expect(parsed).toEqual({ ok: true, configuration: hsa, effectiveDate: TODAY });

    // A Section 125 benefit takes only the deduction, the contribution and the date.
    const medical = reapplyPlan([{ from: '2026-01-01', configuration: config({ catch_up: false, annual_maximum: null }) }], 's125_medical', TODAY);
    expect(medical.operation === 'enroll' && Object.keys(medical.configuration).sort()).toEqual(['company_contribution', 'effective_date', 'employee_deduction']);
  });

  it('unenrolls from today when nothing the service applied is in force: never enrolled, ended, or only later', () => {
    expect(reapplyPlan([], '401k', TODAY)).toEqual({ operation: 'unenroll', effectiveDate: TODAY });
    expect(reapplyPlan([{ from: '2026-01-01', configuration: config() }, { from: '2026-07-02', configuration: null }], '401k', TODAY)).toEqual({
      operation: 'unenroll',
      effectiveDate: TODAY,
    });
    expect(reapplyPlan([{ from: '2026-07-03', configuration: config() }], '401k', TODAY)).toEqual({ operation: 'unenroll', effectiveDate: TODAY });
  });
});
