import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { Benefit, BenefitOrigin } from '../../domain/benefits/benefit';
import { BenefitCreateParams, BenefitJobParams } from '../../domain/benefits/benefit-job-params';
import { BenefitRequest, CompanyBenefitOperation, sameDedupeKey, unsupportedBenefitRequest } from '../../domain/benefits/benefit-request';
import { BenefitRecord, isAlive, visibleBenefit, visibleBenefits } from '../../domain/benefits/benefit-visibility';
import { companyMatchProblems } from '../../domain/benefits/company-match';
import { Connection } from '../../domain/connections/connection';
import { Job } from '../../domain/jobs/job';
import { BENEFIT_TYPES, benefitSupportOf, BenefitsSupport, BenefitType } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { employerRefOf, ProviderBenefit } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { isUuid } from '../employer/dto/uuid-param';
import { JobsRepository } from '../jobs/jobs.repository';
import { BenefitEventsWriter } from '../../infrastructure/messaging/outbox/benefit-events.writer';
import { BenefitScope, BenefitsLookup } from './benefits-lookup.service';
import { BenefitsRepository } from './benefits.repository';

/** What create, register and update answer. */
export interface BenefitJobAnswer {
  benefitId: string;
  jobId: string;
}

const unsupported = (message: string) => new DomainError('unprocessable_request_error', message, { serviceCode: 'unsupported_paramters' });

/**
 * Deductions: create, register, read, update and the provider's capabilities per type. Writes
 * record the benefit, the job that carries the work to the provider (an automated job the
 * workers run, or on an Assisted provider the manual job of an ops task) and the domain event
 * in one transaction; the provider is called by the job, never by the request.
 */
