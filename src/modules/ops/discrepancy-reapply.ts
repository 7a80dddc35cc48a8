import { benefitGroupOf, enrollBodyConfigurationOf } from '../../domain/benefits/enrollment-configuration';
import { AppliedTimeline, inForceOn } from '../../domain/enrollments/applied-timeline';
import { BenefitType } from '../../domain/providers/provider';

/**
 * What re-applying the service's configuration to the provider asks for, as an ordinary
 * enrollment request: the configuration the service applied that is in force `today`, enrolled
 * again from today (overwrite); or, when none is (a deduction payroll takes that the service
 * never applied or has ended), an unenroll from today.
 */
export type ReapplyPlan =
  | { operation: 'enroll'; effectiveDate: string; configuration: Record<string, unknown> }
  | { operation: 'unenroll'; effectiveDate: string };

export function reapplyPlan(applied: AppliedTimeline, benefitType: BenefitType, today: string): ReapplyPlan {
  const configuration = inForceOn(applied, today);
  if (configuration === null) return { operation: 'unenroll', effectiveDate: today };
  // In the enroll body's own terms, so it passes the same validation as a client's request.
  return { operation: 'enroll', effectiveDate: today, configuration: { ...enrollBodyConfigurationOf(configuration, benefitGroupOf(benefitType)), effective_date: today } };
}
