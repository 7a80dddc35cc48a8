import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, UseInterceptors } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { AnswerCarriesPersonalData } from '../../infrastructure/http/idempotency/secret-answers';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import {
  DIRECTORY_DEFAULT_LIMIT,
  DIRECTORY_MAX_LIMIT,
  DirectoryQueryDto,
  EmploymentRequestDto,
  IndividualRequestDto,
  PAY_STATEMENT_DEFAULT_LIMIT,
  PayGroupsQueryDto,
  PaymentQueryDto,
  PayStatementRequestDto,
} from './dto/employer-reads.dto';
import { ApiEntityQuery, mergedList } from './dto/entity-scoped-query.dto';
import { isUuid, uuidParam } from './dto/uuid-param';
import { batchError, lookupIds, peopleBatch } from './batch-responses';
import { ReadCache } from '../read-cache/read-cache';
import { SyncedReadInterceptor } from '../read-cache/synced-read.interceptor';
import { EmployerReadsService, ReadScope } from './employer-reads.service';
import { employmentNotFound, individualNotFound, notFoundMessage, paymentNotFound, SyncedAsOf } from './not-found-messages';

/** Employer reads of the Unified API; scoped to one entity of the token's connection. */
@ApiTags('employer')
@ApiBearerAuth('access-token')
@RequiresApiVersion()
@UseInterceptors(SyncedReadInterceptor)
@Controller('employer')
export class EmployerController {
  constructor(private readonly reads: EmployerReadsService) {}

  @Get('company')
  @RequiresAccessToken('company')
  @ApiOperation({ summary: 'Read the company' })
  @ApiEntityQuery()
  async company(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity) {
    const company = await this.reads.company({ connection, entity });
    if (!company) throw notFound('The provider has no company data for this entity', 'company_not_found');
    return company;
  }

  @Get('directory')
  @RequiresAccessToken('directory')
  @ApiOperation({ summary: 'List the company directory, a page at a time' })
  async directory(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Query() query: DirectoryQueryDto,
  ) {
    if (query.limit !== undefined && query.limit > DIRECTORY_MAX_LIMIT) {
      throw new DomainError('unprocessable_request_error', `Page size exceeds the maximum of ${DIRECTORY_MAX_LIMIT} items. Please reduce the limit parameter.`, {
        serviceCode: 'page_size_limit_exceeded',
      });
    }
    const page = await this.reads.directory(
      { connection, entity },
      { limit: query.limit ?? DIRECTORY_DEFAULT_LIMIT, offset: query.offset ?? 0 },
    );
    return { paging: { count: page.count, offset: page.offset }, individuals: page.items };
  }

  @Post('individual')
  @HttpCode(200)
  @RequiresAccessToken('individual')
  // With `options.include: ["ssn"]` the answer carries SSNs.
  @AnswerCarriesPersonalData()
  @ApiOperation({ summary: 'Read individuals by id; each item answers with its own code' })
  @ApiEntityQuery()
  async individual(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: IndividualRequestDto,
    @Req() request: FastifyRequest,
  ) {
    const requested = body.requests.map((r) => r.individual_id);
    const includeSsn = body.options?.include?.includes('ssn') ?? false;
    const scope: ReadScope = { connection, entity };
    const found = await this.reads.individuals(scope, lookupIds(requested), { includeSsn });
    const asOf = await this.syncedAsOfWhenMissing(scope, requested, found, request);
    return { responses: peopleBatch(requested, found, (id) => notFoundMessage(individualNotFound(id), asOf)) };
  }

