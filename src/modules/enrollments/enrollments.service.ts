import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Benefit } from '../../domain/benefits/benefit';
import { BenefitEnrollParams, BenefitUnenrollParams, EnrollmentConfigurationParams } from '../../domain/benefits/benefit-job-params';
import { resolveEffectiveDate, startOfUtcDate, utcDateOf } from '../../domain/benefits/effective-date';
import { benefitGroupOf, parseConfiguration, unsupportedFeatures } from '../../domain/benefits/enrollment-configuration';
import { EnrollmentItem, groupByEffectiveDate, repeatedIds } from '../../domain/benefits/enrollment-job';
import { Connection } from '../../domain/connections/connection';
import { BenefitFeaturesAndOperations, benefitSupportOf, BenefitType } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { employerRefOf, PROVIDER_PORT, ProviderEnrollmentConfiguration, ProviderPort } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest } from '../../domain/shared/domain-error';
import { AssistedWorkService } from '../assisted/assisted-work.service';
import { BenefitEventsWriter } from '../benefits/benefit-events.writer';
import { BenefitScope, BenefitsLookup } from '../benefits/benefits-lookup.service';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';
import { EnrollmentsRepository, GroupOperation } from './enrollments.repository';

/** The internal job that submits one effective-date group to the provider (never pollable). */
export const ENROLLMENT_GROUP_JOB = 'benefit_enrollment_group';

/** Messages beyond this many are summarised, so a 10,000-element body cannot produce a huge error. */
const MAX_LISTED_PROBLEMS = 20;

export interface EnrollmentElement {
  individual_id: string;
  configuration: unknown;
}

/** An individual's enrollment as `GET …/individuals` answers it. */
export interface EnrollmentView {
  individualId: string;
  configuration: ProviderEnrollmentConfiguration;
}

/**
 * Enrolling and unenrolling individuals in a benefit. A request is validated whole (nothing is
 * written for a bad one), split into one group per effective date and written in ONE
 * transaction: the automated job clients poll, each group with the internal job that submits it
 * on its date, the service's enrollment rows and the job-created event. Assisted providers get
 * a manual job and an ops task instead (AssistedWorkService).
 */
