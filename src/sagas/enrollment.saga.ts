import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Job } from '../domain/jobs/job';
import { SagasRepository } from '../modules/saga-state/saga-state.repository';

export interface EnrollmentRequested {
  /** The saga the request belongs to (an HRIS saga); without, a new enrollment saga. */
  sagaId?: string;
  connectionId: string;
  entityId: string;
  operation: 'enroll' | 'unenroll';
  benefitId: string;
  job: Job;
  groups: { effective_date: string; individuals: number }[];
  at: Date;
}

/**
 * An enrollment request, followed to its end: requested → the job (one provider call per
 * effective date, on its date, by the workers) → each group processed → complete or failed when
 * the job ends. Its state moves in the transactions that move the job, never after them, so a
 * crash can neither lose a step nor repeat one.
 */
@Injectable()
export class EnrollmentSaga {
  constructor(private readonly sagas: SagasRepository) {}

  /** The request was accepted (in the transaction that wrote its job): the saga waits on the job. */
  async requested(manager: EntityManager, request: EnrollmentRequested): Promise<string> {
    const step = {
      at: request.at.toISOString(),
      name: `${request.operation}_requested`,
      detail: { benefit_id: request.benefitId, job_id: request.job.id, job_kind: request.job.kind, groups: request.groups },
    };
    let sagaId = request.sagaId;
    if (sagaId === undefined) {
      sagaId = await this.sagas.start(manager, {
        type: 'enrollment',
        connectionId: request.connectionId,
        entityId: request.entityId,
        steps: [step],
        at: request.at,
      });
    } else {
      await this.sagas.step(manager, sagaId, [step], request.at);
    }
    await this.sagas.waitFor(manager, sagaId, [{ id: request.job.id, status: request.job.status }], request.at);
    return sagaId;
  }

  /** One effective-date group was submitted (or given up on); in the group's transaction. */
  async groupProcessed(
    manager: EntityManager,
    group: { jobId: string; effectiveDate: string; operation: string; succeeded: number; failed: number },
    at: Date,
  ): Promise<void> {
    await this.sagas.stepOfJob(
      manager,
      group.jobId,
      {
        at: at.toISOString(),
        name: 'group_processed',
        detail: { effective_date: group.effectiveDate, operation: group.operation, succeeded: group.succeeded, failed: group.failed },
      },
      at,
    );
  }

  /** Individuals a later request took over, in the transaction of that request. */
  async superseded(manager: EntityManager, jobId: string, detail: { by_job_id: string; effective_date: string; individuals: number }, at: Date) {
    await this.sagas.stepOfJob(manager, jobId, { at: at.toISOString(), name: 'individuals_superseded', detail }, at);
  }
}
