import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DiscrepancyKind } from '../../../domain/reconciliation/reconciliation.types';
import { SagaState, SagaType } from '../../../domain/sagas/saga';

export const MAX_EVENT_WINDOW_MINUTES = 1_440;
export const DEFAULT_EVENT_WINDOW_MINUTES = 15;

export class OverviewQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_EVENT_WINDOW_MINUTES, default: DEFAULT_EVENT_WINDOW_MINUTES, description: 'Minutes of events per minute' })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'minutes must be a whole number' })
  @Min(1, { message: 'minutes must be at least 1' })
  @Max(MAX_EVENT_WINDOW_MINUTES, { message: `minutes must be at most ${MAX_EVENT_WINDOW_MINUTES}` })
  minutes?: number;
}

/** Age buckets of pending jobs, by time since creation. */
export const PENDING_AGE_BUCKETS = ['under_1m', '1m_to_15m', '15m_to_1h', '1h_to_24h', 'over_24h'] as const;
export type PendingAgeBucket = (typeof PENDING_AGE_BUCKETS)[number];

export interface EventsMinute {
  /** Start of the minute (database time), ISO 8601. */
  minute: string;
  /** Inbound messages taken in by consumers (inbox rows). */
  received: number;
  /** Events this service wrote to benefits.events (outbox rows). */
  emitted: number;
}

export class OverviewResponse {
  @ApiProperty({ format: 'date-time' }) generated_at: string;

  @ApiProperty({ description: '{ by_state: {started, waiting, completed, failed}, by_type: {<type>: {<state>: n}} }' })
  sagas: { total: number; by_state: Record<SagaState, number>; by_type: Record<SagaType, Record<SagaState, number>> };

  @ApiProperty({ description: '{ window_minutes, received_total, emitted_total, per_minute: [{minute, received, emitted}] } oldest minute first' })
  events: { window_minutes: number; received_total: number; emitted_total: number; per_minute: EventsMinute[] };

  @ApiProperty({ description: '{ pending: {total, due, scheduled_later, by_age: {under_1m, …, over_24h}}, in_progress, error }' })
  jobs: {
    pending: { total: number; due: number; scheduled_later: number; by_age: Record<PendingAgeBucket, number> };
    in_progress: number;
    error: number;
  };

  @ApiProperty({ description: 'Open ops tasks by SLA state: { open, on_time, due_today, overdue }' })
  tasks: { open: number; on_time: number; due_today: number; overdue: number };

  @ApiProperty({ description: '{ open }' }) dead_letters: { open: number };

  @ApiProperty({ description: 'Live deduction discrepancies: { open, acknowledged, by_kind: {<kind>: n} } (by_kind counts both statuses)' })
  discrepancies: { open: number; acknowledged: number; by_kind: Record<DiscrepancyKind, number> };
}
