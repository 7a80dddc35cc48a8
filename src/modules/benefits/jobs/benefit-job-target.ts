import { Job } from '../../../domain/jobs/job';
import { EmployerRef, employerRefOf } from '../../../domain/providers/provider-port';
import { ConnectionsRepository } from '../../../infrastructure/database/repositories/connections.repository';
import { JobOutcome } from '../../jobs/job-handler';

/**
 * The employer a benefit job works on, or how the job ends when it can no longer reach it
 * (the connection or entity was disconnected, or the connection needs reauthentication).
 */
export async function benefitJobTarget(connections: ConnectionsRepository, job: Job): Promise<{ ref: EmployerRef } | { outcome: JobOutcome }> {
  const connection = await connections.find(job.connectionId);
  if (!connection || connection.status === 'disconnected') {
    return { outcome: { status: 'error', result: { error: 'The connection was disconnected' } } };
  }
  if (connection.status === 'reauth') {
    return { outcome: { status: 'reauth_error', result: { error: 'The connection needs reauthentication' } } };
  }
  const entity = connection.entities.find((e) => e.id === job.entityId);
  if (!entity || entity.status !== 'active') {
    return { outcome: { status: 'error', result: { error: 'The entity was disconnected' } } };
  }
  return { ref: employerRefOf(connection, entity) };
}
