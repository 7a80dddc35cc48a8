import { Saga } from '../../domain/sagas/saga';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `include` value of the ops reads that can name the individuals they mention. */
export const INDIVIDUAL_NAMES = 'individual_names';

/** Names by individual id (lower-case), of the ids whose name the service knows; others are absent. */
export type IndividualNameMap = Record<string, string>;

/** Individuals one item mentions, in the connection (and entity, when the item has one) they belong to. */
export interface IndividualsOf {
  connectionId: string;
  entityId: string | null;
  individualIds: readonly string[];
}

/** Deepest level and most ids `individualIdsIn` looks at: job params and payloads are a few levels deep. */
const MAX_DEPTH = 8;
export const MAX_IDS = 10_000;

/**
 * Every individual id a job's params or result, or a message payload, holds: the values of its
 * `individual_id` keys and `individual_ids` lists, at any depth, lower-case, each once. Read by
 * key rather than by job type so that every shape (enroll groups, unenroll lists, per-individual
 * results, HRIS events) is covered by one rule.
 */
export function individualIdsIn(value: unknown): string[] {
  const found = new Set<string>();
  const add = (id: unknown) => {
    if (typeof id === 'string' && UUID.test(id) && found.size < MAX_IDS) found.add(id.toLowerCase());
  };
  let level: unknown[] = [value];
  for (let depth = 0; depth <= MAX_DEPTH && level.length > 0 && found.size < MAX_IDS; depth++) {
    const next: unknown[] = [];
    for (const node of level) {
      if (Array.isArray(node)) {
        next.push(...node.filter((item) => item !== null && typeof item === 'object'));
      } else if (node !== null && typeof node === 'object') {
        for (const [key, child] of Object.entries(node)) {
          if (key === 'individual_id') add(child);
          else if (key === 'individual_ids' && Array.isArray(child)) child.forEach(add);
          else if (child !== null && typeof child === 'object') next.push(child);
        }
      }
    }
    level = next;
  }
  return [...found];
}

/**
 * The individual an HRIS saga (new hire, contribution change, termination) is about: the
 * `individual_id` its first step recorded from the event. Null for sagas about many people.
 */
export function sagaIndividualId(saga: Saga): string | null {
  const id = saga.steps[0]?.detail?.individual_id;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}

/** The connection and entity a message payload names (HRIS events carry both), if it names them. */
export function payloadScope(payload: unknown): { connectionId: string; entityId: string | null } | null {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const { connection_id: connectionId, entity_id: entityId } = payload as Record<string, unknown>;
  if (typeof connectionId !== 'string' || !UUID.test(connectionId)) return null;
  return { connectionId: connectionId.toLowerCase(), entityId: typeof entityId === 'string' && UUID.test(entityId) ? entityId.toLowerCase() : null };
}
