import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BenefitJobParams } from '../../domain/benefits/benefit-job-params';
import { Connection } from '../../domain/connections/connection';
import { Job } from '../../domain/jobs/job';

export interface AssistedWorkRequest {
  connection: Connection;
  entityId: string;
  work: BenefitJobParams;
}

/**
 * Benefit work on an Assisted provider: done by hand. Opening it creates, in the caller's
 * transaction, a manual job (`kind = 'manual'`, status pending, type = the work's type, params =
 * the work's params) and an ops task due in 2 business days that completes or fails it.
 */
@Injectable()
export class AssistedWorkService {
  async open(manager: EntityManager, request: AssistedWorkRequest): Promise<Job> {
    void manager;
    void request;
    throw new Error('AssistedWorkService.open is not built yet');
  }
}
