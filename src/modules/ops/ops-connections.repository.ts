import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConnectionStatus } from '../../domain/connections/connection';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { OpsConnectionDetailResponse, OpsConnectionResponse, SyncJobSummary } from './dto/ops-connection.dto';

interface SyncRow {
  id: string;
  kind: string;
  status: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
}

interface ConnectionRow {
  id: string;
  customer_id: string | null;
  customer_name: string | null;
  provider_id: string;
  authentication_type: string;
  status: string;
  sandbox: boolean;
  manual: boolean;
  products: string[];
  entities: { id: string; name: string; status: string; last_synced_at: string | null }[];
  last_sync: SyncRow | null;
  created_at: Date;
  updated_at: Date;
  disconnected_at: Date | null;
}

// Timestamps inside json come back as text; to_json renders them in ISO 8601 with the offset.
const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());

const SYNC_JSON = `json_build_object('id', j.id, 'kind', j.kind, 'status', j.status, 'created_at', j.created_at, 'started_at', j.started_at,
  'completed_at', j.completed_at, 'error', j.result->>'error')`;

const SELECT = `
  SELECT c.id, c.customer_id, c.customer_name, c.provider_id, c.authentication_type, c.status, c.sandbox, c.manual, c.products,
    c.created_at, c.updated_at, c.disconnected_at,
    (SELECT coalesce(json_agg(json_build_object('id', e.id, 'name', e.name, 'status', e.status, 'last_synced_at', s.completed_at)
              ORDER BY e.created_at, e.id), '[]'::json)
       FROM connection_entities e LEFT JOIN employer_syncs s ON s.entity_id = e.id
       WHERE e.connection_id = c.id) AS entities,
    (SELECT ${SYNC_JSON} FROM jobs j WHERE j.connection_id = c.id AND j.type = 'data_sync_all'
       ORDER BY j.created_at DESC, j.seq DESC LIMIT 1) AS last_sync
  FROM connections c`;

function syncOf(row: SyncRow): SyncJobSummary {
  return {
    job_id: row.id,
    kind: row.kind,
    status: row.status,
    created_at: iso(row.created_at)!,
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
    error: row.error,
  };
}

function connectionView(row: ConnectionRow): OpsConnectionResponse {
  return {
    connection_id: row.id,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    provider_id: row.provider_id,
    authentication_type: row.authentication_type,
    status: row.status,
    sandbox: row.sandbox,
    manual: row.manual,
    products: row.products,
    entities: row.entities.map((e) => ({ entity_id: e.id, name: e.name, status: e.status, last_synced_at: iso(e.last_synced_at) })),
    last_sync: row.last_sync && syncOf(row.last_sync),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    disconnected_at: row.disconnected_at === null ? null : new Date(row.disconnected_at).toISOString(),
  };
}

/** Connections as ops see them: status, entities and how their data syncs went. */
@Injectable()
export class OpsConnectionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest first, with the total for paging. */
  async list(
    filter: { status?: ConnectionStatus; providerId?: string },
    page: { limit: number; offset: number },
  ): Promise<{ count: number; connections: OpsConnectionResponse[] }> {
    const where = new SqlFilter();
    if (filter.status) where.and((p) => `c.status = ${p}`, filter.status);
    if (filter.providerId) where.and((p) => `c.provider_id = ${p}`, filter.providerId);
    const { count, rows } = await countedPage<ConnectionRow>(
      this.dataSource,
      { from: 'connections c', select: SELECT, where, orderBy: 'c.created_at DESC, c.id' },
      page,
    );
    return { count, connections: rows.map(connectionView) };
  }

  async find(id: string): Promise<OpsConnectionDetailResponse | undefined> {
    const [row]: ConnectionRow[] = await this.dataSource.query(`${SELECT} WHERE c.id = $1`, [id]);
    if (!row) return undefined;
    const syncs: SyncRow[] = await this.dataSource.query(
      `SELECT ${SYNC_JSON} AS sync FROM jobs j WHERE j.connection_id = $1 AND j.type = 'data_sync_all'
       ORDER BY j.created_at DESC, j.seq DESC LIMIT 10`,
      [id],
    ).then((rows: { sync: SyncRow }[]) => rows.map((r) => r.sync));
    const [counts] = await this.dataSource.query(
      `SELECT
         (SELECT count(*)::int FROM jobs WHERE connection_id = $1 AND status IN ('pending', 'in_progress')) AS unfinished_jobs,
         (SELECT count(*)::int FROM jobs WHERE connection_id = $1 AND status IN ('error', 'reauth_error', 'permissions_error')) AS failed_jobs,
         (SELECT count(*)::int FROM ops_tasks WHERE connection_id = $1 AND status = 'open') AS open_tasks,
         (SELECT count(*)::int FROM sagas WHERE connection_id = $1 AND state IN ('started', 'waiting')) AS active_sagas`,
      [id],
    );
    return { ...connectionView(row), recent_syncs: syncs.map(syncOf), counts };
  }
}
