import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
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
    const where = new SqlFilter();
    if (filter.targetType) where.and((p) => `target_type = ${p}`, filter.targetType);
    if (filter.targetId) where.and((p) => `target_id = ${p}`, filter.targetId);
    if (filter.actor) where.and((p) => `actor = ${p}`, filter.actor);
    if (filter.action) where.and((p) => `action = ${p}`, filter.action);
    const { count, rows } = await countedPage<AuditRow>(
      this.dataSource,
      {
        from: 'ops_audit',
        select: 'SELECT id::text AS id, actor, action, target_type, target_id, detail, at FROM ops_audit',
        where,
        orderBy: 'at DESC, id DESC',
      },
      page,
    );
    return {
      count,
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
