import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { utcDateOf } from '../domain/benefits/effective-date';
import { benefitGroupOf, enrollBodyConfigurationOf } from '../domain/benefits/enrollment-configuration';
import { EmployeeHired } from '../domain/hris-events/hris-event';
import { newHireSchedule } from '../domain/policies/auto-enrollment-policy';
import { Clock, CLOCK } from '../domain/shared/clock';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';
import { EnrollIndividualsCommand } from '../modules/enrollments/commands/enrollment-commands';
import { PoliciesRepository } from '../modules/policies/policies.repository';
import { HrisScope } from './hris-saga';
import { SagaCommands } from '../modules/hris-events/saga-commands';

/**
 * `EmployeeHired` → the entity's auto-enrollment policies: per policy, the new hire is enrolled
 * from the start date plus the waiting period, and once more per anniversary while the policy
 * escalates the deduction. No policy: the saga ends at once with the outcome `no_policy`.
 */
@Injectable()
export class NewHireSaga {
  constructor(
    private readonly sagas: SagasRepository,
    private readonly policies: PoliciesRepository,
    private readonly commands: SagaCommands,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(manager: EntityManager, event: EmployeeHired, scope: HrisScope): Promise<string> {
    const now = this.clock.now();
    const { individual_id: individualId, start_date: startDate } = event.data;
    const sagaId = await this.sagas.start(manager, {
      type: 'new_hire',
      connectionId: scope.connection.id,
      entityId: scope.entity.id,
      sourceEventId: event.id,
      steps: [{ at: now.toISOString(), name: 'employee_hired', detail: { event_id: event.id, individual_id: individualId, start_date: startDate } }],
      at: now,
    });
    const policies = await this.policies.activeFor(scope.connection.id, scope.entity.id, manager);
    if (policies.length === 0) {
      await this.sagas.step(manager, sagaId, [{ at: now.toISOString(), name: 'no_policy' }], now, { state: 'completed', outcome: 'no_policy' });
      return sagaId;
    }
    const today = utcDateOf(now);
    for (const policy of policies) {
      const schedule = newHireSchedule(policy, startDate, today);
      await this.sagas.step(
        manager,
        sagaId,
        [
          {
            at: now.toISOString(),
            name: 'policy_applied',
            detail: { policy_id: policy.id, benefit_id: policy.benefitId, effective_dates: schedule.map((s) => s.effectiveDate) },
          },
        ],
        now,
      );
      // One request per scheduled date: an individual appears once per request.
      for (const step of schedule) {
        await this.commands.execute(
          new EnrollIndividualsCommand(
            scope,
            policy.benefitId,
            [{ individual_id: individualId, configuration: { ...enrollBodyConfigurationOf(step.configuration, benefitGroupOf(policy.benefitType)), effective_date: step.effectiveDate } }],
            { sagaId, occurredAt: new Date(event.occurred_at) },
          ),
          `policy ${policy.id} (benefit ${policy.benefitId})`,
        );
      }
    }
    return sagaId;
  }
}
