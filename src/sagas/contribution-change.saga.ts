import { ContributionChanged } from '../domain/hris-events/hris-event';
import { HrisScope } from '../domain/hris-events/hris-event-accepted';
import { newId } from '../domain/shared/new-id';
import { HrisSagaPlan, staleEnd } from './hris-saga-plan';

/**
 * `ContributionChanged` → enroll with the new configuration (overwrite) from its effective
 * date. A change older (`occurred_at`) than the one the enrollment already reflects is left
 * alone: the saga ends with the outcome `stale`.
 */
export function planContributionChange(event: ContributionChanged, scope: HrisScope, now: Date): HrisSagaPlan {
  const { individual_id: individualId, benefit_id: benefitId, configuration } = event.data;
  const effectiveDate = event.data.effective_date ?? configuration.effective_date;
  const sagaId = newId();
  return {
    saga: {
      id: sagaId,
      type: 'contribution_change',
      connectionId: scope.connection.id,
      entityId: scope.entity.id,
      sourceEventId: event.id,
      steps: [
        {
          at: now.toISOString(),
          name: 'contribution_changed',
          detail: { event_id: event.id, individual_id: individualId, benefit_id: benefitId, occurred_at: event.occurred_at },
        },
      ],
      at: now,
    },
    requests: [
      {
        what: `benefit ${benefitId}`,
        scope,
        benefitId,
        work: { operation: 'enroll', elements: [{ individual_id: individualId, configuration: { ...configuration, effective_date: effectiveDate } }] },
        context: { sagaId, occurredAt: new Date(event.occurred_at) },
      },
    ],
    whenNothingOpened: staleEnd(now),
  };
}
