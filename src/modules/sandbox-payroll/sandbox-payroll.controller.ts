import { Body, Controller, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { ArrayBodyPipe } from '../../infrastructure/http/array-body.pipe';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { NewSandboxIndividualDto, UpdateSandboxEmploymentDto, UpdateSandboxIndividualDto } from './dto/sandbox-person.dto';
import { RunSandboxPaymentDto } from './dto/run-sandbox-payment.dto';
import { UpdateSandboxCompanyDto } from './dto/update-sandbox-company.dto';
import { SandboxPayrollService } from './sandbox-payroll.service';

/** Most individuals one `POST /sandbox/directory` adds. */
export const MAX_NEW_INDIVIDUALS = 1_000;

/**
 * Edits of a sandbox employer, as if made in the provider's own payroll system. They take the
 * connection's access token (sandbox connections only) and, like the other sandbox operations,
 * no Service-API-Version header.
 */
@ApiTags('sandbox')
@ApiBearerAuth('access-token')
@Controller('sandbox')
export class SandboxPayrollController {
  constructor(private readonly sandbox: SandboxPayrollService) {}

  @Put('company')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update the sandbox company (any subset of its fields; lists are replaced)' })
  @ApiOkResponse({ description: 'The whole company after the update' })
  updateCompany(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Body() body: UpdateSandboxCompanyDto) {
    return this.sandbox.updateCompany(connection, entity, body);
  }

  @Post('directory')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({ summary: `Add 1–${MAX_NEW_INDIVIDUALS} individuals with their employment to the sandbox employer` })
  @ApiBody({ type: [NewSandboxIndividualDto], description: 'A bare JSON array' })
  @ApiOkResponse({ description: 'The created records, with the ids minted for them' })
  addIndividuals(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body(new ArrayBodyPipe(NewSandboxIndividualDto, { min: 1, max: MAX_NEW_INDIVIDUALS })) body: NewSandboxIndividualDto[],
  ) {
    return this.sandbox.addIndividuals(connection, entity, body);
  }

  @Put('individual/:individual_id')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update a sandbox individual (any subset of its fields)' })
  @ApiOkResponse({ description: 'The individual after the update' })
  updateIndividual(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('individual_id') individualId: string,
    @Body() body: UpdateSandboxIndividualDto,
  ) {
    return this.sandbox.updateIndividual(connection, entity, individualId, body);
  }

  @Put('employment/:individual_id')
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Update a sandbox employment; terminate with end_date and is_active: false' })
  @ApiOkResponse({ description: 'The employment after the update' })
  updateEmployment(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('individual_id') individualId: string,
    @Body() body: UpdateSandboxEmploymentDto,
  ) {
    return this.sandbox.updateEmployment(connection, entity, individualId, body);
  }

  @Post('payment')
  @HttpCode(200)
  @RequiresAccessToken()
  @ApiOperation({ summary: 'Run one pay period for every active employee, with their enrollments in force' })
  @ApiOkResponse({ description: '{ payment_id, pay_date }' })
  runPayment(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Body() body: RunSandboxPaymentDto) {
    return this.sandbox.runPayment(connection, entity, body?.pay_date ?? undefined);
  }
}
