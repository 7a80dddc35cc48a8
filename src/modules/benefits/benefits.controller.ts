import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { ApiEntityQuery } from '../employer/dto/entity-scoped-query.dto';
import { CommandBus } from '@nestjs/cqrs';
import { BenefitsService } from './benefits.service';
import { CreateBenefitCommand, RegisterBenefitCommand, UpdateBenefitCommand } from './commands/benefit-commands';
import { BenefitMetaEntry, benefitsMetaView } from './dto/benefit-meta.dto';
import { BenefitJobResponse, BenefitResponse, benefitView, CreateBenefitDto, RegisterBenefitDto, UpdateBenefitDto } from './dto/benefit.dto';

/**
 * Deductions (company-wide benefits) of one entity. `meta` and `register` are declared before
 * `:benefit_id` (and are static routes, which the router prefers anyway), so neither is read as an id.
 */
@ApiTags('benefits')
@ApiBearerAuth('access-token')
@RequiresApiVersion()
@RequiresAccessToken('benefits')
@Controller('employer/benefits')
export class BenefitsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly benefits: BenefitsService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'List the deductions: live from an Automated provider (plus creations still pending), the service’s record for an Assisted one' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: [BenefitResponse] })
  async list(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity): Promise<BenefitResponse[]> {
    return (await this.benefits.list({ connection, entity })).map(benefitView);
  }

  @Get('meta')
  @ApiOperation({ summary: 'For each benefit type the connection’s provider supports, its features and operations' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: [BenefitMetaEntry] })
  meta(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() _entity: ConnectionEntity): BenefitMetaEntry[] {
    return benefitsMetaView(this.benefits.meta(connection));
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a deduction; the same type, frequency and description answers the existing benefit_id' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: BenefitJobResponse })
  async create(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: CreateBenefitDto,
  ): Promise<BenefitJobResponse> {
    const answer = await this.commands.execute(
      new CreateBenefitCommand(
      { connection, entity },
      {
        type: body.type,
        description: body.description,
        frequency: body.frequency ?? null,
        companyContribution: body.company_contribution ? { type: 'match', tiers: body.company_contribution.tiers.map((t) => ({ match: t.match, threshold: t.threshold })) } : null,
      }),
    );
    return { benefit_id: answer.benefitId, job_id: answer.jobId };
  }

  @Post('register')
  @HttpCode(200)
  @ApiOperation({ summary: 'Register a deduction the employer runs at an Assisted provider' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: BenefitJobResponse })
  async register(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Body() body: RegisterBenefitDto,
  ): Promise<BenefitJobResponse> {
    const answer = await this.commands.execute(
      new RegisterBenefitCommand(
        { connection, entity },
        { type: body.type, description: body.description, frequency: body.frequency, companyContribution: null },
      ),
    );
    return { benefit_id: answer.benefitId, job_id: answer.jobId };
  }

  @Get(':benefit_id')
  @ApiOperation({ summary: 'Read one deduction' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: BenefitResponse })
  async get(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id') benefitId: string,
  ): Promise<BenefitResponse> {
    return benefitView(await this.benefits.get({ connection, entity }, benefitId.toLowerCase()));
  }

  @Post(':benefit_id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Change a deduction’s description' })
  @ApiEntityQuery()
  @ApiOkResponse({ type: BenefitJobResponse })
  async update(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('benefit_id') benefitId: string,
    @Body() body: UpdateBenefitDto,
  ): Promise<BenefitJobResponse> {
    const answer = await this.commands.execute(new UpdateBenefitCommand({ connection, entity }, benefitId.toLowerCase(), body.description));
    return { benefit_id: answer.benefitId, job_id: answer.jobId };
  }
}
