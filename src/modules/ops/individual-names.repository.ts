import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IndividualNameMap, IndividualsOf, MAX_IDS } from './individual-names';

/** "First Last" of a jsonb person record (directory entry or sandbox individual); null when both are blank. */
const nameOf = (record: string) =>
  `nullif(left(concat_ws(' ', nullif(btrim(${record}->>'first_name'), ''), nullif(btrim(${record}->>'last_name'), '')), 200), '')`;

/**
 * People's names for the ops reads, which otherwise know individuals only by id. A name comes
 * from the entity's synced directory (the current generation of `employer_data`), else, for a
 * sandbox employer not synced since the person was added, from the sandbox payroll's own records.
 * One statement for a whole page of items, however many individuals they mention.
 */
@Injectable()
export class IndividualNamesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** For each item, the names known of the individuals it mentions (same order as `items`). */
  async namesOf(items: readonly IndividualsOf[]): Promise<IndividualNameMap[]> {
    const connections: string[] = [];
    const entities: (string | null)[] = [];
    const individuals: string[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      for (const id of item.individualIds) {
        const key = keyOf(item.connectionId, item.entityId, id);
        if (seen.has(key) || seen.size >= MAX_IDS) continue;
        seen.add(key);
        connections.push(item.connectionId.toLowerCase());
        entities.push(item.entityId?.toLowerCase() ?? null);
        individuals.push(id.toLowerCase());
      }
    }
    const found = new Map<string, string>();
    if (individuals.length > 0) {
      // An item without an entity (a saga or job of the whole connection) looks in each of the connection's entities.
      const rows: { connection_id: string; entity_id: string | null; individual_id: string; name: string }[] = await this.dataSource.query(
        `WITH wanted AS (
           SELECT DISTINCT w.connection_id, w.entity_id, w.individual_id
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS w(connection_id, entity_id, individual_id)
         )
         SELECT w.connection_id, w.entity_id, w.individual_id, coalesce(synced.name, sandbox.name) AS name
         FROM wanted w
         JOIN connection_entities ce ON ce.connection_id = w.connection_id AND (w.entity_id IS NULL OR ce.id = w.entity_id)
         LEFT JOIN LATERAL (
           SELECT ${nameOf('d.body')} AS name
           FROM employer_syncs s
           JOIN employer_data d ON d.entity_id = s.entity_id AND d.generation = s.generation AND d.kind = 'directory'
             AND d.record_id = w.individual_id::text
           WHERE s.entity_id = ce.id
         ) synced ON true
         LEFT JOIN LATERAL (
           SELECT ${nameOf('si.individual')} AS name
           FROM sandbox_individuals si WHERE si.entity_id = ce.id AND si.id = w.individual_id
         ) sandbox ON true
         WHERE coalesce(synced.name, sandbox.name) IS NOT NULL
         ORDER BY ce.created_at, ce.id`,
        [connections, entities, individuals],
      );
      for (const row of rows) {
        const key = keyOf(row.connection_id, row.entity_id, row.individual_id);
        if (!found.has(key)) found.set(key, row.name);
      }
    }
    return items.map((item) => {
      const names: IndividualNameMap = {};
      for (const id of item.individualIds) {
        const name = found.get(keyOf(item.connectionId, item.entityId, id));
        if (name !== undefined) names[id.toLowerCase()] = name;
      }
      return names;
    });
  }
}

const keyOf = (connectionId: string, entityId: string | null, individualId: string) =>
  `${connectionId}/${entityId ?? ''}/${individualId}`.toLowerCase();
