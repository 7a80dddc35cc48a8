import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsCalendarDate } from './sandbox-fields.dto';

/**
 * `POST /sandbox/payment`. The sandbox pays bi-weekly, so the pay date decides the run: its pay
 * period is the two weeks ending a week before it. Without a body (or pay_date), the run is the
 * next regular one: 14 days after the latest regular pay date, or today when that is earlier.
 */
export class RunSandboxPaymentDto {
  @ApiPropertyOptional({ example: '2026-06-12', description: 'YYYY-MM-DD; not before the latest pay run, at most a year ahead' })
  @IsOptional()
  @IsCalendarDate()
  pay_date?: string;
}
