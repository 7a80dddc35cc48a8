import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Benefit } from '../../../domain/benefits/benefit';
import { BenefitEnrollParams, BenefitUnenrollParams, EnrollmentConfigurationParams } from '../../../domain/benefits/benefit-job-params';
import { startOfUtcDate } from '../../../domain/benefits/effective-date';
import { repeatedIds } from '../../../domain/benefits/enrollment-job';
import { Connection } from '../../../domain/connections/connection';
import { Job } from '../../../domain/jobs/job';
import { BenefitFeaturesAndOperations, benefitSupportOf, BenefitType } from '../../../domain/providers/provider';
import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { DomainError, invalidRequest } from '../../../domain/shared/domain-error';
import { AssistedWorkService } from '../../assisted/assisted-work.service';
import { BenefitEventsWriter } from '../../benefits/benefit-events.writer';
import { BenefitScope, BenefitsLookup } from '../../benefits/benefits-lookup.service';
import { JobsRepository } from '../../jobs/jobs.repository';
import { EnrollmentsRepository, GroupOperation } from '../enrollments.repository';
import { EnrollmentSaga } from '../../../sagas/enrollment.saga';

/** The internal job that submits one effective-date group to the provider (never pollable). */
export const ENROLLMENT_GROUP_JOB = 'benefit_enrollment_group';

/** Messages beyond this many are summarised, so a 10,000-element body cannot produce a huge error. */
const MAX_LISTED_PROBLEMS = 20;

export interface PlannedGroup {
  operation: GroupOperation;
  effectiveDate: string;
  items: { individual_id: string; configuration?: EnrollmentConfigurationParams }[];
}

/**
 * What enroll and unenroll share: the provider's support, and the one transaction that writes
 * the job (automated with its effective-date groups, or an Assisted ops task's manual job), the
 * saga that follows it, and the job-created event.
 */
@Injectable()
export class EnrollmentRequests {
  constructor(
    readonly lookup: BenefitsLookup,
    private readonly catalogue: ProviderCatalogue,
    private readonly enrollments: EnrollmentsRepository,
    private readonly jobs: JobsRepository,
    private readonly events: BenefitEventsWriter,
    private readonly assistedWork: AssistedWorkService,
    private readonly saga: EnrollmentSaga,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The provider's support for the type through the connection's authentication method. */
  supportOf(connection: Connection, type: BenefitType): { support: BenefitFeaturesAndOperations | null; providerName: string } {
    const provider = this.catalogue.find(connection.providerId);
    if (!provider) return { support: null, providerName: connection.providerId };
    const viaMethod = provider.authentication_methods.some((m) => m.type === connection.authenticationType);
    return {
      support: benefitSupportOf(provider, type, viaMethod ? connection.authenticationType : undefined),
      providerName: provider.display_name,
    };
  }

  /** The job carrying the work, its saga and its event; in the caller's transaction. */
  async open(
    manager: EntityManager,
    request: {
      scope: BenefitScope;
      benefit: Benefit;
      work: { type: 'benefit_enroll'; params: BenefitEnrollParams } | { type: 'benefit_unenroll'; params: BenefitUnenrollParams };
      groups: PlannedGroup[];
      sagaId?: string;
    },
  ): Promise<Job> {
    const { scope, benefit, work, groups } = request;
    const now = this.clock.now();
    const job = this.lookup.assisted(scope.connection)
      ? await this.assistedWork.open(manager, { connection: scope.connection, entityId: scope.entity.id, work })
      : await this.enqueue(manager, scope, benefit, work, groups, now);
    const operation = work.type === 'benefit_enroll' ? 'enroll' : 'unenroll';
    const groupSummary = groups.map((g) => ({ effective_date: g.effectiveDate, individuals: g.items.length }));
    await this.saga.requested(manager, {
      sagaId: request.sagaId,
      connectionId: scope.connection.id,
      entityId: scope.entity.id,
      operation,
      benefitId: benefit.id,
      job,
      groups: groupSummary,
      at: now,
    });
    await this.events.record(manager, [
      {
        type: 'EnrollmentJobCreated',
        connectionId: scope.connection.id,
        entityId: scope.entity.id,
        data: { job_id: job.id, job_kind: job.kind, operation, benefit_id: benefit.id, groups: groupSummary },
      },
    ]);
    return job;
  }

  /** The automated job, its groups and the internal job of each, due on the group's date. */
  private async enqueue(
    manager: EntityManager,
    scope: BenefitScope,
    benefit: Benefit,
    work: { type: string; params: unknown },
    groups: PlannedGroup[],
    now: Date,
  ): Promise<Job> {
    const job = await this.jobs.insert(
      {
        id: randomUUID(),
        connectionId: scope.connection.id,
        entityId: scope.entity.id,
        kind: 'automated',
        type: work.type,
        params: work.params as Record<string, unknown>,
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
}

export function refuseRepeated(ids: string[]): void {
  const repeated = repeatedIds(ids);
  if (repeated.length > 0) {
    throw invalidRequest(`Invalid request: each individual may appear once per request; repeated: ${listed(repeated)}`);
  }
}

export function unprocessable(problems: string[]): DomainError {
  return new DomainError('unprocessable_request_error', `Unsupported by the provider: ${listed(problems)}`, {
    serviceCode: 'unprocessable_parameters',
  });
}

export function listed(problems: string[]): string {
  const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
  return problems.slice(0, MAX_LISTED_PROBLEMS).join('; ') + more;
}
