import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EmployeeTerminated } from '../domain/hris-events/hris-event';
import { Clock, CLOCK } from '../domain/shared/clock';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';
import { UnenrollIndividualsCommand } from '../modules/enrollments/commands/enrollment-commands';
import { EnrollmentsRepository } from '../modules/enrollments/enrollments.repository';
import { HrisScope } from './hris-saga';
import { SagaCommands } from '../modules/hris-events/saga-commands';

/**
 * `EmployeeTerminated` → unenroll from every benefit the individual is enrolled in (or waiting
 * to be) through this service, effective the end date; a later-dated waiting enrollment (a
 * scheduled escalation) is cancelled with it. Nothing to end: outcome `no_enrollments`.
 */
@Injectable()
export class TerminationSaga {
  constructor(
    private readonly sagas: SagasRepository,
    private readonly enrollments: EnrollmentsRepository,
    private readonly commands: SagaCommands,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(manager: EntityManager, event: EmployeeTerminated, scope: HrisScope): Promise<string> {
    const now = this.clock.now();
    const { individual_id: individualId, end_date: endDate } = event.data;
    const sagaId = await this.sagas.start(manager, {
      type: 'termination',
      connectionId: scope.connection.id,
      entityId: scope.entity.id,
      sourceEventId: event.id,
      steps: [{ at: now.toISOString(), name: 'employee_terminated', detail: { event_id: event.id, individual_id: individualId, end_date: endDate } }],
      at: now,
    });
    const benefitIds = await this.enrollments.benefitsEnrolling(scope.entity.id, individualId, manager);
    if (benefitIds.length === 0) {
      await this.sagas.step(manager, sagaId, [{ at: now.toISOString(), name: 'no_enrollments' }], now, { state: 'completed', outcome: 'no_enrollments' });
      return sagaId;
    }
    for (const benefitId of benefitIds) {
      await this.commands.execute(
        new UnenrollIndividualsCommand(scope, benefitId, [individualId], endDate, { sagaId, occurredAt: new Date(event.occurred_at) }),
        `benefit ${benefitId}`,
      );
    }
    return sagaId;
  }
}
