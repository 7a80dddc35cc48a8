import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** One of the service's benefits at a real provider. */
export interface BenefitLink {
  connectionId: string;
  entityId: string;
  /** The service's benefit id. */
  benefitId: string;
  /** The provider's id of it (Gusto: the company benefit's uuid). */
  externalId: string;
  /** What the provider cannot hold itself (Gusto: the employer match's tiers). */
  settings: Record<string, unknown>;
}

interface LinkRow {
  connection_id: string;
  entity_id: string;
  benefit_id: string;
  external_id: string;
  settings: Record<string, unknown>;
}

const linkOf = (row: LinkRow): BenefitLink => ({
  connectionId: row.connection_id,
  entityId: row.entity_id,
  benefitId: row.benefit_id,
  externalId: row.external_id,
  settings: row.settings,
});

/**
 * The service's benefits as real providers know them (migration 1797970000000). A link is
 * written once the provider has answered a create; a create whose answer was lost leaves no
 * link, and the adapter looks the provider's benefits up before creating again.
 */
@Injectable()
export class ProviderBenefitLinks {
  constructor(private readonly dataSource: DataSource) {}

  async find(connectionId: string, entityId: string, benefitId: string): Promise<BenefitLink | undefined> {
    const [row]: LinkRow[] = await this.dataSource.query(
      `SELECT connection_id, entity_id, benefit_id, external_id, settings FROM provider_benefit_links
       WHERE connection_id = $1 AND entity_id = $2 AND benefit_id = $3`,
      [connectionId, entityId, benefitId],
    );
    return row ? linkOf(row) : undefined;
  }

  /** Every link of an entity: which of the provider's benefits are the service's. */
  async ofEntity(connectionId: string, entityId: string): Promise<BenefitLink[]> {
    const rows: LinkRow[] = await this.dataSource.query(
      `SELECT connection_id, entity_id, benefit_id, external_id, settings FROM provider_benefit_links
       WHERE connection_id = $1 AND entity_id = $2 ORDER BY created_at`,
      [connectionId, entityId],
    );
    return rows.map(linkOf);
  }

  /**
   * Records a link; the first one of a benefit stands (a retried create that found the same
   * provider benefit again writes nothing new). Answers the link as stored, or undefined when the
   * provider's benefit is already another benefit's.
   */
  async link(link: BenefitLink): Promise<BenefitLink | undefined> {
    await this.dataSource.query(
      `INSERT INTO provider_benefit_links (connection_id, entity_id, benefit_id, external_id, settings)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [link.connectionId, link.entityId, link.benefitId, link.externalId, JSON.stringify(link.settings)],
    );
    const stored = await this.find(link.connectionId, link.entityId, link.benefitId);
    return stored?.externalId === link.externalId ? stored : undefined;
  }
}