@Injectable()
export class EnrollmentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lookup: BenefitsLookup,
    private readonly catalogue: ProviderCatalogue,
    private readonly enrollments: EnrollmentsRepository,
    private readonly jobs: JobsRepository,
    private readonly signal: JobSignal,
    private readonly events: BenefitEventsWriter,
    private readonly assistedWork: AssistedWorkService,
    @Inject(PROVIDER_PORT) private readonly provider: ProviderPort,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async enroll(scope: BenefitScope, benefitId: string, elements: EnrollmentElement[]): Promise<{ jobId: string }> {
    refuseRepeated(elements.map((e) => e.individual_id));
    const benefit = await this.lookup.require(scope, benefitId);
    const now = this.clock.now();
    const today = utcDateOf(now);

    const group = benefitGroupOf(benefit.type);
    const problems: string[] = [];
    const items: EnrollmentItem[] = [];
    elements.forEach((element, index) => {
      const parsed = parseConfiguration(element.configuration, group, `[${index}].configuration`);
      if (!parsed.ok) return void problems.push(...parsed.problems);
      const date = resolveEffectiveDate(parsed.effectiveDate, today);
      if (!date.ok) return void problems.push(`[${index}].configuration.${date.problem}`);
      items.push({ individualId: element.individual_id.toLowerCase(), effectiveDate: date.date, configuration: parsed.configuration });
    });
    if (problems.length > 0) throw invalidRequest(`Invalid request: ${listed(problems)}`);

    const { support, providerName } = this.supportOf(scope.connection, benefit.type);
    const unsupported = new Set<string>();
    if (support?.supported_operations.individual_benefits.create === 'not_supported_by_provider') {
      unsupported.add(`${providerName} does not support enrolling individuals in ${benefit.type} benefits`);
    }
    for (const item of items) for (const p of unsupportedFeatures(item.configuration, support, benefit.type, providerName)) unsupported.add(p);
    if (unsupported.size > 0) throw unprocessable([...unsupported]);

    const params: BenefitEnrollParams = { benefit_id: benefit.id, groups: groupByEffectiveDate(items) };
    const jobId = await this.dataSource.transaction(async (manager) => {
      await this.enrollments.lockBenefit(benefit.id, manager);
      const job = this.lookup.assisted(scope.connection)
        ? await this.assistedWork.open(manager, { connection: scope.connection, entityId: scope.entity.id, work: { type: 'benefit_enroll', params } })
        : await this.enqueue(manager, scope, benefit, 'benefit_enroll', params, now, params.groups.map((g) => ({
            operation: 'enroll' as const,
            effectiveDate: g.effective_date,
            items: g.items,
          })));
      await this.enrollments.upsertRequested(
        items.map((item) => ({ benefitId: benefit.id, entityId: scope.entity.id, ...item })),
        job.id,
        now,
        manager,
      );
      await this.events.record(manager, [
        {
          type: 'EnrollmentJobCreated',
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          data: {
            job_id: job.id,
            job_kind: job.kind,
            operation: 'enroll',
            benefit_id: benefit.id,
            groups: params.groups.map((g) => ({ effective_date: g.effective_date, individuals: g.items.length })),
          },
        },
      ]);
      return job.id;
    });
    this.signal.nudge();
    return { jobId };
  }

  /** Ends enrollments from the request date on. */
  async unenroll(scope: BenefitScope, benefitId: string, individualIds: string[]): Promise<{ jobId: string }> {
    refuseRepeated(individualIds);
    const benefit = await this.lookup.require(scope, benefitId);
    const { support, providerName } = this.supportOf(scope.connection, benefit.type);
    if (support === null) throw unprocessable([`${providerName} does not support ${benefit.type} benefits`]);
    if (support.supported_operations.individual_benefits.delete === 'not_supported_by_provider') {
      throw unprocessable([`${providerName} does not support unenrolling individuals from ${benefit.type} benefits`]);
    }
    const now = this.clock.now();
    const ids = individualIds.map((id) => id.toLowerCase());
    const params: BenefitUnenrollParams = { benefit_id: benefit.id, effective_date: utcDateOf(now), individual_ids: ids };
    const jobId = await this.dataSource.transaction(async (manager) => {
      await this.enrollments.lockBenefit(benefit.id, manager);
      const job = this.lookup.assisted(scope.connection)
        ? await this.assistedWork.open(manager, { connection: scope.connection, entityId: scope.entity.id, work: { type: 'benefit_unenroll', params } })
        : await this.enqueue(manager, scope, benefit, 'benefit_unenroll', params, now, [
            { operation: 'unenroll', effectiveDate: params.effective_date, items: ids.map((id) => ({ individual_id: id })) },
          ]);
      await this.events.record(manager, [
        {
          type: 'EnrollmentJobCreated',
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          data: {
            job_id: job.id,
            job_kind: job.kind,
            operation: 'unenroll',
            benefit_id: benefit.id,
            groups: [{ effective_date: params.effective_date, individuals: ids.length }],
          },
        },
      ]);
      return job.id;
    });
    this.signal.nudge();
    return { jobId };
  }

  /**
   * Enrollments in force today. Automated: live from the provider (spec: deductions reads are
   * live); Assisted: the service's own record of what ops applied (the provider has no API).
   */
  async inForce(scope: BenefitScope, benefitId: string, individualIds?: string[]): Promise<{ benefit: Benefit; enrollments: EnrollmentView[] }> {
    const benefit = await this.lookup.require(scope, benefitId);
    const today = utcDateOf(this.clock.now());
    if (this.lookup.assisted(scope.connection)) {
      const rows = await this.enrollments.listOfBenefit(benefit.id, { statuses: ['enrolled'], individualIds });
      const enrollments = rows
        .filter((r) => r.effectiveDate <= today && (r.endedOn === null || r.endedOn > today))
        .map((r) => ({ individualId: r.individualId, configuration: r.configuration }));
      return { benefit, enrollments };
    }
    const live = await this.provider.enrollments(employerRefOf(scope.connection, scope.entity), benefit.id, today, individualIds);
    return { benefit, enrollments: live.map((e) => ({ individualId: e.individual_id, configuration: e.configuration })) };
  }

  /** The automated job, its groups and the internal job of each, due on the group's date. */
  private async enqueue(
    manager: EntityManager,
    scope: BenefitScope,
    benefit: Benefit,
    type: 'benefit_enroll' | 'benefit_unenroll',
    params: BenefitEnrollParams | BenefitUnenrollParams,
    now: Date,
    groups: { operation: GroupOperation; effectiveDate: string; items: { individual_id: string; configuration?: EnrollmentConfigurationParams }[] }[],
  ) {
    const job = await this.jobs.insert(
      {
        id: randomUUID(),
        connectionId: scope.connection.id,
        entityId: scope.entity.id,
        kind: 'automated',
        type,
        params: params as unknown as Record<string, unknown>,
        createdAt: now,
      },
      manager,
    );
    for (const group of groups) {
      const groupId = randomUUID();
      await this.enrollments.insertGroup({ id: groupId, jobId: job.id, benefitId: benefit.id, ...group }, manager);
      const due = startOfUtcDate(group.effectiveDate);
      await this.jobs.insert(
        {
          id: randomUUID(),
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          kind: 'internal',
          type: ENROLLMENT_GROUP_JOB,
          params: { group_id: groupId, job_id: job.id },
          createdAt: now,
          scheduledAt: due > now ? due : now,
        },
        manager,
      );
    }
    return job;
  }

  /** The provider's support for the type through the connection's authentication method. */
  private supportOf(connection: Connection, type: BenefitType): { support: BenefitFeaturesAndOperations | null; providerName: string } {
    const provider = this.catalogue.find(connection.providerId);
    if (!provider) return { support: null, providerName: connection.providerId };
    const viaMethod = provider.authentication_methods.some((m) => m.type === connection.authenticationType);
    return {
      support: benefitSupportOf(provider, type, viaMethod ? connection.authenticationType : undefined),
      providerName: provider.display_name,
    };
  }
}

function refuseRepeated(ids: string[]): void {
  const repeated = repeatedIds(ids);
  if (repeated.length > 0) {
    throw invalidRequest(`Invalid request: each individual may appear once per request; repeated: ${listed(repeated)}`);
  }
}

function unprocessable(problems: string[]): DomainError {
  return new DomainError('unprocessable_request_error', `Unsupported by the provider: ${listed(problems)}`, {
    serviceCode: 'unprocessable_parameters',
  });
}

function listed(problems: string[]): string {
  const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
  return problems.slice(0, MAX_LISTED_PROBLEMS).join('; ') + more;
}
