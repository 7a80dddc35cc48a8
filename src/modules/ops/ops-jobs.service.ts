import { Injectable } from '@nestjs/common';
import { BENEFIT_JOB_TYPES } from '../../domain/benefits/benefit-job-params';
import { DATA_SYNC_ALL, Job } from '../../domain/jobs/job';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { JobHandlerRegistry } from '../jobs/job-handler';
import { JobSignal } from '../jobs/job-signal';
import { JobsRepository } from '../jobs/jobs.repository';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import { JobRetryRegistry } from './job-retry.registry';
import { OpsJobFilter, OpsJobsRepository } from './ops-jobs.repository';

const conflict = (message: string, serviceCode: string) => new DomainError('conflict_error', message, { serviceCode });

/** Jobs for the ops team: every connection's, with why they failed; retry where it is safe. */
@Injectable()
export class OpsJobsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly jobs: JobsRepository,
    private readonly opsJobs: OpsJobsRepository,
    private readonly handlers: JobHandlerRegistry,
    private readonly retriers: JobRetryRegistry,
    private readonly signal: JobSignal,
    private readonly audit: OpsAuditWriter,
  ) {}

  /** Every job type this service can hold: those workers run, and the manual benefit work. */
  knownTypes(): string[] {
    return [...new Set([DATA_SYNC_ALL, ...BENEFIT_JOB_TYPES, ...this.handlers.types()])].sort();
  }

  list(filter: OpsJobFilter, page: { limit: number; offset: number }) {
    if (filter.type !== undefined && !this.knownTypes().includes(filter.type)) {
      throw invalidRequest(`type must be one of: ${this.knownTypes().join(', ')}`);
    }
    return this.opsJobs.list(filter, page);
  }

  async get(id: string): Promise<Job> {
    const job = await this.jobs.find(id);
    if (!job) throw jobNotFound(id);
    return job;
  }

  /** Whether POST …/retry would run the job again now. */
  isRetriable(job: Job): boolean {
    return job.status === 'error' && job.kind !== 'manual' && this.retriers.retrierFor(job.type) !== undefined;
  }

  /** Runs a job in error again through its type's retrier, audited in the same transaction. */
  async retry(id: string, actor: string): Promise<Job> {
    // The ambient unit of work: the sagas that failed on the job (JobRetried) move in it too.
    const job = await this.uow.transaction(async (manager) => {
      await manager.query(`SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, [id]);
      const current = await this.jobs.find(id, manager);
      if (!current) throw jobNotFound(id);
      if (current.status !== 'error') {
        throw conflict(`Job ${id} is ${current.status}; only a job in error can be retried`, 'job_not_in_error');
      }
      if (current.kind === 'manual') {
        throw conflict(`Job ${id} is a manual job: the ops task that resolved it decides its outcome, it is not retried`, 'job_not_retriable');
      }
      const retrier = this.retriers.retrierFor(current.type);
      if (!retrier) {
        throw conflict(`Jobs of type ${current.type} have no retrier: they cannot be retried from the ops API`, 'job_not_retriable');
      }
      await retrier.retry(current, manager);
      await this.audit.record(manager, {
        actor,
        action: 'job.retry',
        targetType: 'job',
        targetId: id,
        detail: { type: current.type, previous_error: current.result?.error ?? null, previous_attempts: current.attempts },
      });
      return (await this.jobs.find(id, manager))!;
    });
    this.signal.nudge();
    return job;
  }
}

const jobNotFound = (id: string) => notFound(`No job ${id}`, 'job_not_found');
