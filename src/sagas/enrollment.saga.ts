import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ChangeStatus } from '../domain/enrollments/enrollment-change';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../domain/enrollments/enrollment-ledger.repository';
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
 * superseded (cancelled), not failed. The HRIS events of one batch may share a job
 * (shared-jobs.ts): each saga then follows its own individuals in it, their steps and their
 * outcome (superseded when they all were taken over, failed when none succeeded).
 */
@Injectable()
export class EnrollmentSaga implements OnModuleInit {
  constructor(
    private readonly bus: DomainEventBus,
    private readonly sagas: SagasRepository,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
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
    // How each individual of the jobs that end here came out, for the sagas sharing one of them.
    const ended = events.filter((e): e is EnrollmentJobEnded => e instanceof EnrollmentJobEnded).map((e) => e.job.id);
    const outcomes = ended.length === 0 ? new Map<string, Map<string, ChangeStatus>>() : await this.ledgers.individualOutcomes(ended);
    for (const event of events) {
      progress.seen(event.scope.at);
      const at = event.scope.at.toISOString();
      if (event instanceof EnrollmentJobOpened) {
        const step = (own: ReadonlySet<string> | null) => ({
          at,
          name: `${event.job.operation}_requested`,
          detail: {
            benefit_id: event.scope.benefitId,
            job_id: event.job.id,
            job_kind: event.job.kind,
            groups: event.groups
              .map((g) => ({ effective_date: g.effectiveDate, individuals: own ? g.items.filter((i) => own.has(i.individualId)).length : g.items.length }))
              .filter((g) => g.individuals > 0),
          },
        });
        if (event.sagas.length === 0) {
          const sagaId = progress.start({ type: 'enrollment', connectionId: event.scope.connectionId, entityId: event.scope.entityId, steps: [step(null)], at: event.scope.at });
          progress.waitFor(sagaId, event.job.id, 'pending');
          continue;
        }
        // A job one saga has to itself is that saga's whole; a shared one, each saga's own individuals.
        const shared = event.sagas.length > 1;
        for (const { sagaId, individualIds } of event.sagas) {
          progress.step(sagaId, step(shared ? new Set(individualIds) : null));
          progress.waitFor(sagaId, event.job.id, 'pending', shared ? individualIds : undefined);
        }
      } else if (event instanceof EnrollmentChangesSuperseded) {
        progress.stepOfJob(event.jobId, (own) => {
          const theirs = own ? event.individualIds.filter((id) => own.has(id)) : event.individualIds;
          if (theirs.length === 0) return undefined;
          return { at, name: 'individuals_superseded', detail: { by_job_id: event.byJobId, effective_date: event.effectiveDate, individuals: theirs.length } };
        });
      } else if (event instanceof EnrollmentGroupProcessed) {
        progress.stepOfJob(event.jobId, (own) => {
          const theirs = own ? event.results.filter((r) => own.has(r.individual_id)) : event.results;
          if (theirs.length === 0) return undefined;
          const succeeded = theirs.filter((r) => r.code === 200).length;
          return { at, name: 'group_processed', detail: { effective_date: event.effectiveDate, operation: event.operation, succeeded, failed: theirs.length - succeeded } };
        });
      } else {
        progress.jobEnded(event.job.id, event.superseded ? SUPERSEDED : event.status, event.scope.at, outcomes.get(event.job.id));
      }
    }
  }
}
