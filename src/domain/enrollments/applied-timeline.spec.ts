import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';
import { APPLIED_HISTORY_DAYS, applyToTimeline, AppliedTimeline, endedOnOf, enrolledOnOrAfter, inForceOn, segmentInForceOn } from './applied-timeline';

const pct = (amount: number): EnrollmentConfigurationParams => ({
  employee_deduction: { type: 'percent', amount },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});
const TODAY = '2026-07-02';

describe('applied timeline', () => {
  it('reads the configuration in force on a date: the latest segment starting on or before it', () => {
    let t: AppliedTimeline = [];
    t = applyToTimeline(t, { effectiveDate: '2026-07-01', configuration: pct(300) }, TODAY);
    t = applyToTimeline(t, { effectiveDate: '2027-01-01', configuration: pct(400) }, TODAY);
    expect(inForceOn(t, '2026-06-30')).toBeNull();
    expect(inForceOn(t, '2026-07-01')).toEqual(pct(300));
    expect(inForceOn(t, '2026-12-31')).toEqual(pct(300));
    expect(inForceOn(t, '2027-01-01')).toEqual(pct(400));
  });

  it('overwrites from the effective date on: a change dated earlier drops later segments', () => {
    let t: AppliedTimeline = [];
    t = applyToTimeline(t, { effectiveDate: '2026-09-01', configuration: pct(500) }, TODAY);
    t = applyToTimeline(t, { effectiveDate: '2026-08-01', configuration: pct(200) }, TODAY);
    expect(t).toEqual([{ from: '2026-08-01', configuration: pct(200) }]);
  });

  it('ends an enrollment from the unenroll date, keeping what applied before it', () => {
    let t: AppliedTimeline = [];
    t = applyToTimeline(t, { effectiveDate: '2026-07-01', configuration: pct(300) }, TODAY);
    t = applyToTimeline(t, { effectiveDate: '2026-08-15', configuration: null }, TODAY);
    expect(inForceOn(t, '2026-08-14')).toEqual(pct(300));
    expect(inForceOn(t, '2026-08-15')).toBeNull();
    expect(endedOnOf(t)).toBe('2026-08-15');
    expect(enrolledOnOrAfter(t, TODAY)).toBe(true);
    expect(enrolledOnOrAfter(t, '2026-08-15')).toBe(false);
  });

  it('keeps what applied in the last APPLIED_HISTORY_DAYS, for pay statements paid then', () => {
    let t: AppliedTimeline = [];
    t = applyToTimeline(t, { effectiveDate: '2026-01-01', configuration: pct(100) }, '2026-01-01');
    t = applyToTimeline(t, { effectiveDate: '2026-03-01', configuration: pct(200), jobId: 'job-2' }, '2026-03-01');
    t = applyToTimeline(t, { effectiveDate: '2026-09-01', configuration: pct(300) }, TODAY);
    expect(t.map((s) => s.from)).toEqual(['2026-01-01', '2026-03-01', '2026-09-01']);
    expect(inForceOn(t, '2026-02-15')).toEqual(pct(100));
    expect(segmentInForceOn(t, '2026-05-01')).toEqual({ from: '2026-03-01', configuration: pct(200), jobId: 'job-2' });
  });

  it('forgets segments that stopped applying more than APPLIED_HISTORY_DAYS ago', () => {
    let t: AppliedTimeline = [];
    t = applyToTimeline(t, { effectiveDate: '2025-01-01', configuration: pct(100) }, '2025-01-01');
    t = applyToTimeline(t, { effectiveDate: '2025-03-01', configuration: pct(200) }, '2025-03-01');
    // 2025-03-01 is more than 400 days before 2026-05-01: the first segment is gone, the second stays (it still applies).
    t = applyToTimeline(t, { effectiveDate: '2026-09-01', configuration: pct(300) }, `2026-05-01`);
    expect(t.map((s) => s.from)).toEqual(['2025-03-01', '2026-09-01']);
    expect(APPLIED_HISTORY_DAYS).toBe(400);
  });

  it('counts a future-dated enrollment as one a termination must end', () => {
    const t = applyToTimeline([], { effectiveDate: '2027-01-01', configuration: pct(300) }, TODAY);
    expect(inForceOn(t, TODAY)).toBeNull();
    expect(enrolledOnOrAfter(t, TODAY)).toBe(true);
    expect(enrolledOnOrAfter([], TODAY)).toBe(false);
  });
});
