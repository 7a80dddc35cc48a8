import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditEntryResponse } from './dto/audit-log.dto';

interface AuditRow {
  id: string;
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

export interface AuditFilter {
  targetType?: string;
  targetId?: string;
  actor?: string;
  action?: string;
}

/** Reads the `ops_audit` trail (OpsAuditWriter writes it). */
@Injectable()
export class OpsAuditLogRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest first, with the total for paging. */
  async list(filter: AuditFilter, page: { limit: number; offset: number }): Promise<{ count: number; entries: AuditEntryResponse[] }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const where = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      conditions.push(sql(`$${params.length}`));
    };
    if (filter.targetType) where((p) => `target_type = ${p}`, filter.targetType);
    if (filter.targetId) where((p) => `target_id = ${p}`, filter.targetId);
    if (filter.actor) where((p) => `actor = ${p}`, filter.actor);
    if (filter.action) where((p) => `action = ${p}`, filter.action);
    const clause = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM ops_audit ${clause}`, params);
    const rows: AuditRow[] = await this.dataSource.query(
      `SELECT id::text AS id, actor, action, target_type, target_id, detail, at FROM ops_audit ${clause}
       ORDER BY at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return {
      count: n,
      entries: rows.map((r) => ({
        audit_id: r.id,
        actor: r.actor,
        action: r.action,
        target_type: r.target_type,
        target_id: r.target_id,
        detail: r.detail,
        at: new Date(r.at).toISOString(),
      })),
    };
  }
}
