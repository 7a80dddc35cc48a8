import { Injectable, OnModuleInit } from '@nestjs/common';
import {
  EnrollmentChangesSuperseded,
  EnrollmentGroupProcessed,
  EnrollmentJobEnded,
  EnrollmentJobOpened,
} from '../domain/enrollments/enrollment-events';
import { DomainEventBus } from '../domain/events/domain-event-bus';
import { JobEnded, JobRetried } from '../domain/jobs/job-events';
import { SUPERSEDED } from '../domain/sagas/saga';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';

type Followed = EnrollmentJobOpened | EnrollmentChangesSuperseded | EnrollmentGroupProcessed | EnrollmentJobEnded;

/**
 * An enrollment request, followed to its end from the enrollment lifecycle's events, in the
 * transaction that produced them: requested → (individuals taken over by later requests) → each
 * effective-date group processed → the job ended, then completed or failed. A request made
 * through the REST API is a saga of its own (`enrollment`); one made by an HRIS saga is a step
 * of that saga, which waits on its job. A job whose every individual was taken over counts as
 * superseded (cancelled), not failed.
 */
@Injectable()
export class EnrollmentSaga implements OnModuleInit {
  constructor(
    private readonly bus: DomainEventBus,
    private readonly sagas: SagasRepository,
  ) {}

  onModuleInit(): void {
    // Sagas may wait on any job (the ops dashboard shows them beside it); enrollment jobs end through the lifecycle.
    this.bus.subscribe<JobEnded | JobRetried>([JobEnded, JobRetried], async (events) => {
      const progress = this.sagas.progress;
      for (const event of events) {
        if (event instanceof JobEnded) progress.jobEnded(event.jobId, event.status, event.at);
        else progress.jobRetried(event.jobId, event.at);
      }
    });
    this.bus.subscribe<Followed>([EnrollmentJobOpened, EnrollmentChangesSuperseded, EnrollmentGroupProcessed, EnrollmentJobEnded], (events) =>
      this.follow(events),
    );
  }

  async follow(events: readonly Followed[]): Promise<void> {
    const progress = this.sagas.progress;
    for (const event of events) {
      progress.seen(event.scope.at);
      const at = event.scope.at.toISOString();
      if (event instanceof EnrollmentJobOpened) {
        const step = {
          at,
          name: `${event.job.operation}_requested`,
          detail: {
            benefit_id: event.scope.benefitId,
            job_id: event.job.id,
            job_kind: event.job.kind,
            groups: event.groups.map((g) => ({ effective_date: g.effectiveDate, individuals: g.items.length })),
          },
        };
        let sagaId = event.sagaId;
        if (sagaId === undefined) {
          sagaId = progress.start({ type: 'enrollment', connectionId: event.scope.connectionId, entityId: event.scope.entityId, steps: [step], at: event.scope.at });
        } else {
          progress.step(sagaId, step);
        }
        progress.waitFor(sagaId, event.job.id, 'pending');
      } else if (event instanceof EnrollmentChangesSuperseded) {
        progress.stepOfJob(event.jobId, {
          at,
          name: 'individuals_superseded',
          detail: { by_job_id: event.byJobId, effective_date: event.effectiveDate, individuals: event.individualIds.length },
        });
      } else if (event instanceof EnrollmentGroupProcessed) {
        progress.stepOfJob(event.jobId, {
          at,
          name: 'group_processed',
          detail: { effective_date: event.effectiveDate, operation: event.operation, succeeded: event.succeeded, failed: event.results.length - event.succeeded },
        });
      } else {
        progress.jobEnded(event.job.id, event.superseded ? SUPERSEDED : event.status, event.scope.at);
      }
    }
  }
}
