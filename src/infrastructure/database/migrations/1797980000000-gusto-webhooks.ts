import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Gusto's webhooks and events feed (docs/providers/gusto.md "Webhooks"):
 * - the application's webhook subscriptions at Gusto, each verification token sealed (the key is
 *   not in the database), and the tokens Gusto POSTs to the webhook URL until one verifies a
 *   subscription;
 * - every event taken in, by Gusto's uuid: a redelivery, a second instance or the events feed
 *   finds it there and does nothing again;
 * - the events feed's cursor (the last event read), leased by one instance at a time;
 * - connections found by the Gusto company their grant reaches.
 */
export class GustoWebhooks1797980000000 implements MigrationInterface {
  name = 'GustoWebhooks1797980000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gusto_webhook_subscriptions (
        -- Gusto's uuid of the subscription.
        uuid                       text        PRIMARY KEY,
        url                        text        NOT NULL,
        subscription_types         text[]      NOT NULL,
        -- pending until verified with its token; removed when Gusto no longer knows it.
        status                     text        NOT NULL CHECK (status IN ('pending', 'verified', 'removed')),
        -- The token deliveries are signed with, once it verified the subscription.
        verification_token_sealed  text,
        verified_at                timestamptz,
        created_at                 timestamptz NOT NULL DEFAULT now(),
        updated_at                 timestamptz NOT NULL DEFAULT now(),
        CHECK (status <> 'verified' OR verification_token_sealed IS NOT NULL)
      )`);
    await q.query(`
      CREATE TABLE gusto_webhook_verification_tokens (
        -- sha256 of the token (hex): one row per token however often it is posted.
        token_digest   text        PRIMARY KEY,
        token_sealed   text        NOT NULL,
        received_at    timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE gusto_events (
        uuid            text        PRIMARY KEY,
        event_type      text        NOT NULL,
        company_uuid    text        NOT NULL,
        entity_type     text,
        entity_uuid     text,
        occurred_at     timestamptz,
        via             text        NOT NULL CHECK (via IN ('webhook', 'poll')),
        received_at     timestamptz NOT NULL DEFAULT now(),
        -- The connections a sync was requested for.
        connection_ids  uuid[]      NOT NULL DEFAULT '{}'
      )`);
    // Pruned by age: Gusto's feed goes back 30 days, the rows are kept a while longer.
    await q.query(`CREATE INDEX gusto_events_received_at ON gusto_events (received_at)`);
    await q.query(`
      CREATE TABLE gusto_event_cursor (
        id               integer     PRIMARY KEY CHECK (id = 1),
        last_event_uuid  text,
        last_event_at    timestamptz,
        polled_at        timestamptz,
        leased_by        text,
        leased_until     timestamptz
      )`);
    await q.query(`INSERT INTO gusto_event_cursor (id) VALUES (1)`);
    await q.query(`CREATE INDEX provider_grants_account ON provider_grants (provider_id, account_ref)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX provider_grants_account`);
    await q.query(`DROP TABLE gusto_event_cursor`);
    await q.query(`DROP TABLE gusto_events`);
    await q.query(`DROP TABLE gusto_webhook_verification_tokens`);
    await q.query(`DROP TABLE gusto_webhook_subscriptions`);
  }
}
