import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A benefit of this service as a real provider knows it: the service chooses a benefit's id
 * before the provider has it, and a provider such as Gusto answers a create with an id of its
 * own. `settings` keeps what the provider cannot hold on its side (Gusto keeps no employer match
 * on a company benefit: each enrollment carries it). A row is written only once the provider
 * answered, so a create whose answer was lost is found again by looking it up.
 */
export class ProviderBenefitLinks1797970000000 implements MigrationInterface {
  name = 'ProviderBenefitLinks1797970000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE provider_benefit_links (
        connection_id  uuid        NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
        entity_id      uuid        NOT NULL,
        benefit_id     uuid        NOT NULL,
        external_id    text        NOT NULL,
        settings       jsonb       NOT NULL DEFAULT '{}',
        created_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (connection_id, entity_id, benefit_id),
        UNIQUE (connection_id, entity_id, external_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE provider_benefit_links`);
  }
}
