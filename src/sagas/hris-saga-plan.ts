import { EnrollmentRequestOrder } from '../modules/enrollments/commands/enrollment-commands';
import { NewSaga } from '../modules/saga-state/saga-progress';
import { SagaStep } from '../domain/sagas/saga';

/**
 * What an HRIS saga makes of its event, before anything is written: the saga as it starts (its
 * first steps; its end when it ends at once), the enrollment requests it asks for, and how it
 * ends when none of them opens a job (every individual's enrollment already reflects a later change).
 */
export interface HrisSagaPlan {
  saga: NewSaga & { id: string };
  requests: Omit<EnrollmentRequestOrder, 'owner'>[];
  whenNothingOpened?: { step: SagaStep; outcome: string };
}

/** Every request of the saga was stale: a later change is already applied. */
export const staleEnd = (now: Date) => ({
  step: { at: now.toISOString(), name: 'stale_ignored', detail: { reason: 'a later change is already applied' } },
  outcome: 'stale',
});
