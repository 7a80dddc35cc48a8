import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Connection, Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { ArrayBodyPipe } from '../../infrastructure/http/array-body.pipe';
import { AnswerCarriesPersonalData } from '../../infrastructure/http/idempotency/secret-answers';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { EditSync, SandboxEditSyncs } from '../sync/sandbox-edit-syncs.service';
import { NewSandboxIndividualDto, UpdateSandboxEmploymentDto, UpdateSandboxIndividualDto } from './dto/sandbox-person.dto';
import { RunSandboxPaymentDto } from './dto/run-sandbox-payment.dto';
import { UpdateSandboxCompanyDto } from './dto/update-sandbox-company.dto';
import { SandboxPayrollService } from './sandbox-payroll.service';
import { uuidParam } from '../employer/dto/uuid-param';
import {
  SandboxEnrollmentEditDto,
  SandboxEnrollmentEndQueryDto,
  SandboxPayAdjustmentsClearedResponse,
  SandboxPayAdjustmentsDto,
  SandboxPayAdjustmentsResponse,
} from './dto/sandbox-payroll-faults.dto';
import { SandboxPayrollFaultsService } from './sandbox-payroll-faults.service';

/** Most individuals one `POST /sandbox/directory` adds. */
export const MAX_NEW_INDIVIDUALS = 1_000;

/** The sync an edit started, in its answer: fields of an object body, and headers (the directory's body is an array). */
export interface EditSyncFields {
  sync_job_id?: string | null;
  sync_status?: string;
}

const SYNC_HEADERS = {
  'Sync-Job-Id': { description: 'The data sync that shows this edit in synced reads', schema: { type: 'string', format: 'uuid' } },
  'Sync-Status': { description: 'That sync’s status when the edit answered', schema: { type: 'string' } },
};
const SYNC_NOTE =
  'On an entity that has synced, the edit starts a data sync (outside the refresh quota) and waits for it, so reads show the edit: ' +
  'the answer adds `sync_job_id` and `sync_status` (`complete`, or the status it had when the wait ran out)';

/**
 * Edits of a sandbox employer, as if made in the provider's own payroll system. They take the
 * connection's access token (sandbox connections only) and, like the other sandbox operations,
 * no Service-API-Version header.
 */
const isoDay = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const NEXT_TWO_WEEKS = { start_date: isoDay(1), end_date: isoDay(14) };

@ApiTags('sandbox')
@ApiBearerAuth('access-token')
@Controller('sandbox')
export class SandboxPayrollController {
  constructor(
    private readonly sandbox: SandboxPayrollService,
    private readonly editSyncs: SandboxEditSyncs,
    private readonly faults: SandboxPayrollFaultsService,
  ) {}

