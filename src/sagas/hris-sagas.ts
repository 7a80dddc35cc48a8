import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../domain/enrollments/enrollment-ledger.repository';
import { DomainEventBus } from '../domain/events/domain-event-bus';
import { HrisEventAccepted } from '../domain/hris-events/hris-event-accepted';
import { Clock, CLOCK } from '../domain/shared/clock';
import { EnrollmentRequestOrder, OpenEnrollmentRequestsCommand } from '../modules/enrollments/commands/enrollment-commands';
import { PoliciesRepository } from '../modules/policies/policies.repository';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';
import { planContributionChange } from './contribution-change.saga';
import { HrisSagaPlan } from './hris-saga-plan';
import { planNewHire } from './new-hire.saga';
import { planTermination } from './termination.saga';

/**
 * The HRIS sagas (new hire, contribution change, termination), run for a batch of accepted
 * events at once, in the events' inbox transaction: what each event's saga needs is read once
 * for the batch (policies, the terminated individuals' enrollments), every saga is planned,
 * and their enrollment requests go through one command. An event whose request the command
 * refuses (the REST API's own 4xx) is refused whole: neither its saga nor any of its requests is
 * written, and it is dead-lettered with that reason; the others apply.
 */
@Injectable()
export class HrisSagas implements OnModuleInit {
  constructor(
    private readonly bus: DomainEventBus,
    private readonly commands: CommandBus,
    private readonly sagas: SagasRepository,
    private readonly policies: PoliciesRepository,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.bus.subscribe([HrisEventAccepted], (accepted) => this.run(accepted));
  }

  async run(events: readonly HrisEventAccepted[]): Promise<void> {
    // One saga per event: an event whose id already started one in its connection was applied
    // (the inbox forgot it: it searches only the days since the event happened, and keeps a
    // week). Refused, so it is dead-lettered rather than applied twice or retried for ever.
    const started = await this.sagas.eventsWithSagas(events.map((a) => ({ eventId: a.event.id, connectionId: a.scope.connection.id })));
    const accepted = events.filter((a) => {
      if (!started.has(`${a.event.id.toLowerCase()}/${a.scope.connection.id}`)) return true;
      a.refuse(`Event ${a.event.id} was already applied to connection ${a.scope.connection.id}: an event id is used once`);
      return false;
    });
    const now = this.clock.now();
    const hires = accepted.filter((a) => a.event.type === 'EmployeeHired');
    const terminations = accepted.filter((a) => a.event.type === 'EmployeeTerminated');
    const policies = await this.policies.activeForEntities(hires.map((a) => ({ connectionId: a.scope.connection.id, entityId: a.scope.entity.id })));
    const enrollments = await this.ledgers.enrollmentsOfIndividuals(terminations.map((a) => ({ entityId: a.scope.entity.id, individualId: a.event.data.individual_id })));

    const plans = accepted.map((a): HrisSagaPlan => {
      const { event, scope } = a;
      switch (event.type) {
        case 'EmployeeHired':
          return planNewHire(event, scope, policies.get(scope.entity.id) ?? [], now);
        case 'ContributionChanged':
          return planContributionChange(event, scope, now);
        case 'EmployeeTerminated':
          return planTermination(event, scope, enrollments.get(`${scope.entity.id}/${event.data.individual_id.toLowerCase()}`) ?? new Map(), now);
      }
    });
    const requests: EnrollmentRequestOrder[] = plans.flatMap((plan, i) => plan.requests.map((r) => ({ ...r, owner: String(i) })));
    const { results, refused } = await this.commands.execute(new OpenEnrollmentRequestsCommand(requests));
    accepted.forEach((a, i) => {
      const reason = refused.get(String(i));
      if (reason !== undefined) a.refuse(reason);
    });

    // The sagas of the events that apply, written with their requests' progress before the commit.
    const progress = this.sagas.progress;
    const opened = new Set(requests.flatMap((r, k) => (results[k]?.jobId ? [r.owner] : [])));
    plans.forEach((plan, i) => {
      if (refused.has(String(i))) return;
      progress.start(plan.saga);
      // A saga none of whose requests opened a job has nothing to wait on: it ends now.
      if (plan.whenNothingOpened && plan.requests.length > 0 && !opened.has(String(i))) {
        progress.end(plan.saga.id, plan.whenNothingOpened.step, 'completed', plan.whenNothingOpened.outcome, now);
      }
    });
  }
}
