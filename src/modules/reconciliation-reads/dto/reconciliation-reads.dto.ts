import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsArray, IsIn, IsOptional, IsUUID } from 'class-validator';
import {
  DISCREPANCY_KINDS,
  DISCREPANCY_STATUSES,
  DiscrepancyKind,
  DiscrepancyStatus,
  STATEMENT_RESULTS,
  StatementResultKind,
  TaxTreatment,
} from '../../../domain/reconciliation/reconciliation.types';
import { discrepancyFields } from '../../../infrastructure/database/repositories/discrepancy-rows';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { EntityScopedQueryDto, queryList } from '../../employer/dto/entity-scoped-query.dto';
import type {
  ContributionRecord,
  DiscrepancyRecord,
  ReconciliationStatusRecord,
  StatementResultRecord,
} from '../reconciliation-reads.repository';

export const RECONCILIATION_MAX_LIMIT = 100;
export const RESPONSE_FORMATS = ['json', 'csv'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];
const TAX_TREATMENTS: readonly TaxTreatment[] = ['pre_tax', 'roth', 'after_tax'];

// ---------------------------------------------------------------------------------------------
// Queries

const uuidFilter = (name: string, description: string) =>
  applyDecorators(
    ApiPropertyOptional({ format: 'uuid', description }),
    IsOptional(),
    IsUUID('all', { message: `${name} must be a UUID` }),
  );

/**
 * A list filter: `a`, `a,b`, repeated and bracketed (`name[]=a`) all read as one list, as the
 * employer reads take theirs. Only the plain name is documented; the bracket form is the same.
 */
const listFilter = (name: string, values: readonly string[], description?: string) =>
  applyDecorators(
    ...(name.endsWith('[]') ? [Allow()] : [ApiPropertyOptional({ enum: values, isArray: true, description })]),
    IsOptional(),
    Transform(queryList),
    IsArray({ message: `${name} must be a list of ${values.join(', ')}` }),
    IsIn(values, { each: true, message: `each value in ${name} must be one of ${values.join(', ')}` }),
  );

/** `limit` 1–100 (default 100) and `offset`, and `entity_ids` as every employer read takes it. */
export class ReconciliationPageQueryDto extends PageQueryDto(RECONCILIATION_MAX_LIMIT, EntityScopedQueryDto) {}

export class DiscrepanciesQueryDto extends ReconciliationPageQueryDto {
  @uuidFilter('benefit_id', 'Only discrepancies of this benefit')
  benefit_id?: string;

  @uuidFilter('individual_id', 'Only discrepancies of this individual')
  individual_id?: string;

  @uuidFilter('payment_id', 'Only discrepancies a result of this payment fed')
  payment_id?: string;

  @listFilter('kind', DISCREPANCY_KINDS, 'Only these kinds (comma-separated list allowed)')
  kind?: DiscrepancyKind[];

  @listFilter('kind[]', DISCREPANCY_KINDS)
  'kind[]'?: DiscrepancyKind[];

  @listFilter('status', DISCREPANCY_STATUSES, 'Only these statuses (comma-separated list allowed); default all')
  status?: DiscrepancyStatus[];

  @listFilter('status[]', DISCREPANCY_STATUSES)
  'status[]'?: DiscrepancyStatus[];
}

export class PaymentResultsQueryDto extends ReconciliationPageQueryDto {
  @uuidFilter('benefit_id', 'Only results of this benefit')
  benefit_id?: string;

  @uuidFilter('individual_id', 'Only results of this individual')
  individual_id?: string;

  @listFilter('result', STATEMENT_RESULTS, 'Only these results (comma-separated list allowed)')
  result?: StatementResultKind[];

  @listFilter('result[]', STATEMENT_RESULTS)
  'result[]'?: StatementResultKind[];
}

export class PaymentContributionsQueryDto extends ReconciliationPageQueryDto {
  @uuidFilter('benefit_id', 'Only contributions to this benefit (and only its discrepancies count against `reconciled`)')
  benefit_id?: string;

  @ApiPropertyOptional({
    enum: RESPONSE_FORMATS,
    description: '`csv`: the whole payment as CSV (limit and offset do not apply), as `Accept: text/csv` asks for it. Wins over Accept.',
  })
  @IsOptional()
  @IsIn(RESPONSE_FORMATS, { message: `format must be one of ${RESPONSE_FORMATS.join(', ')}` })
  format?: ResponseFormat;
}

// ---------------------------------------------------------------------------------------------
// Answers

export class PagingResponse {
  @ApiProperty({ description: 'Items the whole query matches' }) count: number;
  @ApiProperty({ description: 'Index of the first item of this page' }) offset: number;
}

export class DiscrepancyResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: DISCREPANCY_KINDS }) kind: DiscrepancyKind;
  @ApiProperty({ enum: DISCREPANCY_STATUSES }) status: DiscrepancyStatus;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty() individual_id: string;
  @ApiProperty({ type: String, nullable: true, description: 'Payment whose statement first showed it (null: configuration drift)' })
  first_payment_id: string | null;
  @ApiProperty({ type: String, format: 'date', nullable: true }) first_pay_date: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Latest payment whose statement showed it' }) last_payment_id: string | null;
  @ApiProperty({ type: String, format: 'date', nullable: true }) last_pay_date: string | null;
  @ApiProperty({ description: 'Statements that showed it' }) occurrences: number;
  @ApiProperty({ type: Object, nullable: true, description: 'What the enrollment implies (amounts in cents, or the configuration)' })
  expected: unknown;
  @ApiProperty({ type: Object, nullable: true, description: 'What payroll did (amounts in cents, or the provider’s configuration)' })
  observed: unknown;
  @ApiProperty({ format: 'date-time' }) opened_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) acknowledged_at: string | null;
  @ApiProperty({ type: String, nullable: true }) acknowledged_by: string | null;
  @ApiProperty({ type: String, nullable: true }) note: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) resolved_at: string | null;
  @ApiProperty({ type: String, nullable: true, description: '`agreed`, or `became_<kind>` when the problem changed kind' })
  resolution: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The enrollment job that re-applied the configuration' })
  reapply_job_id: string | null;
}

