import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ContributionChanged } from '../domain/hris-events/hris-event';
import { Clock, CLOCK } from '../domain/shared/clock';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';
import { EnrollIndividualsCommand } from '../modules/enrollments/commands/enrollment-commands';
import { HrisScope } from './hris-saga';
import { SagaCommands } from '../modules/hris-events/saga-commands';

/**
 * `ContributionChanged` → enroll with the new configuration (overwrite) from its effective
 * date. A change older (`occurred_at`) than the one the enrollment already reflects is left
 * alone: the saga ends with the outcome `stale`.
 */
@Injectable()
export class ContributionChangeSaga {
  constructor(
    private readonly sagas: SagasRepository,
    private readonly commands: SagaCommands,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(manager: EntityManager, event: ContributionChanged, scope: HrisScope): Promise<string> {
    const now = this.clock.now();
    const { individual_id: individualId, benefit_id: benefitId, configuration } = event.data;
    const effectiveDate = event.data.effective_date ?? configuration.effective_date;
    const sagaId = await this.sagas.start(manager, {
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
    });
    const result = await this.commands.execute(
      new EnrollIndividualsCommand(
        scope,
        benefitId,
        [{ individual_id: individualId, configuration: { ...configuration, effective_date: effectiveDate } }],
        { sagaId, occurredAt: new Date(event.occurred_at) },
      ),
      `benefit ${benefitId}`,
    );
    if (result.jobId === null) {
      await this.sagas.step(manager, sagaId, [{ at: now.toISOString(), name: 'stale_ignored', detail: { reason: 'a later change is already applied' } }], now, {
        state: 'completed',
        outcome: 'stale',
      });
    }
    return sagaId;
  }
}