@Injectable()
export class BenefitsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly benefits: BenefitsRepository,
    private readonly lookup: BenefitsLookup,
    private readonly catalogue: ProviderCatalogue,
    private readonly events: BenefitEventsWriter,
    private readonly jobs: JobsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * `POST /employer/benefits`. Dedupes on (entity, type, frequency, description): a benefit the
   * service knows, or a plan the Automated provider already runs, is answered as it is.
   */
  async create(scope: BenefitScope, request: BenefitRequest): Promise<BenefitJobAnswer> {
    const problems = request.companyContribution ? companyMatchProblems(request.companyContribution) : [];
    if (problems.length > 0) throw invalidRequest(`Invalid request: ${problems.join('; ')}`);
    this.assertSupported(scope.connection, request, 'create');

    const known = await this.benefits.findByDedupeKey({ entityId: scope.entity.id, ...request });
    if (known) return this.answerExisting(scope, known.id);
    // Live where the provider can be asked: a plan the employer already runs there under the
    // same key is that benefit, not a second one.
    const atProvider = (await this.lookup.behaviourOf(scope).benefitsAtProvider(this.refOf(scope)))?.find((b) => sameDedupeKey(b, request));
    if (atProvider) {
      const recorded = await this.recordProviderBenefit(scope, atProvider);
      return this.answerExisting(scope, recorded.id);
    }
    return this.open(scope, request, 'created');
  }

  /** `POST /employer/benefits/register`: Assisted providers only; dedupes like create. */
  async register(scope: BenefitScope, request: BenefitRequest): Promise<BenefitJobAnswer> {
    if (!this.lookup.behaviourOf(scope).registersBenefits) {
      // The spec's row: 400 invalid_request_error without a service_code.
      throw new DomainError(
        'invalid_request_error',
        'Register is for Assisted providers only: this connection’s provider is Automated, create the benefit with POST /employer/benefits',
      );
    }
    this.assertSupported(scope.connection, request, 'create');
    const known = await this.benefits.findByDedupeKey({ entityId: scope.entity.id, ...request });
    if (known) return this.answerExisting(scope, known.id);
    return this.open(scope, request, 'registered');
  }

  /** `POST /employer/benefits/{id}`: a new description, applied by a job. */
  async update(scope: BenefitScope, benefitId: string, description: string): Promise<BenefitJobAnswer> {
    const benefit = await this.lookup.require(scope, benefitId);
    this.assertSupported(scope.connection, { type: benefit.type, frequency: null, companyContribution: null }, 'update');
    const taken = await this.benefits.findByDedupeKey({ ...benefit, description });
    if (taken && taken.id !== benefit.id) {
      throw new DomainError(
        'conflict_error',
        `Benefit ${taken.id} already has type ${benefit.type}, frequency ${benefit.frequency ?? 'null'} and this description`,
        { serviceCode: 'benefit_already_exists' },
      );
    }
    const work: BenefitJobParams = { type: 'benefit_update', params: { benefit_id: benefit.id, description } };
    const job = await this.uow.transaction(async (manager) => {
      // Serializes writes of this benefit, so its events are published in commit order.
      await this.benefits.findKnownOfEntity(scope.entity.id, benefit.id, manager, { lock: true });
      const job = await this.enqueue(scope, work);
      await this.events.record(manager, [
        {
          type: 'BenefitUpdated',
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          data: { benefit_id: benefit.id, description, previous_description: benefit.description, job_id: job.id },
        },
      ]);
      return job;
    });
    return { benefitId: benefit.id, jobId: job.id };
  }

  /** `GET /employer/benefits`: live where the provider can be asked, else the service's record. */
  async list(scope: BenefitScope): Promise<BenefitRecord[]> {
    const atProvider = await this.lookup.behaviourOf(scope).benefitsAtProvider(this.refOf(scope));
    const known = await this.benefits.listKnownOfEntity(scope.entity.id);
    const seen = new Set(known.map((k) => k.benefit.id));
    const unseen = (atProvider ?? []).filter((b) => !seen.has(b.benefit_id));
    if (unseen.length > 0) await this.uow.transaction((manager) => this.recordProviderBenefits(scope, unseen, manager));
    return visibleBenefits(atProvider, known);
  }

  /** `GET /employer/benefits/{id}`: same rule as the list, for one benefit; 404 otherwise. */
  async get(scope: BenefitScope, benefitId: string): Promise<BenefitRecord> {
    const known = await this.benefits.findKnownOfEntity(scope.entity.id, benefitId);
    const atProvider = isUuid(benefitId) ? await this.lookup.behaviourOf(scope).benefitAtProvider(this.refOf(scope), benefitId) : undefined;
    // Live where the provider can be asked: its version of the benefit; one not seen before is recorded.
    if (atProvider && !known) await this.uow.transaction((manager) => this.recordProviderBenefits(scope, [atProvider], manager));
    const visible = visibleBenefit(atProvider, known);
    if (!visible) throw notFound(`No benefit ${benefitId} in this entity`, 'benefit_not_found');
    return visible;
  }

  /**
   * `GET /employer/benefits/meta`: per benefit type, what the connection's provider supports
   * through the connection's authentication method, in `GET /providers`' `benefits_support`
   * shape (null: the type is not supported).
   */
  meta(connection: Connection): BenefitsSupport {
    const provider = this.catalogue.get(connection.providerId);
    return Object.fromEntries(BENEFIT_TYPES.map((type) => [type, benefitSupportOf(provider, type, connection.authenticationType)])) as BenefitsSupport;
  }

  // ---- helpers ----

  private assertSupported(connection: Connection, request: Pick<BenefitRequest, 'type' | 'frequency' | 'companyContribution'>, operation: CompanyBenefitOperation) {
    const provider = this.catalogue.find(connection.providerId);
    const support = provider ? benefitSupportOf(provider, request.type, connection.authenticationType) : null;
    const reason = unsupportedBenefitRequest(support, request, operation);
    if (reason) throw unsupported(reason);
  }

  /** A new benefit with the job that takes it to the provider, and its event. */
  private async open(scope: BenefitScope, request: BenefitRequest, origin: Extract<BenefitOrigin, 'created' | 'registered'>): Promise<BenefitJobAnswer> {
    const now = this.clock.now();
    const answer = await this.uow.transaction(async (manager) => {
      const { benefit, created } = await this.benefits.insertOrFind(
        {
          id: randomUUID(),
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          type: request.type,
          description: request.description,
          frequency: request.frequency,
          companyContribution: request.companyContribution,
          origin,
          jobId: null,
          createdAt: now,
          updatedAt: now,
        },
        manager,
      );
      // A concurrent identical request won: answer its benefit and job.
      if (!created) return { benefitId: benefit.id, jobId: benefit.jobId, job: undefined as Job | undefined };
      const job = await this.enqueue(scope, creationWork(benefit, origin));
      await this.benefits.setJob(benefit.id, job.id, now, manager);
      await this.events.record(manager, [
        {
          type: origin === 'created' ? 'BenefitCreated' : 'BenefitRegistered',
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          data: { ...creationWork(benefit, origin).params, origin, job_id: job.id },
        },
      ]);
      return { benefitId: benefit.id, jobId: job.id, job };
    });
    if (answer.job === undefined) return this.answerExisting(scope, answer.benefitId);
    return { benefitId: answer.benefitId, jobId: answer.job.id };
  }

  /**
   * A create or register that names a benefit already there: its benefit_id and the job that
   * made it. A benefit found at the provider has no such job: it gets a job that is complete at
   * once, so every job_id answered can be polled. A creation that failed is tried again under
   * the same benefit_id (the provider's create is idempotent on it) with a new job.
   */
  private async answerExisting(scope: BenefitScope, benefitId: string): Promise<BenefitJobAnswer> {
    const answer = await this.uow.transaction(async (manager) => {
      const known = await this.benefits.findKnownOfEntity(scope.entity.id, benefitId, manager, { lock: true });
      if (!known) throw new Error(`benefit ${benefitId} vanished while being answered`);
      const { benefit } = known;
      if (benefit.jobId !== null && isAlive(known)) return { jobId: benefit.jobId };
      const now = this.clock.now();
      let job: Job;
      if (benefit.jobId === null) {
        job = await this.completedJob(manager, scope, creationWork(benefit, 'created'));
      } else {
        const origin = benefit.origin === 'registered' ? 'registered' : 'created';
        job = await this.enqueue(scope, creationWork(benefit, origin));
      }
      await this.benefits.setJob(benefit.id, job.id, now, manager);
      return { jobId: job.id };
    });
    return { benefitId, jobId: answer.jobId };
  }

  /** Work for the provider, as the connection's provider takes it: a job the workers run, or an ops task's manual job. */
  private enqueue(scope: BenefitScope, work: BenefitJobParams): Promise<Job> {
    return this.lookup.behaviourOf(scope).openBenefitWork({ connectionId: scope.connection.id, entityId: scope.entity.id }, work);
  }

  /** A benefit_create job with nothing left to do: the benefit already runs at the provider (an automated job, pollable). */
  private async completedJob(manager: EntityManager, scope: BenefitScope, work: BenefitJobParams): Promise<Job> {
    const now = this.clock.now();
    const job = await this.jobs.insert(
      {
        id: randomUUID(),
        connectionId: scope.connection.id,
        entityId: scope.entity.id,
        kind: 'automated',
        type: work.type,
        params: work.params as unknown as Record<string, unknown>,
        createdAt: now,
        // Complete as it is made: no worker is to lease it.
        queued: false,
      },
      manager,
    );
    await manager.query(`UPDATE jobs SET status = 'complete', started_at = $2, completed_at = $2, result = $3 WHERE id = $1`, [
      job.id,
      now,
      JSON.stringify({ benefit_id: (work.params as BenefitCreateParams).benefit_id, already_at_provider: true }),
    ]);
    return { ...job, status: 'complete', startedAt: now, completedAt: now };
  }

  private async recordProviderBenefit(scope: BenefitScope, found: ProviderBenefit): Promise<Benefit> {
    return this.uow.transaction(async (manager) => {
      const [recorded] = await this.recordProviderBenefits(scope, [found], manager);
      return recorded;
    });
  }

  /** Benefits found at the provider, recorded (origin `provider`) so later calls can name them. */
  private async recordProviderBenefits(scope: BenefitScope, found: ProviderBenefit[], manager: EntityManager): Promise<Benefit[]> {
    const now = this.clock.now();
    const recorded: Benefit[] = [];
    for (const b of found) {
      const existing = await this.benefits.findOfEntity(scope.entity.id, b.benefit_id, manager);
      if (existing) {
        recorded.push(existing);
        continue;
      }
      const { benefit } = await this.benefits.insertOrFind(
        {
          id: b.benefit_id,
          connectionId: scope.connection.id,
          entityId: scope.entity.id,
          type: b.type as BenefitType,
          description: b.description,
          frequency: b.frequency,
          companyContribution: b.company_contribution,
          origin: 'provider',
          jobId: null,
          createdAt: now,
          updatedAt: now,
        },
        manager,
      );
      recorded.push(benefit);
    }
    return recorded;
  }

  private refOf(scope: BenefitScope) {
    return employerRefOf(scope.connection, scope.entity);
  }
}

/** The params of the job (and ops task) that creates or registers the benefit at the provider. */
function creationWork(benefit: Benefit, origin: 'created' | 'registered'): BenefitJobParams & { params: BenefitCreateParams } {
  return {
    type: origin === 'created' ? 'benefit_create' : 'benefit_register',
    params: {
      benefit_id: benefit.id,
      type: benefit.type,
      description: benefit.description,
      frequency: benefit.frequency,
      company_contribution: benefit.companyContribution,
    },
  };
}
