import { Controller, Get, Param, Query, Req, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { notFound } from '../../domain/shared/domain-error';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { EntityScopedQueryDto, mergedList } from '../employer/dto/entity-scoped-query.dto';
import { uuidParam } from '../employer/dto/uuid-param';
import { acceptsCsvOverJson, CONTRIBUTIONS_CSV_COLUMNS, contributionsCsvHeader, contributionsCsvLines, CSV_CONTENT_TYPE } from './contributions-csv';
import {
  contributionView,
  DiscrepanciesQueryDto,
  DiscrepancyListResponse,
  DiscrepancyResponse,
  discrepancyView,
  PaymentContributionsQueryDto,
  PaymentContributionsResponse,
  PaymentResultsQueryDto,
  PaymentResultsResponse,
  RECONCILIATION_MAX_LIMIT,
  ReconciliationPageQueryDto,
  ReconciliationStatusResponse,
  statementResultView,
  statusView,
} from './dto/reconciliation-reads.dto';
import { ReconciledPayment, ReconciliationReadsRepository, ReconciliationScope } from './reconciliation-reads.repository';

const scopeOf = ({ connection }: Principal, entity: ConnectionEntity): ReconciliationScope => ({ connectionId: connection.id, entityId: entity.id });
const pageOf = (query: ReconciliationPageQueryDto) => ({ limit: query.limit ?? RECONCILIATION_MAX_LIMIT, offset: query.offset ?? 0 });
/** An empty list (`kind=`) filters nothing, as `individual_ids=` reads every individual. */
const nonEmpty = <T>(list: T[] | undefined): T[] | undefined => (list === undefined || list.length === 0 ? undefined : list);

const discrepancyNotFound = (id: string) => notFound(`No discrepancy ${id} for this entity`, 'discrepancy_not_found');
const paymentNotReconciled = (id: string) =>
  notFound(
    `No reconciled statement of payment ${id} for this entity; statements are reconciled after each sync (GET /reconciliation/status)`,
    'payment_not_reconciled',
  );

/**
 * Payroll reconciliation as the employer's application reads it: did payroll deduct what was
 * enrolled (discrepancies, per-statement results), what a recordkeeper is sent per pay date
 * (contributions, also as CSV), and when reconciliation last ran. Reads of the token's
 * connection and its one entity (`entity_ids`, as every employer read takes it); another's ids
 * answer 404. Amounts are integer cents.
 */
@ApiTags('reconciliation')
@ApiBearerAuth('access-token')
@RequiresApiVersion()
// The product that enrolls people in deductions is the one whose outcome these reads report.
@RequiresAccessToken('benefits')
@Controller('reconciliation')
export class ReconciliationReadsController {
  constructor(private readonly reads: ReconciliationReadsRepository) {}

  @Get('discrepancies')
  @ApiOperation({ summary: 'List discrepancies between enrollments and payroll, newest opened first' })
  @ApiOkResponse({ type: DiscrepancyListResponse })
  async discrepancies(
    @CurrentPrincipal() principal: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Query() query: DiscrepanciesQueryDto,
  ): Promise<DiscrepancyListResponse> {
    const page = await this.reads.discrepancies(
      scopeOf(principal, entity),
      {
        benefitId: query.benefit_id?.toLowerCase(),
        individualId: query.individual_id?.toLowerCase(),
        paymentId: query.payment_id?.toLowerCase(),
        kinds: nonEmpty(mergedList(query.kind, query['kind[]'])),
        statuses: nonEmpty(mergedList(query.status, query['status[]'])),
      },
      pageOf(query),
    );
    return { paging: { count: page.count, offset: page.offset }, discrepancies: page.items.map(discrepancyView) };
  }

  @Get('discrepancies/:discrepancy_id')
  @ApiOperation({ summary: 'Read one discrepancy' })
  @ApiOkResponse({ type: DiscrepancyResponse })
  async discrepancy(
    @CurrentPrincipal() principal: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('discrepancy_id', uuidParam('discrepancy_id')) id: string,
    @Query() _query: EntityScopedQueryDto,
  ): Promise<DiscrepancyResponse> {
    const found = await this.reads.discrepancy(scopeOf(principal, entity), id.toLowerCase());
    if (!found) throw discrepancyNotFound(id);
    return discrepancyView(found);
  }

  @Get('payments/:payment_id/results')
  @ApiOperation({ summary: 'How each statement of one payment came out, per individual and benefit' })
  @ApiOkResponse({ type: PaymentResultsResponse })
  async results(
    @CurrentPrincipal() principal: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('payment_id', uuidParam('payment_id')) paymentId: string,
    @Query() query: PaymentResultsQueryDto,
  ): Promise<PaymentResultsResponse> {
    const payment = await this.reconciledPayment(scopeOf(principal, entity), paymentId);
    const page = await this.reads.statementResults(
      entity.id,
      payment.paymentId,
      {
        benefitId: query.benefit_id?.toLowerCase(),
        individualId: query.individual_id?.toLowerCase(),
        results: nonEmpty(mergedList(query.result, query['result[]'])),
      },
      pageOf(query),
    );
    return {
      payment_id: payment.paymentId,
      pay_date: payment.payDate,
      paging: { count: page.count, offset: page.offset },
      results: page.items.map(statementResultView),
    };
  }

  @Get('payments/:payment_id/contributions')
  @ApiOperation({
    summary: 'Contributions of one payment per individual and benefit, with year-to-date totals; the whole payment as CSV with Accept: text/csv or format=csv',
    description:
      'Observed amounts in cents: the employee amount under its tax treatment (pre-tax, Roth, after-tax) and the employer’s. ' +
      'Year to date: the same calendar year, payments up to this one (by pay date, then payment id). ' +
      `CSV (RFC 4180, CRLF, \`${CSV_CONTENT_TYPE}\`, attachment \`contributions-<payment_id>.csv\`): one header line ` +
      `\`${CONTRIBUTIONS_CSV_COLUMNS.join(',')}\`, then every row of the payment (limit and offset do not apply).`,
  })
  @ApiExtraModels(PaymentContributionsResponse)
  @ApiOkResponse({
    content: {
      'application/json': { schema: { $ref: getSchemaPath(PaymentContributionsResponse) } },
      'text/csv': { schema: { type: 'string' } },
    },
  })
  async contributions(
    @CurrentPrincipal() principal: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('payment_id', uuidParam('payment_id')) paymentId: string,
    @Query() query: PaymentContributionsQueryDto,
    // Read from the request: an `Accept` parameter is one OpenAPI ignores (the responses' media types say it).
    @Req() request: FastifyRequest,
  ): Promise<PaymentContributionsResponse | StreamableFile> {
    const scope = scopeOf(principal, entity);
    const filter = { benefitId: query.benefit_id?.toLowerCase() };
    if (query.format === 'csv' || (query.format === undefined && acceptsCsvOverJson(request.headers.accept))) {
      return this.contributionsCsv(scope, paymentId.toLowerCase(), filter);
    }
    const payment = await this.reconciledPayment(scope, paymentId);
    const [open, page] = await Promise.all([
      this.reads.openDiscrepanciesFedBy(scope, payment.paymentId, filter),
      this.reads.contributions(entity.id, payment.paymentId, filter, pageOf(query)),
    ]);
    return {
      payment_id: payment.paymentId,
      pay_date: payment.payDate,
      reconciled: open === 0,
      open_discrepancies: open,
      paging: { count: page.count, offset: page.offset },
      contributions: page.items.map(contributionView),
    };
  }

  @Get('status')
  @ApiOperation({ summary: 'When reconciliation last ran for the entity, and its live discrepancies by kind' })
  @ApiOkResponse({ type: ReconciliationStatusResponse })
  async status(
    @CurrentPrincipal() principal: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Query() _query: EntityScopedQueryDto,
  ): Promise<ReconciliationStatusResponse> {
    return statusView(entity.id, await this.reads.status(scopeOf(principal, entity)));
  }

  private async reconciledPayment(scope: ReconciliationScope, paymentId: string): Promise<ReconciledPayment> {
    const payment = await this.reads.reconciledPayment(scope.entityId, paymentId.toLowerCase());
    if (!payment) throw paymentNotReconciled(paymentId);
    return payment;
  }

  /**
   * The whole payment, read in batches in one snapshot, each batch made text before the next is
   * read: memory holds one batch of rows and the text (about 200 bytes a row, 2 MB for 10,000).
   */
  private async contributionsCsv(scope: ReconciliationScope, paymentId: string, filter: { benefitId?: string }): Promise<StreamableFile> {
    const chunks: string[] = [contributionsCsvHeader()];
    const exported = await this.reads.exportContributions(scope, paymentId, filter, (batch, payment) => chunks.push(contributionsCsvLines(payment, batch)));
    if (!exported) throw paymentNotReconciled(paymentId);
    return new StreamableFile(Buffer.from(chunks.join(''), 'utf8'), {
      type: CSV_CONTENT_TYPE,
      disposition: `attachment; filename="contributions-${paymentId}.csv"`,
    });
  }
}
