import { DomainError } from '../shared/domain-error';

export type EntityStatus = 'active' | 'disconnected';

export interface ConnectionEntity {
  id: string;
  name: string;
  status: EntityStatus;
}

/**
 * Reads the `entity_ids` query in the three forms clients send: `entity_ids=a`,
 * `entity_ids[]=a` (both possibly repeated) and `entity_ids=a,b`.
 */
export function entityIdsFromQuery(query: Record<string, unknown>): string[] | undefined {
  const raw = [query['entity_ids'], query['entity_ids[]']].filter((v) => v !== undefined);
  if (raw.length === 0) return undefined;
  return raw
    .flatMap((value) => (Array.isArray(value) ? value : [value]))
    .flatMap((value) => String(value).split(','))
    .map((id) => id.trim())
    .filter((id) => id.length > 0);
}

/**
 * Refuses `entity_ids` that name anything but active entities of the connection, on every
 * operation of a token, including those that act on the whole connection: a foreign id is a
 * caller's mistake or a probe, never something to ignore.
 */
export function refuseForeignEntities(entities: readonly ConnectionEntity[], requested: string[] | undefined): void {
  if (requested === undefined) return;
  const foreign = requested.find((id) => !entities.some((e) => e.id === id && e.status === 'active'));
  if (foreign !== undefined) {
    throw new DomainError('forbidden_error', `Entity ${foreign.slice(0, 100)} is not authorized for this access token`, {
      serviceCode: 'entity_not_authorized',
    });
  }
}

/**
 * Picks the one entity an operation acts on. Omitted `entity_ids` is fine when the connection
 * has exactly one active entity; otherwise exactly one id, which must be an active entity of
 * this connection.
 */
export function resolveEntity(entities: readonly ConnectionEntity[], requested: string[] | undefined): ConnectionEntity {
  const active = entities.filter((e) => e.status === 'active');
  if (requested === undefined) {
    if (active.length === 1) return active[0];
    if (active.length === 0) {
      throw new DomainError('forbidden_error', 'The connection has no active entity', { serviceCode: 'entity_not_authorized' });
    }
    throw new DomainError(
      'invalid_request_error',
      `entity_ids is required: this connection has ${active.length} active entities (${active.map((e) => e.id).join(', ')})`,
      { serviceCode: 'invalid_request' },
    );
  }
  if (requested.length !== 1) {
    throw new DomainError('invalid_request_error', 'entity_ids must hold exactly one entity id', {
      serviceCode: 'invalid_request',
    });
  }
  const entity = active.find((e) => e.id === requested[0]);
  if (!entity) {
    throw new DomainError('forbidden_error', `Entity ${requested[0]} is not authorized for this access token`, {
      serviceCode: 'entity_not_authorized',
    });
  }
  return entity;
}
