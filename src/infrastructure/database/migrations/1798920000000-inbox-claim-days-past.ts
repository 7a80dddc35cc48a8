import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `inbox_claim()` looks for an earlier copy of a key up to a day past now as well as from a day
 * before the message was sent: the partitions made for the days ahead, and the default one
 * where the days searched all have a partition, are pruned when the search starts. A copy's
 * `received_at` is the database's time when the transaction that claimed it began, and that
 * transaction committed before this claim's lock was granted; the bound is taken after the lock,
 * so a copy is always before it (a day of slack covers the server's clock being set back).
 * Measured on a warm inbox (bench/README.md, "The database at scale"): of a claim of 400 new
 * keys, about 3 ms went to probing the days ahead and the default partition, all empty.
 */
export class InboxClaimDaysPast1798920000000 implements MigrationInterface {
  name = 'InboxClaimDaysPast1798920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(claimFunction(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(claimFunction(false));
  }
}

/** The function of 1798700000000, with the upper bound or without it. */
export function claimFunction(upToNow: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION inbox_claim(p_consumer text, p_topic text, p_scopes text[], p_ids text[], p_sent_after timestamptz DEFAULT '-infinity')
    RETURNS TABLE (claimed_scope text, claimed_id text) LANGUAGE plpgsql AS $$
    DECLARE
      -- NULL (unknown) searches every day, as '-infinity' does; least() alone would skip a NULL.
      v_from timestamptz := CASE WHEN p_sent_after IS NULL THEN '-infinity' ELSE least(p_sent_after, now()) - interval '1 day' END;
      v_to timestamptz := 'infinity';
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(p_consumer || '/' || k.s || '/' || k.m, 1798400000))
      FROM (SELECT DISTINCT u.s, u.m FROM unnest(p_scopes, p_ids) AS u(s, m) ORDER BY 1, 2) AS k;
      ${upToNow ? `v_to := clock_timestamp() + interval '1 day';` : ''}
      RETURN QUERY
      INSERT INTO inbox_messages AS i (consumer, scope, message_id, topic)
      SELECT DISTINCT p_consumer, k.s, k.m, p_topic FROM unnest(p_scopes, p_ids) AS k(s, m)
      WHERE NOT EXISTS (
        SELECT 1 FROM inbox_messages o
        WHERE o.consumer = p_consumer AND o.scope = k.s AND o.message_id = k.m AND o.received_at >= v_from AND o.received_at < v_to)
      ON CONFLICT DO NOTHING
      RETURNING i.scope, i.message_id;
    END $$`;
}
