import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { returnedRows } from '../../infrastructure/database/query-result';
import { countedPage, SqlFilter } from '../../infrastructure/database/sql-filter';
import { MessageHeaders } from '../../infrastructure/messaging/message';
import { DeadLetter, DeadLetterStatus } from './dto/dead-letter.dto';

interface DeadLetterRow {
  id: string;
  consumer: string;
  topic: string;
  partition: number | null;
  offset: string | null;
  message_key: string | null;
  message_id: string | null;
  payload: string;
  headers: MessageHeaders | null;
  reason: string;
  status: DeadLetterStatus;
  created_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
  note: string | null;
}

const COLUMNS = `id, consumer, topic, partition, "offset", message_key, message_id, payload, headers, reason, status, created_at,
  resolved_at, resolved_by, note`;
/** Listings leave the body out: it may be large, and the detail has it. */
const SUMMARY_COLUMNS = COLUMNS.replace('payload, headers,', `'' AS payload, '{}'::jsonb AS headers,`);

function deadLetterOf(row: DeadLetterRow): DeadLetter {
  return {
    id: row.id,
    consumer: row.consumer,
    topic: row.topic,
    partition: row.partition,
    offset: row.offset,
    messageKey: row.message_key,
    messageId: row.message_id,
    payload: row.payload,
    headers: row.headers ?? {},
    reason: row.reason,
    status: row.status,
    createdAt: new Date(row.created_at),
    resolvedAt: row.resolved_at === null ? null : new Date(row.resolved_at),
    resolvedBy: row.resolved_by,
    note: row.note,
  };
}

export interface DeadLetterFilter {
  status?: DeadLetterStatus;
  topic?: string;
  consumer?: string;
}

/** The `dead_letters` table, as ops read and resolve it (the message processor writes it). */
@Injectable()
export class DeadLettersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest first, with the total for paging. */
  async list(filter: DeadLetterFilter, page: { limit: number; offset: number }): Promise<{ count: number; deadLetters: DeadLetter[] }> {
    const where = new SqlFilter();
    if (filter.status) where.and((p) => `status = ${p}`, filter.status);
    if (filter.topic) where.and((p) => `topic = ${p}`, filter.topic);
    if (filter.consumer) where.and((p) => `consumer = ${p}`, filter.consumer);
    const { count, rows } = await countedPage<DeadLetterRow>(
      this.dataSource,
      { from: 'dead_letters', select: `SELECT ${SUMMARY_COLUMNS} FROM dead_letters`, where, orderBy: 'created_at DESC, id' },
      page,
    );
    return { count, deadLetters: rows.map(deadLetterOf) };
  }

  async find(id: string, manager?: EntityManager): Promise<DeadLetter | undefined> {
    const [row] = await (manager ?? this.dataSource.manager).query(`SELECT ${COLUMNS} FROM dead_letters WHERE id = $1`, [id]);
    return row ? deadLetterOf(row) : undefined;
  }

  /** Discards an open dead letter; undefined when it is not open (or does not exist). */
  async discard(id: string, resolution: { resolvedBy: string; resolvedAt: Date; note: string }, manager: EntityManager): Promise<DeadLetter | undefined> {
    const result = await manager.query(
      `UPDATE dead_letters SET status = 'discarded', resolved_by = $2, resolved_at = $3, note = $4
       WHERE id = $1 AND status = 'open' RETURNING ${COLUMNS}`,
      [id, resolution.resolvedBy, resolution.resolvedAt, resolution.note],
    );
    const [row] = returnedRows<DeadLetterRow>(result);
    return row && deadLetterOf(row);
  }
}
