import { Job } from '../../domain/jobs/job';

/** What a synced read answered from: the entity's last completed sync, and the connection's sync queued or running. */
export interface SyncedAsOf {
  completedAt: Date;
  openSync?: Pick<Job, 'id' | 'kind' | 'status'>;
}

/**
 * The message of a per-item 404. A live read asks the provider, so the id is not there. A
 * synced read answers from the last sync, and the record may be newer (a pay run or a hire at
 * the provider since): the message says when that sync was, what shows it, and the sync under way.
 */
export function notFoundMessage(what: { live: string; synced: string; newer: string }, asOf: SyncedAsOf | undefined): string {
  if (!asOf) return what.live;
  const message =
    `${what.synced} in this entity's data as of its last sync (${asOf.completedAt.toISOString()}). ` +
    `${what.newer} shows after the next sync (POST /jobs/automated).`;
  const open = asOf.openSync;
  if (!open) return message;
  const state = open.status === 'pending' ? 'queued' : 'running';
  // An Assisted sandbox connection's sync has no id a client can poll.
  return open.kind === 'automated' ? `${message} Sync ${open.id} is ${state} (GET /jobs/automated/${open.id}).` : `${message} A sync is ${state}.`;
}

export const paymentNotFound = (id: string) => ({
  live: `No payment ${id} for this entity`,
  synced: `No payment ${id}`,
  newer: 'A pay run made since',
});

export const individualNotFound = (id: string) => ({
  live: `No individual ${id} for this entity`,
  synced: `No individual ${id}`,
  newer: 'Someone added since',
});

export const employmentNotFound = (id: string) => ({
  live: `No employment for individual ${id} in this entity`,
  synced: `No employment for individual ${id}`,
  newer: 'Someone added since',
});
