import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { DISCREPANCY_KINDS, DISCREPANCY_STATUSES, DiscrepancyKind, DiscrepancyStatus } from '../../../domain/reconciliation/reconciliation.types';
import { DiscrepancyRecord, discrepancyFields } from '../../../infrastructure/database/repositories/discrepancy-rows';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { queryList } from '../../employer/dto/entity-scoped-query.dto';
import { IndividualNameMap, INDIVIDUAL_NAMES } from '../individual-names';
import { IncludeIndividualNames, IndividualNamesProperty } from './include-names.dto';

export const MAX_DISCREPANCIES_PAGE = 100;
/** Results shown with one discrepancy: the latest statements that fed it. */
export const MAX_RECENT_RESULTS = 20;
export const MAX_ACKNOWLEDGE_NOTE = 2_000;
/** What the list shows without `status`: what still needs someone (not resolved). */
export const LIVE_STATUSES: readonly DiscrepancyStatus[] = ['open', 'acknowledged'];

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class ListDiscrepanciesQueryDto extends PageQueryDto(MAX_DISCREPANCIES_PAGE) {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'connection_id must be a UUID' })
  connection_id?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'entity_id must be a UUID' })
  entity_id?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'benefit_id must be a UUID' })
  benefit_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The individual (any case)' })
  @IsOptional()
  @IsUUID('all', { message: 'individual_id must be a UUID' })
  individual_id?: string;

  @ApiPropertyOptional({
    type: String,
    example: 'missing,amount_mismatch',
    description: `Comma-separated kinds (or the parameter repeated): ${DISCREPANCY_KINDS.join(', ')}`,
  })
  @IsOptional()
  @Transform(queryList)
  @IsArray({ message: 'kind must be a comma-separated list of kinds' })
  @ArrayNotEmpty({ message: `kind must name at least one of: ${DISCREPANCY_KINDS.join(', ')}` })
  @ArrayMaxSize(DISCREPANCY_KINDS.length * 4, { message: 'kind lists too many values' })
  @IsIn(DISCREPANCY_KINDS, { each: true, message: `kind must be one or more of: ${DISCREPANCY_KINDS.join(', ')}` })
  kind?: DiscrepancyKind[];

  @ApiPropertyOptional({
    type: String,
    example: 'open,acknowledged',
    default: LIVE_STATUSES.join(','),
    description: `Comma-separated statuses (or the parameter repeated): ${DISCREPANCY_STATUSES.join(', ')}. Absent: the live ones (open, acknowledged)`,
  })
  @IsOptional()
  @Transform(queryList)
  @IsArray({ message: 'status must be a comma-separated list of statuses' })
  @ArrayNotEmpty({ message: `status must name at least one of: ${DISCREPANCY_STATUSES.join(', ')}` })
  @ArrayMaxSize(DISCREPANCY_STATUSES.length * 4, { message: 'status lists too many values' })
  @IsIn(DISCREPANCY_STATUSES, { each: true, message: `status must be one or more of: ${DISCREPANCY_STATUSES.join(', ')}` })
  status?: DiscrepancyStatus[];

  @IncludeIndividualNames()
  include?: typeof INDIVIDUAL_NAMES;
}

export class AcknowledgeDiscrepancyDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_ACKNOWLEDGE_NOTE, description: 'What ops found or decided; acknowledging again replaces it' })
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @IsNotEmpty({ message: 'note is required to acknowledge a discrepancy' })
  @MaxLength(MAX_ACKNOWLEDGE_NOTE, { message: `note must be at most ${MAX_ACKNOWLEDGE_NOTE} characters` })
  note: string;
}

/** A row of deduction_discrepancies as the ops API reads it. */
export type OpsDiscrepancy = DiscrepancyRecord;

/** A row of reconciliation_results that fed a discrepancy. */
export interface DiscrepancyResult {
  entityId: string;
  paymentId: string;
  individualId: string;
  benefitId: string;
  payDate: string;
  regular: boolean;
  result: string;
  expectedEmployee: number;
  observedEmployee: number;
  expectedEmployer: number;
  observedEmployer: number;
  limitRoom: number | null;
  taxTreatment: string;
  configuration: unknown;
  jobId: string | null;
  reconciledAt: Date;
}