export class DiscrepancyListResponse {
  @ApiProperty({ type: PagingResponse }) paging: PagingResponse;
  @ApiProperty({ type: [DiscrepancyResponse] }) discrepancies: DiscrepancyResponse[];
}

export class StatementResultResponse {
  @ApiProperty() individual_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ enum: STATEMENT_RESULTS }) result: StatementResultKind;
  @ApiProperty({ description: 'Cents' }) expected_employee: number;
  @ApiProperty({ description: 'Cents' }) observed_employee: number;
  @ApiProperty({ description: 'Cents' }) expected_employer: number;
  @ApiProperty({ description: 'Cents' }) observed_employer: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Cents left under the annual maximum and the IRS limit before this statement; null when uncapped' })
  limit_room: number | null;
  @ApiProperty({ enum: TAX_TREATMENTS }) tax_treatment: TaxTreatment;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The discrepancy this result fed' }) discrepancy_id: string | null;
}

export class PaymentResultsResponse {
  @ApiProperty() payment_id: string;
  @ApiProperty({ format: 'date' }) pay_date: string;
  @ApiProperty({ type: PagingResponse }) paging: PagingResponse;
  @ApiProperty({ type: [StatementResultResponse] }) results: StatementResultResponse[];
}

export class ContributionAmountsResponse {
  @ApiProperty({ description: 'Cents' }) employee_pre_tax: number;
  @ApiProperty({ description: 'Cents' }) employee_roth: number;
  @ApiProperty({ description: 'Cents' }) employee_after_tax: number;
  @ApiProperty({ description: 'Cents' }) employer: number;
}

export class ContributionResponse extends ContributionAmountsResponse {
  @ApiProperty() individual_id: string;
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ type: String, nullable: true }) benefit_type: string | null;
  @ApiProperty({ type: String, nullable: true }) benefit_description: string | null;
  @ApiProperty({ type: ContributionAmountsResponse, description: 'Calendar year to date, this payment included' })
  year_to_date: ContributionAmountsResponse;
}

export class PaymentContributionsResponse {
  @ApiProperty() payment_id: string;
  @ApiProperty({ format: 'date' }) pay_date: string;
  @ApiProperty({ description: 'No open discrepancy was fed by this payment’s results' }) reconciled: boolean;
  @ApiProperty({ description: 'Open discrepancies this payment’s results fed' }) open_discrepancies: number;
  @ApiProperty({ type: PagingResponse }) paging: PagingResponse;
  @ApiProperty({ type: [ContributionResponse] }) contributions: ContributionResponse[];
}

export class ReconciliationStatusResponse {
  @ApiProperty({ format: 'uuid' }) entity_id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The sync the last reconciliation read; null before the first' })
  sync_job_id: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) reconciled_at: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Statements the last reconciliation read' }) statements: number | null;
  @ApiProperty({
    description: 'Open discrepancies by kind (every kind, 0 included)',
    type: 'object',
    properties: Object.fromEntries(DISCREPANCY_KINDS.map((kind) => [kind, { type: 'integer' }])),
  })
  open: Record<DiscrepancyKind, number>;
  @ApiProperty({ description: 'Discrepancies acknowledged and not yet resolved' }) acknowledged: number;
}

// ---------------------------------------------------------------------------------------------
// Views

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

export function discrepancyView(d: DiscrepancyRecord): DiscrepancyResponse {
  return { id: d.id, ...discrepancyFields(d) };
}

export function statementResultView(r: StatementResultRecord): StatementResultResponse {
  return {
    individual_id: r.individualId,
    benefit_id: r.benefitId,
    result: r.result,
    expected_employee: r.expectedEmployee,
    observed_employee: r.observedEmployee,
    expected_employer: r.expectedEmployer,
    observed_employer: r.observedEmployer,
    limit_room: r.limitRoom,
    tax_treatment: r.taxTreatment,
    discrepancy_id: r.discrepancyId,
  };
}

export function contributionView(c: ContributionRecord): ContributionResponse {
  return {
    individual_id: c.individualId,
    benefit_id: c.benefitId,
    benefit_type: c.benefitType,
    benefit_description: c.benefitDescription,
    ...amountsView(c.thisPayment),
    year_to_date: amountsView(c.yearToDate),
  };
}

const amountsView = (a: ContributionRecord['thisPayment']): ContributionAmountsResponse => ({
  employee_pre_tax: a.employeePreTax,
  employee_roth: a.employeeRoth,
  employee_after_tax: a.employeeAfterTax,
  employer: a.employer,
});

export function statusView(entityId: string, s: ReconciliationStatusRecord): ReconciliationStatusResponse {
  return {
    entity_id: entityId,
    sync_job_id: s.lastRun?.syncJobId ?? null,
    reconciled_at: iso(s.lastRun?.reconciledAt ?? null),
    statements: s.lastRun?.statements ?? null,
    open: Object.fromEntries(DISCREPANCY_KINDS.map((kind) => [kind, s.open[kind] ?? 0])) as Record<DiscrepancyKind, number>,
    acknowledged: s.acknowledged,
  };
}
