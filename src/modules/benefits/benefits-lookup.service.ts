import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../domain/benefits/benefit';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { BenefitType } from '../../domain/providers/provider';
import { employerRefOf, PROVIDER_PORT, ProviderPort } from '../../domain/providers/provider-port';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { notFound } from '../../domain/shared/domain-error';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitsRepository } from './benefits.repository';

export interface BenefitScope {
  connection: Connection;
  entity: ConnectionEntity;
}

/**
 * Finds the benefit an operation names. A benefit the service has not seen may already run at
 * an Automated provider (a plan the employer had before connecting): it is looked up live and
 * recorded, so enrollments can name it like any other.
 */
@Injectable()
export class BenefitsLookup {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly benefits: BenefitsRepository,
    private readonly catalogue: ProviderCatalogue,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The entity's benefit, or 404 `benefit_not_found`. */
  async require({ connection, entity }: BenefitScope, benefitId: string): Promise<Benefit> {
    const known = await this.benefits.findOfEntity(entity.id, benefitId, this.uow.manager);
    if (known) return known;
    const found = this.assisted(connection) ? undefined : await this.provider.benefit(employerRefOf(connection, entity), benefitId);
    if (!found) throw notFound(`No benefit ${benefitId} in this entity`, 'benefit_not_found');
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

  assisted(connection: Connection): boolean {
    return this.catalogue.isAssistedConnection(connection);
  }
}
