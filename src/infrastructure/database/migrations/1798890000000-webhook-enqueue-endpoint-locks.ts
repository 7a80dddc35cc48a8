import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook fan-out against an endpoint being deleted. `webhook_enqueue()` runs inside the
 * transaction that completes a job, changes a connection or dead-letters an event. It read its
 * target endpoints without locking them, so an endpoint deleted after that read and before the
 * insert failed the insert's foreign key check, and with it the whole transaction: a job's
 * completion rolled back and ran again later (seen in CI, where a test deletes its endpoints
 * while an earlier test's job completes). Now the endpoints are locked `FOR KEY SHARE`, in id
 * order: a delete in progress is waited for and its endpoint skipped (as is one disabled by a
 * change committed in the meantime), and a delete that comes later waits for the fan-out, then
 * removes what it queued with the endpoint. The lock conflicts only with a delete or a key change, so
 * concurrent fan-outs and the dispatcher's updates of `webhook_endpoints` do not wait on it.
 */
export class WebhookEnqueueEndpointLocks1798890000000 implements MigrationInterface {
  name = 'WebhookEnqueueEndpointLocks1798890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(enqueue(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(enqueue(false));
  }
}

const enqueue = (locked: boolean): string => `
  CREATE OR REPLACE FUNCTION webhook_enqueue(p_connection_ids uuid[], p_entity_ids uuid[], p_types text[], p_data jsonb[])
  RETURNS integer LANGUAGE plpgsql AS $$
  DECLARE queued integer;
  BEGIN
    IF coalesce(cardinality(p_types), 0) = 0 OR NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled) THEN RETURN 0; END IF;
    WITH candidate AS MATERIALIZED (
      SELECT gen_random_uuid() AS id, c.application_id, c.company_id, c.account_id, u.connection_id, u.entity_id, u.event_type, u.data, u.ord
      FROM unnest(p_connection_ids, p_entity_ids, p_types, p_data) WITH ORDINALITY AS u (connection_id, entity_id, event_type, data, ord)
      JOIN connections c ON c.id = u.connection_id
    ), endpoint AS MATERIALIZED (
      SELECT e.id, e.application_id, e.event_types FROM webhook_endpoints e
      WHERE e.enabled AND e.application_id IN (SELECT application_id FROM candidate)
      ${locked ? 'ORDER BY e.id FOR KEY SHARE' : ''}
    ), target AS MATERIALIZED (
      SELECT c.*, e.id AS endpoint_id
      FROM candidate c JOIN endpoint e ON e.application_id = c.application_id AND c.event_type = ANY (e.event_types)
    ), written AS (
      INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, entity_id, event_type, data)
      SELECT DISTINCT ON (id) id, application_id, connection_id, company_id, account_id, entity_id, event_type, data FROM target
    )
    INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id)
    SELECT endpoint_id, id, connection_id FROM target ORDER BY ord, endpoint_id;
    GET DIAGNOSTICS queued = ROW_COUNT;
    RETURN queued;
  END $$`;