  @Post('employment')
  @HttpCode(200)
  @RequiresAccessToken('employment')
  @ApiOperation({ summary: 'Read employments by individual id; each item answers with its own code' })
  @ApiEntityQuery()
  async employment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: EmploymentRequestDto,
    @Req() request: FastifyRequest,
  ) {
    const requested = body.requests.map((r) => r.individual_id);
    const scope: ReadScope = { connection, entity };
    const found = await this.reads.employments(scope, lookupIds(requested));
    const asOf = await this.syncedAsOfWhenMissing(scope, requested, found, request);
    return { responses: peopleBatch(requested, found, (id) => notFoundMessage(employmentNotFound(id), asOf)) };
  }

  @Get('payment')
  @RequiresAccessToken('payment')
  @ApiOperation({ summary: 'List payments with a pay date in [start_date, end_date], oldest first' })
  @ApiOkResponse({ description: 'A bare array of Payment, as clients of this API family expect' })
  async payment(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Query() query: PaymentQueryDto) {
    if (query.start_date > query.end_date) {
      throw invalidRequest(`Invalid request: start_date (${query.start_date}) must not be after end_date (${query.end_date})`);
    }
    return this.reads.payments({ connection, entity }, query.start_date, query.end_date);
  }

  @Post('pay-statement')
  @HttpCode(200)
  @RequiresAccessToken('pay_statement')
  @ApiOperation({ summary: 'Read the pay statements of up to 10 payments, a page each' })
  @ApiEntityQuery()
  async payStatement(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: PayStatementRequestDto,
    @Req() request: FastifyRequest,
  ) {
    const scope: ReadScope = { connection, entity };
    let asOf: Promise<SyncedAsOf | undefined> | undefined;
    // Up to ten payments: asked together, so a live read waits for the provider about once.
    const responses = await Promise.all(
      body.requests.map(async ({ payment_id, limit, offset }) => {
        if (!isUuid(payment_id)) return batchError('payment_id', payment_id, invalidRequest('payment_id must be a UUID'));
        const page = await this.reads.payStatements(scope, payment_id.toLowerCase(), {
          limit: limit ?? PAY_STATEMENT_DEFAULT_LIMIT,
          offset: offset ?? 0,
        });
        if (!page) {
          ReadCache.doNotKeep(request);
          const message = notFoundMessage(paymentNotFound(payment_id), await (asOf ??= this.reads.syncedAsOf(scope)));
          return batchError('payment_id', payment_id, notFound(message, 'payment_not_found'));
        }
        return { payment_id, code: 200, body: { paging: { count: page.count, offset: page.offset }, pay_statements: page.items } };
      }),
    );
    return { responses };
  }

  @Get('pay-groups')
  @RequiresAccessToken('payment')
  @ApiOperation({ summary: 'List pay groups, optionally those of one individual or pay frequencies' })
  async payGroups(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Query() query: PayGroupsQueryDto,
  ) {
    const groups = await this.reads.payGroups(
      { connection, entity },
      { individualId: query.individual_id?.toLowerCase(), payFrequencies: mergedList(query.pay_frequencies, query['pay_frequencies[]']) },
    );
    return groups.map(({ id, name, pay_frequencies }) => ({ id, name, pay_frequencies }));
  }

  @Get('pay-groups/:pay_group_id')
  @RequiresAccessToken('payment')
  @ApiOperation({ summary: 'Read one pay group with its individuals' })
  @ApiEntityQuery()
  async payGroup(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('pay_group_id', uuidParam('pay_group_id')) payGroupId: string,
  ) {
    const group = await this.reads.payGroup({ connection, entity }, payGroupId.toLowerCase());
    if (!group) throw notFound(`No pay group ${payGroupId} for this entity`, 'pay_group_not_found');
    return group;
  }

  /** Looked up only when some well-formed id was not found: its 404 says what the read answered from. */
  private async syncedAsOfWhenMissing(
    scope: ReadScope,
    requested: string[],
    found: { id: string }[],
    request: FastifyRequest,
  ): Promise<SyncedAsOf | undefined> {
    const known = new Set(found.map((record) => record.id.toLowerCase()));
    if (lookupIds(requested).every((id) => known.has(id))) return undefined;
    // The message names the sync under way, which changes without a new generation: not kept.
    ReadCache.doNotKeep(request);
    return this.reads.syncedAsOf(scope);
  }
}
