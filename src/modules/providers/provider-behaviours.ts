import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { BenefitJobParams } from '../../domain/benefits/benefit-job-params';
import { EnrollmentGroup, IndividualResult } from '../../domain/enrollments/enrollment-change';
import { Job } from '../../domain/jobs/job';
import { GroupToWork, GroupWorkOutcome, ProviderBehaviour, ProviderBehaviours, WorkScope } from '../../domain/providers/provider-behaviour';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { EmployerRef, PROVIDER_PORT, ProviderBenefit, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';

/**
 * One provider call for effective-date groups of one benefit (a batch's groups, each
 * individual in at most one of them): enrolls with each individual's configuration from its
 * group's date, ends from theirs; the provider's answer per individual, by group.
 */
export async function submitToProvider(
  provider: ProviderPort,
  ref: EmployerRef,
  benefitId: string,
  groups: readonly GroupToWork[],
): Promise<Map<string, IndividualResult[]>> {
  const changes = groups.flatMap((g) =>
    g.changes.map((c) => ({
      groupId: g.groupId,
      change: { individual_id: c.individualId, effective_date: g.effectiveDate, configuration: g.operation === 'enroll' ? c.configuration! : null },
    })),
  );
  const answers = changes.length === 0 ? [] : await provider.applyChanges(ref, benefitId, changes.map((c) => c.change));
  const results = new Map<string, IndividualResult[]>(groups.map((g) => [g.groupId, []]));
  answers.forEach(({ individual_id, code, message }, i) => results.get(changes[i].groupId)!.push({ individual_id, code, ...(message ? { message } : {}) }));
  return results;
}

/**
 * Automated providers: every call is live through the provider port, and the work is jobs the
 * service's workers lease (each effective-date group on its date).
 */
@Injectable()
export class AutomatedProvider implements ProviderBehaviour {
  readonly mode = 'automated' as const;
  readonly jobKind = 'automated' as const;
  readonly registersBenefits = false;
  readonly syncs = { jobKind: 'automated' as const, onRequest: true };

  constructor(
    private readonly uow: UnitOfWork,
    private readonly jobs: JobsRepository,
    private readonly signal: JobSignal,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  benefitsAtProvider(ref: EmployerRef): Promise<ProviderBenefit[]> {
    return this.provider.benefits(ref);
  }

  benefitAtProvider(ref: EmployerRef, benefitId: string): Promise<ProviderBenefit | undefined> {
    return this.provider.benefit(ref, benefitId);
  }

  async openBenefitWork(scope: WorkScope, work: BenefitJobParams): Promise<Job> {
    const job = await this.jobs.insert(
      {
        id: randomUUID(),
        connectionId: scope.connectionId,
        entityId: scope.entityId,
        kind: 'automated',
        type: work.type,
        params: work.params as unknown as Record<string, unknown>,
        createdAt: this.clock.now(),
      },
      this.uow.manager,
    );
    this.uow.afterCommit(() => this.signal.nudge());
    return job;
  }

  planGroups(groups: readonly EnrollmentGroup[]) {
    return { scheduled: [...groups], handedToOps: [] };
  }

  async workGroups(ref: EmployerRef, benefitId: string, groups: readonly GroupToWork[]): Promise<Map<string, GroupWorkOutcome>> {
    const results = await submitToProvider(this.provider, ref, benefitId, groups);
    return new Map([...results].map(([groupId, answers]) => [groupId, { results: answers }]));
  }

  async enrollmentsInForce(ref: EmployerRef, benefitId: string, date: string, individualIds?: readonly string[]) {
    const live = await this.provider.enrollments(ref, benefitId, date, individualIds ? [...individualIds] : undefined);
    return live.map((e) => ({ individualId: e.individual_id, configuration: e.configuration }));
  }
}

/**
 * The one place that tells Automated from Assisted: by the connection's provider in the
 * catalogue (and its authentication method). The Assisted behaviour registers itself here.
 */
@Injectable()
export class ProviderBehavioursRegistry implements ProviderBehaviours {
  private assisted: ProviderBehaviour | undefined;

  constructor(
    private readonly catalogue: ProviderCatalogue,
    private readonly automated: AutomatedProvider,
  ) {}

  registerAssisted(behaviour: ProviderBehaviour): void {
    this.assisted = behaviour;
  }

  of(connection: { providerId: string; authenticationType: string; manual: boolean }): ProviderBehaviour {
    if (!this.catalogue.isAssistedConnection(connection)) return this.automated;
    if (!this.assisted) throw new Error('no behaviour registered for Assisted providers');
    return this.assisted;
  }
}
