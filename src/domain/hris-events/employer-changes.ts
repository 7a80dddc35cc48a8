import { createHash } from 'node:crypto';
import { EmployeeHired, EmployeeTerminated } from './hris-event';

/** What a sync's generation says about one individual, as far as HRIS events care. */
export interface PersonFacts {
  individualId: string;
  /** From the employment; null when the generation has no employment for the individual. */
  startDate: string | null;
  /** From the employment; null while employed. */
  endDate: string | null;
  /** From the individual; null when unknown. */
  dob: string | null;
}

export interface EmployerChangesInput {
  connectionId: string;
  entityId: string;
  /**
   * The people of the generation being replaced; null on the entity's first sync, which is the
   * baseline and not a wave of hires. Each list may leave out anyone who is the same in both
   * generations: an unchanged person yields no event.
   */
  previous: readonly PersonFacts[] | null;
  current: readonly PersonFacts[];
  /** The sync's clock time. */
  occurredAt: Date;
}

export type EmployerChangeEvent = EmployeeHired | EmployeeTerminated;

/**
 * The HRIS events a sync publishes for one entity: `EmployeeHired` for an individual present now
 * and not before, `EmployeeTerminated` for an end date set now that was absent or different
 * before. Ids depend only on what happened (connection, entity, individual, type, date), so a
 * retried sync, or a person who drops out of one sync and comes back, repeats the same id and
 * the consumer's inbox drops the repeat. Ordered by individual id, a hire before its termination.
 */
export function employerChangeEvents(input: EmployerChangesInput): EmployerChangeEvent[] {
  if (input.previous === null) return [];
  const before = new Map(input.previous.map((p) => [p.individualId, p]));
  const occurredAt = input.occurredAt.toISOString();
  const envelope = (type: EmployerChangeEvent['type'], individualId: string, date: string) => ({
    id: hrisEventId({ connectionId: input.connectionId, entityId: input.entityId, individualId, type, date }),
    version: 1,
    occurred_at: occurredAt,
    connection_id: input.connectionId,
    entity_id: input.entityId,
  });

  const events: EmployerChangeEvent[] = [];
  const current = [...input.current].sort((a, b) => (a.individualId < b.individualId ? -1 : a.individualId > b.individualId ? 1 : 0));
  for (const person of current) {
    const was = before.get(person.individualId);
    // Without an employment there is no start date, and an EmployeeHired cannot be stated.
    if (!was && person.startDate) {
      events.push({
        ...envelope('EmployeeHired', person.individualId, person.startDate),
        type: 'EmployeeHired',
        data: { individual_id: person.individualId, start_date: person.startDate, ...(person.dob ? { dob: person.dob } : {}) },
      });
    }
    if (person.endDate && person.endDate !== was?.endDate) {
      events.push({
        ...envelope('EmployeeTerminated', person.individualId, person.endDate),
        type: 'EmployeeTerminated',
        data: { individual_id: person.individualId, end_date: person.endDate },
      });
    }
  }
  return events;
}

/** Namespace of the ids of HRIS events derived from syncs (a fixed, random UUID). */
export const SYNC_HRIS_EVENT_NAMESPACE = '6f1d4a52-3c8e-4b7a-9d2f-0e5c7b1a9e64';

/** The id of the event reporting that `type` happened to an individual on `date`. */
export function hrisEventId(fact: {
  connectionId: string;
  entityId: string;
  individualId: string;
  type: EmployerChangeEvent['type'];
  date: string;
}): string {
  const name = [fact.connectionId, fact.entityId, fact.individualId, fact.type, fact.date].join('|');
  return uuidV5(SYNC_HRIS_EVENT_NAMESPACE, name);
}

/** RFC 4122 name-based UUID, version 5 (SHA-1 of the namespace's bytes and the name's UTF-8). */
export function uuidV5(namespace: string, name: string): string {
  const hex = namespace.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`uuidV5: namespace ${namespace} is not a UUID`);
  const bytes = createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
