import { EntityManager } from 'typeorm';
import { employerChangeEvents, EmployerChangeEvent, PersonFacts } from '../../domain/hris-events/employer-changes';
import { OutboxWriter } from '../../infrastructure/messaging/outbox/outbox-writer';
import { TOPICS } from '../../infrastructure/messaging/topics';

export interface GenerationSwitch {
  connectionId: string;
  entityId: string;
  /** The generation replaced; null on the entity's first sync. */
  previous: string | null;
  generation: string;
  /** The sync's clock time. */
  occurredAt: Date;
}

/**
 * Publishes the HRIS events a sync reveals (new individuals, end dates set) on `hris.events`,
 * keyed by connection, in the transaction that switches the entity to its new generation: the
 * events go out if and only if the data saying so becomes the synced data. Answers the events
 * appended.
 */
export async function publishSyncHrisEvents(
  outbox: OutboxWriter,
  manager: EntityManager,
  change: GenerationSwitch,
): Promise<EmployerChangeEvent[]> {
  const people = change.previous === null ? null : await changedPeople(manager, change.entityId, change.previous, change.generation);
  const events = employerChangeEvents({
    connectionId: change.connectionId,
    entityId: change.entityId,
    previous: people && people.previous,
    current: people ? people.current : [],
    occurredAt: change.occurredAt,
  });
  if (events.length === 0) return [];
  // An id already in the outbox (a person who left the data and came back) is the same event,
  // pending or published; its message id is unique there. Found through the GIN index of the
  // HRIS topic's rows' ids (migration 1798500000000), whose condition names the topic as written.
  const [{ known }] = await manager.query(
    `SELECT coalesce(array_agg(DISTINCT m::text), '{}') AS known
     FROM outbox_batches b CROSS JOIN LATERAL unnest(b.message_ids) AS m
     WHERE b.topic = '${TOPICS.hrisEvents}' AND b.message_ids && $1::uuid[] AND m = ANY($1::uuid[])`,
    [events.map((e) => e.id)],
  );
  const inOutbox = new Set<string>(known);
  const fresh = events.filter((e) => !inOutbox.has(e.id));
  await outbox.append(
    manager,
    fresh.map((event) => ({ topic: TOPICS.hrisEvents, key: change.connectionId, type: event.type, payload: event, messageId: event.id })),
  );
  return fresh;
}

interface ChangedPersonRow {
  before_id: string | null;
  before_start_date: string | null;
  before_end_date: string | null;
  before_dob: string | null;
  now_id: string | null;
  now_start_date: string | null;
  now_end_date: string | null;
  now_dob: string | null;
}

/**
 * The people whose facts differ between the two generations, each side as it was, in one
 * statement that reads only ids and dates out of the bodies and returns only the differences.
 * Null when the previous generation has no rows at all (gone, not merely empty): against nothing
 * everyone would look newly hired, so it counts as a first sync.
 */
async function changedPeople(
  manager: EntityManager,
  entityId: string,
  previous: string,
  generation: string,
): Promise<{ previous: PersonFacts[]; current: PersonFacts[] } | null> {
  const [{ known }] = await manager.query(`SELECT EXISTS (SELECT 1 FROM employer_data WHERE entity_id = $1 AND generation = $2) AS known`, [
    entityId,
    previous,
  ]);
  if (!known) return null;
  const rows: ChangedPersonRow[] = await manager.query(
    // Each body is read once, in the scan, so the joins carry only ids and dates.
    `WITH e AS MATERIALIZED (
       SELECT d.generation, d.record_id AS id, d.body->>'start_date' AS start_date, d.body->>'end_date' AS end_date
       FROM employer_data d WHERE d.entity_id = $1 AND d.generation IN ($2, $3) AND d.kind = 'employment'
     ),
     i AS MATERIALIZED (
       SELECT d.generation, d.record_id AS id, d.body->>'dob' AS dob
       FROM employer_data d WHERE d.entity_id = $1 AND d.generation IN ($2, $3) AND d.kind = 'individual'
     ),
     people AS (
       SELECT coalesce(e.generation, i.generation) AS generation, coalesce(e.id, i.id) AS id, e.start_date, e.end_date, i.dob
       FROM e FULL JOIN i ON i.generation = e.generation AND i.id = e.id
     ),
     b AS (SELECT * FROM people WHERE generation = $2),
     n AS (SELECT * FROM people WHERE generation = $3)
     SELECT b.id AS before_id, b.start_date AS before_start_date, b.end_date AS before_end_date, b.dob AS before_dob,
            n.id AS now_id, n.start_date AS now_start_date, n.end_date AS now_end_date, n.dob AS now_dob
     FROM b FULL JOIN n ON n.id = b.id
     WHERE b.id IS NULL OR n.id IS NULL OR (b.start_date, b.end_date, b.dob) IS DISTINCT FROM (n.start_date, n.end_date, n.dob)`,
    [entityId, previous, generation],
  );
  const before: PersonFacts[] = [];
  const current: PersonFacts[] = [];
  for (const r of rows) {
    if (r.before_id !== null) {
      before.push({ individualId: r.before_id, startDate: r.before_start_date, endDate: r.before_end_date, dob: r.before_dob });
    }
    if (r.now_id !== null) current.push({ individualId: r.now_id, startDate: r.now_start_date, endDate: r.now_end_date, dob: r.now_dob });
  }
  return { previous: before, current };
}
