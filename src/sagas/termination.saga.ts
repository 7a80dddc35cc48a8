import { utcDateOf } from '../domain/benefits/effective-date';
import { IndividualEnrollment, toEndOnTermination } from '../domain/enrollments/enrollment-ledger';
import { EmployeeTerminated } from '../domain/hris-events/hris-event';
import { HrisScope } from '../domain/hris-events/hris-event-accepted';
import { newId } from '../domain/shared/new-id';
import { HrisSagaPlan } from './hris-saga-plan';

/**
 * `EmployeeTerminated` → unenroll from every benefit in which the provider deducts for the
 * individual now or from a later date, or an enrollment is waiting to start (whatever happened
 * to changes requested since: a refused re-enroll does not keep a terminated employee
 * deducted), effective the end date; a later-dated waiting enrollment (a scheduled escalation) is
 * cancelled with it. Nothing to end: outcome `no_enrollments`.
 */
export function planTermination(event: EmployeeTerminated, scope: HrisScope, enrollments: ReadonlyMap<string, IndividualEnrollment>, now: Date): HrisSagaPlan {
  const { individual_id: individualId, end_date: endDate } = event.data;
  const sagaId = newId();
  const at = now.toISOString();
  const saga: HrisSagaPlan['saga'] = {
    id: sagaId,
    type: 'termination',
    connectionId: scope.connection.id,
    entityId: scope.entity.id,
    sourceEventId: event.id,
    steps: [{ at, name: 'employee_terminated', detail: { event_id: event.id, individual_id: individualId, end_date: endDate } }],
    at: now,
  };
  const today = utcDateOf(now);
  const benefitIds = [...enrollments].filter(([, enrollment]) => toEndOnTermination(enrollment, today)).map(([benefitId]) => benefitId);
  if (benefitIds.length === 0) return { saga: { ...saga, steps: [...saga.steps, { at, name: 'no_enrollments' }], state: 'completed', outcome: 'no_enrollments' }, requests: [] };
  return {
    saga,
    requests: benefitIds.map((benefitId) => ({
      what: `benefit ${benefitId}`,
      scope,
      benefitId,
      work: { operation: 'unenroll', individualIds: [individualId], effectiveDate: endDate },
      context: { sagaId, occurredAt: new Date(event.occurred_at) },
    })),
  };
}
