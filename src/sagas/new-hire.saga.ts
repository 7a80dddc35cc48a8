import { utcDateOf } from '../domain/benefits/effective-date';
import { benefitGroupOf, enrollBodyConfigurationOf } from '../domain/benefits/enrollment-configuration';
import { EmployeeHired } from '../domain/hris-events/hris-event';
import { HrisScope } from '../domain/hris-events/hris-event-accepted';
import { newHireSchedule } from '../domain/policies/auto-enrollment-policy';
import { newId } from '../domain/shared/new-id';
import { StoredPolicy } from '../modules/policies/policies.repository';
import { HrisSagaPlan, staleEnd } from './hris-saga-plan';

/**
 * `EmployeeHired` → the entity's auto-enrollment policies: per policy, the new hire is enrolled
 * from the start date plus the waiting period, and once more per anniversary while the policy
 * escalates the deduction (one request per scheduled date, so each date's enrollment is a job of
 * its own). No policy: the saga ends at once with the outcome `no_policy`; every request stale
 * (a later change is already applied): it ends `stale`.
 */
export function planNewHire(event: EmployeeHired, scope: HrisScope, policies: readonly StoredPolicy[], now: Date): HrisSagaPlan {
  const { individual_id: individualId, start_date: startDate } = event.data;
  const sagaId = newId();
  const at = now.toISOString();
  const saga: HrisSagaPlan['saga'] = {
    id: sagaId,
    type: 'new_hire',
    connectionId: scope.connection.id,
    entityId: scope.entity.id,
    sourceEventId: event.id,
    steps: [{ at, name: 'employee_hired', detail: { event_id: event.id, individual_id: individualId, start_date: startDate } }],
    at: now,
  };
  if (policies.length === 0) return { saga: { ...saga, steps: [...saga.steps, { at, name: 'no_policy' }], state: 'completed', outcome: 'no_policy' }, requests: [] };
  const today = utcDateOf(now);
  const requests: HrisSagaPlan['requests'] = [];
  for (const policy of policies) {
    const schedule = newHireSchedule(policy, startDate, today);
    saga.steps.push({ at, name: 'policy_applied', detail: { policy_id: policy.id, benefit_id: policy.benefitId, effective_dates: schedule.map((s) => s.effectiveDate) } });
    for (const step of schedule) {
      requests.push({
        what: `policy ${policy.id} (benefit ${policy.benefitId})`,
        scope,
        benefitId: policy.benefitId,
        work: {
          operation: 'enroll',
          elements: [{ individual_id: individualId, configuration: { ...enrollBodyConfigurationOf(step.configuration, benefitGroupOf(policy.benefitType)), effective_date: step.effectiveDate } }],
        },
        context: { sagaId, occurredAt: new Date(event.occurred_at), scheduledByPolicy: true },
      });
    }
  }
  return { saga, requests, whenNothingOpened: staleEnd(now) };
}
