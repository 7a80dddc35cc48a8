import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../domain/benefits/benefit';
import { isAlive } from '../../domain/benefits/benefit-visibility';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { BenefitType } from '../../domain/providers/provider';
import { PROVIDER_BEHAVIOURS, ProviderBehaviour, ProviderBehaviours } from '../../domain/providers/provider-behaviour';
import { employerRefOf } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, notFound } from '../../domain/shared/domain-error';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitsRepository } from './benefits.repository';

export interface BenefitScope {
  connection: Connection;
  entity: ConnectionEntity;
}

/**
 * Finds the benefit an operation names. A benefit whose creation failed is not there. One the
 * service has not seen may already run at an Automated provider (a plan the employer had before
 * connecting): it is looked up live and recorded under its own id, so enrollments can name it
 * like any other.
 */
@Injectable()
export class BenefitsLookup {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly benefits: BenefitsRepository,
    @Inject(PROVIDER_BEHAVIOURS) private readonly behaviours: ProviderBehaviours,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The entity's benefit, or 404 `benefit_not_found` (unknown, another entity's, or its creation failed). */
  async require(scope: BenefitScope, benefitId: string): Promise<Benefit> {
    const { connection, entity } = scope;
    const missing = () => notFound(`No benefit ${benefitId} in this entity`, 'benefit_not_found');
    const known = await this.benefits.findKnownOfEntity(entity.id, benefitId, this.uow.manager);
    if (known) {
      if (!isAlive(known)) throw missing();
      return known.benefit;
    }
    const found = await this.behaviourOf(scope).benefitAtProvider(employerRefOf(connection, entity), benefitId);
    if (!found) throw missing();
    const now = this.clock.now();
    const { benefit } = await this.uow.transaction((manager) =>
      this.benefits.insertOrFind(
        {
          id: found.benefit_id,
          connectionId: connection.id,
          entityId: entity.id,
          type: found.type as BenefitType,
          description: found.description,
          frequency: found.frequency,
          companyContribution: found.company_contribution,
          origin: 'provider',
          jobId: null,
          createdAt: now,
          updatedAt: now,
        },
        manager,
      ),
    );
    return benefit;
  }

  /**
   * require() for many, answering each benefit or the DomainError require() would throw, in
   * order: the known ones in one read; one the service has not seen is looked up as require() does.
   */
  async requireMany(items: readonly { scope: BenefitScope; benefitId: string }[]): Promise<(Benefit | DomainError)[]> {
    const known = await this.benefits.findKnownOfEntities(
      items.map((i) => ({ entityId: i.scope.entity.id, benefitId: i.benefitId })),
      this.uow.manager,
    );
    return Promise.all(
      items.map(async ({ scope, benefitId }) => {
        const found = known.get(`${scope.entity.id}/${benefitId.toLowerCase()}`);
        if (found) return isAlive(found) ? found.benefit : notFound(`No benefit ${benefitId} in this entity`, 'benefit_not_found');
        try {
          return await this.require(scope, benefitId);
        } catch (error) {
          if (error instanceof DomainError) return error;
          throw error;
        }
      }),
    );
  }

  behaviourOf({ connection }: BenefitScope): ProviderBehaviour {
    return this.behaviours.of(connection);
  }
}
