import { EntityManager } from 'typeorm';
import { newId } from '../../domain/shared/new-id';
import { insertNewJobs } from '../../infrastructure/database/new-jobs';
import { DEDUCTION_RECONCILIATION } from './deduction-reconciliation.handler';

/**
 * Queues the reconciliation of what a sync brought, in the transaction that switches the entity
 * to the new data: the job exists if and only if the data does. An entity that runs no benefit
 * through the service has nothing to reconcile and gets no job.
 */
export async function enqueueReconciliation(
  manager: EntityManager,
  sync: { connectionId: string; entityId: string; syncJobId: string | null; at: Date },
): Promise<boolean> {
  const [{ runs }] = await manager.query(`SELECT EXISTS (SELECT 1 FROM benefits WHERE entity_id = $1) AS runs`, [sync.entityId]);
  if (!runs) return false;
  await manager.query(
    ...insertNewJobs([
      {
        id: newId(),
        connection_id: sync.connectionId,
        entity_id: sync.entityId,
        kind: 'internal',
        type: DEDUCTION_RECONCILIATION,
        params: { sync_job_id: sync.syncJobId },
        created_at: sync.at,
        scheduled_at: sync.at,
      },
    ]),
  );
  return true;
}