  @Put('company')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update the sandbox company (any subset of its fields; lists are replaced)', description: SYNC_NOTE })
  @ApiOkResponse({ description: 'The whole company after the update', headers: SYNC_HEADERS })
  async updateCompany(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: UpdateSandboxCompanyDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.sandbox.updateCompany(connection, entity, body));
  }

  @Post('directory')
  @HttpCode(200)
  @RequiresAccessToken()
  // The records made are answered with their SSNs.
  @AnswerCarriesPersonalData()
  @ApiOperation({
    summary: `Add 1–${MAX_NEW_INDIVIDUALS} individuals with their employment to the sandbox employer`,
    description: `${SYNC_NOTE}; the body being an array, they come as the Sync-Job-Id and Sync-Status headers only`,
  })
  @ApiBody({ type: [NewSandboxIndividualDto], description: 'A bare JSON array' })
  @ApiOkResponse({ description: 'The created records, with the ids minted for them', headers: SYNC_HEADERS })
  async addIndividuals(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body(new ArrayBodyPipe(NewSandboxIndividualDto, { min: 1, max: MAX_NEW_INDIVIDUALS })) body: NewSandboxIndividualDto[],
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.sandbox.addIndividuals(connection, entity, body));
  }

  @Put('individual/:individual_id')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update a sandbox individual (any subset of its fields)', description: SYNC_NOTE })
  @ApiOkResponse({ description: 'The individual after the update', headers: SYNC_HEADERS })
  async updateIndividual(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('individual_id') individualId: string,
    @Body() body: UpdateSandboxIndividualDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.sandbox.updateIndividual(connection, entity, individualId, body));
  }

  @Put('employment/:individual_id')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update a sandbox employment; terminate with end_date and is_active: false', description: SYNC_NOTE })
  @ApiOkResponse({ description: 'The employment after the update', headers: SYNC_HEADERS })
  async updateEmployment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('individual_id') individualId: string,
    @Body() body: UpdateSandboxEmploymentDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.sandbox.updateEmployment(connection, entity, individualId, body));
  }

  @Post('payment')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({
    summary: 'Run one pay period for every active employee, with their enrollments in force',
    description:
      'The public body `{start_date, end_date, pay_statements}`: the dates are the pay period (any, up to a year: a week, ' +
      'two weeks, half a month or a month is a whole period of that frequency, any other is paid for its days), paid on ' +
      'end_date; the statements are stored as written, one per employee paid in the period, and every other employee gets a ' +
      'computed one. `pay_date` sets the pay date (alone: the bi-weekly run paid ' +
      `then); without either, the next regular run. ${SYNC_NOTE}`,
  })
  @ApiBody({
    type: RunSandboxPaymentDto,
    // The public body: a pay period, paid on its end date (the two weeks after the service started, so the example runs).
    examples: { period: { summary: 'A pay period, paid on its end date', value: NEXT_TWO_WEEKS } },
  })
  @ApiOkResponse({ description: '{ payment_id, pay_date }, with sync_job_id and sync_status after a sync', headers: SYNC_HEADERS })
  async runPayment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    // The class alone (no `| undefined`): the validation pipe finds it in the parameter's design type.
    @Body() body: RunSandboxPaymentDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.sandbox.runPayment(connection, entity, withoutNulls(body)));
  }

  // ---- Payroll faults (sandbox-payroll-faults.service.ts): payroll made wrong at the provider, for reconciliation to find.

  @Put('benefits/:benefit_id/individuals/:individual_id')
  @RequiresAccessToken()
  @ApiOperation({
    summary: 'A payroll admin’s edit of an enrollment at the sandbox provider, bypassing the service’s enrollment records',
    description:
      'Writes the individual’s enrollment in the benefit at the sandbox provider from `effective_date` (default today) on, with ' +
      '`configuration` as `POST /employer/benefits/{benefit_id}/individuals` takes it, stored with every field present; the ' +
      'service’s own enrollment records do not change, so its reads of them differ from what payroll deducts. ' +
      `${SYNC_NOTE}`,
  })
  @ApiOkResponse({
    description: 'The enrollment as the sandbox holds it: `{benefit_id, individual_id, effective_date, configuration, ended_on}`',
    headers: SYNC_HEADERS,
  })
  async editEnrollment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
    @Param('individual_id', uuidParam('individual_id')) individualId: string,
    @Body() body: SandboxEnrollmentEditDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.faults.editEnrollment(connection, entity, benefitId, individualId, body));
  }

  @Delete('benefits/:benefit_id/individuals/:individual_id')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({
    summary: 'End an enrollment at the sandbox provider, bypassing the service’s enrollment records',
    description:
      'Ends the individual’s enrollment in the benefit at the sandbox provider from `effective_date` (default today) on; one only ' +
      `scheduled after it is dropped. 404 \`enrollment_not_found\` when there is none in force or scheduled. ${SYNC_NOTE}`,
  })
  @ApiOkResponse({ description: '`{benefit_id, individual_id, ended_on}`', headers: SYNC_HEADERS })
  async endEnrollment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
    @Param('individual_id', uuidParam('individual_id')) individualId: string,
    @Query() query: SandboxEnrollmentEndQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.synced(connection, entity, reply, await this.faults.endEnrollment(connection, entity, benefitId, individualId, query));
  }

  @Post('payroll/adjustments')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({
    summary: 'Adjust the next regular pay run: skip, change or keep a benefit’s deduction for individuals',
    description:
      'Pending until the employer’s next regular pay run (`POST /sandbox/payment`), which applies them to its computed statements ' +
      'and consumes them all, also those of people it does not pay. `skip`: no deduction and no employer contribution line for ' +
      'the benefit; `change`: the deduction line set to `employee_amount` and/or the contribution line to `employer_amount` ' +
      '(cents; a line absent is added, 0 removes it; a deduction never takes net pay below 0); `keep`: deducted with the last ' +
      'configuration of an enrollment that has ended, as if in force. Taxes stay as computed: net pay moves by the deduction ' +
      'difference. A later request replaces the pending adjustment of the same individual and benefit. No sync is started: ' +
      'the pay run’s shows its statements.',
  })
  @ApiOkResponse({ type: SandboxPayAdjustmentsResponse, description: 'Every pending adjustment of the employer' })
  addAdjustments(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Body() body: SandboxPayAdjustmentsDto) {
    return this.faults.addAdjustments(connection, entity, body);
  }

  @Get('payroll/adjustments')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'The adjustments pending for the next regular pay run' })
  @ApiOkResponse({ type: SandboxPayAdjustmentsResponse })
  adjustments(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity) {
    return this.faults.adjustments(connection, entity);
  }

  @Delete('payroll/adjustments')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Drop every adjustment pending for the next regular pay run' })
  @ApiOkResponse({ type: SandboxPayAdjustmentsClearedResponse, description: 'No adjustment left, and how many were dropped' })
  clearAdjustments(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity) {
    return this.faults.clearAdjustments(connection, entity);
  }

  /** Starts the sync that shows the edit in synced reads, and tells the client which it is. */
  private async synced<T extends object>(connection: Connection, entity: ConnectionEntity, reply: FastifyReply, answer: T): Promise<T & EditSyncFields> {
    const sync = await this.editSyncs.afterEdit(connection, entity.id);
    if (!sync) return answer;
    setSyncHeaders(reply, sync);
    return Array.isArray(answer) ? answer : { ...answer, sync_job_id: sync.jobId, sync_status: sync.status };
  }
}

/** No body is an empty one; a null `pay_date` (the one nullable field) is an absent one. */
function withoutNulls(body: RunSandboxPaymentDto | undefined): RunSandboxPaymentDto {
  if (!body) return {};
  return body.pay_date === null ? { ...body, pay_date: undefined } : body;
}

function setSyncHeaders(reply: FastifyReply, sync: EditSync): void {
  if (sync.jobId !== null) void reply.header('sync-job-id', sync.jobId);
  void reply.header('sync-status', sync.status);
}
