import { MigrationInterface, QueryRunner } from 'typeorm';
import { claimFunction } from './1798920000000-inbox-claim-days-past';

/**
 * `inbox_claim()` looks for each key's earlier copy with a probe of the primary key per key (a
 * LATERAL subquery with LIMIT 1), whatever the planner guesses. Written as NOT EXISTS, the
 * function's generic plan (PL/pgSQL's, from a session's sixth call on) took the days' bounds for
 * unknown values, guessed a few hundred rows in range, and hashed every key received since the
 * day before: a claim read the whole of today's inbox, so its cost grew with the day's traffic
 * (27,580 rows read for 430 keys: 10.7 of the claim's 19.8 ms). Measured in bench/README.md ("The
 * database at scale").
 */
export class InboxClaimProbesByKey1798950000000 implements MigrationInterface {
  name = 'InboxClaimProbesByKey1798950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION inbox_claim(p_consumer text, p_topic text, p_scopes text[], p_ids text[], p_sent_after timestamptz DEFAULT '-infinity')
      RETURNS TABLE (claimed_scope text, claimed_id text) LANGUAGE plpgsql AS $$
      DECLARE
        -- NULL (unknown) searches every day, as '-infinity' does; least() alone would skip a NULL.
        v_from timestamptz := CASE WHEN p_sent_after IS NULL THEN '-infinity' ELSE least(p_sent_after, now()) - interval '1 day' END;
        v_to timestamptz;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_consumer || '/' || k.s || '/' || k.m, 1798400000))
        FROM (SELECT DISTINCT u.s, u.m FROM unnest(p_scopes, p_ids) AS u(s, m) ORDER BY 1, 2) AS k;
        -- Read after the locks: a copy committed by a claim this one waited for is before it.
        v_to := clock_timestamp() + interval '1 day';
        RETURN QUERY
        INSERT INTO inbox_messages AS i (consumer, scope, message_id, topic)
        SELECT DISTINCT p_consumer, k.s, k.m, p_topic FROM unnest(p_scopes, p_ids) AS k(s, m)
        LEFT JOIN LATERAL (
          SELECT true AS found FROM inbox_messages o
          WHERE o.consumer = p_consumer AND o.scope = k.s AND o.message_id = k.m AND o.received_at >= v_from AND o.received_at < v_to
          LIMIT 1) earlier ON true
        WHERE earlier.found IS NULL
        ON CONFLICT DO NOTHING
        RETURNING i.scope, i.message_id;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(claimFunction(true));
  }
}
