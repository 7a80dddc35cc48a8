import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { invalidRequest, notFound } from '../../domain/shared/domain-error';
import { ArrayBodyPipe } from '../../infrastructure/http/array-body.pipe';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { batchError } from '../employer/batch-responses';
import { ApiEntityQuery, mergedList } from '../employer/dto/entity-scoped-query.dto';
import { isUuid, uuidParam } from '../employer/dto/uuid-param';
import {
  EnrolledIndividualsQueryDto,
  EnrolledResponse,
  EnrollmentElementDto,
  isPlainEnrollmentElement,
  JobIdResponse,
  MAX_ENROLLMENT_ELEMENTS,
  UnenrollDto,
} from './dto/enrollment.dto';
import { CommandBus } from '@nestjs/cqrs';
import { EnrollIndividualsCommand, UnenrollIndividualsCommand } from './commands/enrollment-commands';
import { EnrollmentsService } from './enrollments.service';

/** Enrollment of individuals in a benefit; every operation is scoped to one entity. */
@ApiTags('benefits')
@ApiBearerAuth('access-token')
@RequiresApiVersion()
@RequiresAccessToken('benefits')
@Controller('employer/benefits/:benefit_id')
export class EnrollmentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly service: EnrollmentsService,
  ) {}

  @Post('individuals')
  @HttpCode(200)
  @ApiOperation({ summary: 'Enroll individuals (overwrite); one provider call per effective date, on that date' })
  @ApiEntityQuery()
  @ApiBody({ type: [EnrollmentElementDto] })
  @ApiOkResponse({ type: JobIdResponse })
  async enroll(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
    @Body(new ArrayBodyPipe(EnrollmentElementDto, { min: 1, max: MAX_ENROLLMENT_ELEMENTS }, isPlainEnrollmentElement)) elements: EnrollmentElementDto[],
  ): Promise<JobIdResponse> {
    const { jobId } = await this.commands.execute(new EnrollIndividualsCommand({ connection, entity }, benefitId, elements));
    return { job_id: jobId! };
  }

  @Delete('individuals')
  @HttpCode(200)
  @ApiOperation({ summary: 'Unenroll individuals from the request date on' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: JobIdResponse })
  async unenroll(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
    @Body() body: UnenrollDto,
  ): Promise<JobIdResponse> {
    const { jobId } = await this.commands.execute(new UnenrollIndividualsCommand({ connection, entity }, benefitId, body.individual_ids));
    return { job_id: jobId! };
  }

  @Get('enrolled')
  @ApiOperation({ summary: 'Individuals enrolled in the benefit today' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: EnrolledResponse })
  async enrolled(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
  ): Promise<EnrolledResponse> {
    const { benefit, enrollments } = await this.service.inForce({ connection, entity }, benefitId);
    return { benefit_id: benefit.id, individual_ids: enrollments.map((e) => e.individualId) };
  }

  @Get('individuals')
  @ApiOperation({ summary: 'Enrollments of individuals in the benefit today; each item answers with its own code' })
  async individuals(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id', uuidParam('benefit_id')) benefitId: string,
    @Query() query: EnrolledIndividualsQueryDto,
  ) {
    // Absent or empty (`individual_ids=`): every individual, as the public API family reads it.
    const listed = mergedList(query.individual_ids, query['individual_ids[]']);
    const requested = listed !== undefined && listed.length > 0 ? listed : undefined;
    if (requested !== undefined && requested.length > MAX_ENROLLMENT_ELEMENTS) {
      throw invalidRequest(`Invalid request: individual_ids must hold at most ${MAX_ENROLLMENT_ELEMENTS} ids`);
    }
    const lookup = requested?.filter(isUuid);
    const { enrollments } = await this.service.inForce({ connection, entity }, benefitId, lookup);
    const byId = new Map(enrollments.map((e) => [e.individualId.toLowerCase(), e]));
    const ids = requested ?? enrollments.map((e) => e.individualId);
    return ids.map((id) => {
      if (!isUuid(id)) return batchError('individual_id', id, invalidRequest('individual_id must be a UUID'));
      const enrollment = byId.get(id.toLowerCase());
      if (!enrollment) {
        return batchError('individual_id', id, notFound(`Individual ${id} is not enrolled in this benefit`, 'enrollment_not_found'));
      }
      const c = enrollment.configuration;
      return {
        individual_id: id,
        code: 200,
        body: {
          employee_deduction: c.employee_deduction,
          company_contribution: c.company_contribution,
          annual_maximum: c.annual_maximum,
          catch_up: c.catch_up,
          hsa_contribution_limit: c.hsa_contribution_limit,
        },
      };
    });
  }
}