export class DiscrepancyResponse {
  @ApiProperty({ format: 'uuid' }) discrepancy_id: string;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty() individual_id: string;
  @ApiProperty({ enum: DISCREPANCY_KINDS }) kind: string;
  @ApiProperty({ enum: DISCREPANCY_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String, description: 'The pay statement (payment) that first showed it; null for a read of the provider' })
  first_payment_id: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date' }) first_pay_date: string | null;
  @ApiProperty({ nullable: true, type: String }) last_payment_id: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date' }) last_pay_date: string | null;
  @ApiProperty({ description: 'Statements (or reads) that showed it' }) occurrences: number;
  @ApiProperty({ type: Object, nullable: true, description: 'What the enrollment the service applied implies (cents), as the latest occurrence saw it' })
  expected: unknown;
  @ApiProperty({ type: Object, nullable: true, description: 'What payroll did, as the latest occurrence saw it' })
  observed: unknown;
  @ApiProperty({ format: 'date-time' }) opened_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) acknowledged_at: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The ops user who acknowledged it' }) acknowledged_by: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The acknowledgement’s note' }) note: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The enrollment job the latest re-apply opened' })
  reapply_job_id: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) resolved_at: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Why it was resolved: agreed, or became_<kind>' }) resolution: string | null;
  @IndividualNamesProperty() individual_names?: IndividualNameMap;
}

export class DiscrepancyResultResponse {
  @ApiProperty() payment_id: string;
  @ApiProperty({ format: 'date' }) pay_date: string;
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty() individual_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ description: 'A regular payroll (not off-cycle or one-time)' }) regular: boolean;
  @ApiProperty({ enum: ['matched', 'missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit'] }) result: string;
  @ApiProperty({ description: 'Cents' }) expected_employee: number;
  @ApiProperty({ description: 'Cents' }) observed_employee: number;
  @ApiProperty({ description: 'Cents' }) expected_employer: number;
  @ApiProperty({ description: 'Cents' }) observed_employer: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Cents left under the annual maximum and IRS limit before this statement' }) limit_room: number | null;
  @ApiProperty({ enum: ['pre_tax', 'roth', 'after_tax'] }) tax_treatment: string;
  @ApiProperty({ type: Object, nullable: true, description: 'The configuration in force on the pay date' }) configuration: unknown;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The job that applied that configuration' }) job_id: string | null;
  @ApiProperty({ format: 'date-time' }) reconciled_at: string;
}

export class DiscrepancyDetailResponse extends DiscrepancyResponse {
  @ApiProperty({ type: [DiscrepancyResultResponse], description: `The statements that fed it, newest pay date first (at most ${MAX_RECENT_RESULTS})` })
  recent_results: DiscrepancyResultResponse[];
}

export class ReapplyDiscrepancyResponse {
  @ApiProperty({ type: DiscrepancyDetailResponse }) discrepancy: DiscrepancyDetailResponse;
  @ApiProperty({ format: 'uuid', description: 'The enrollment job opened (benefit_enroll or benefit_unenroll), polled like any other' }) job_id: string;
}


export function discrepancyView(d: OpsDiscrepancy): DiscrepancyResponse {
  return { discrepancy_id: d.id, connection_id: d.connectionId, entity_id: d.entityId, ...discrepancyFields(d) };
}

export function discrepancyResultView(r: DiscrepancyResult): DiscrepancyResultResponse {
  return {
    payment_id: r.paymentId,
    pay_date: r.payDate,
    entity_id: r.entityId,
    individual_id: r.individualId,
    benefit_id: r.benefitId,
    regular: r.regular,
    result: r.result,
    expected_employee: r.expectedEmployee,
    observed_employee: r.observedEmployee,
    expected_employer: r.expectedEmployer,
    observed_employer: r.observedEmployer,
    limit_room: r.limitRoom,
    tax_treatment: r.taxTreatment,
    configuration: r.configuration,
    job_id: r.jobId,
    reconciled_at: r.reconciledAt.toISOString(),
  };
}

export function discrepancyDetailView(d: OpsDiscrepancy, results: DiscrepancyResult[]): DiscrepancyDetailResponse {
  return { ...discrepancyView(d), recent_results: results.map(discrepancyResultView) };
}
