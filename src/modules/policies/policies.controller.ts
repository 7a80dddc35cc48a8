import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PolicyEscalation } from '../../domain/policies/auto-enrollment-policy';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import { CreatePolicyDto, EscalationDto, ListPoliciesQueryDto, MAX_POLICIES_PAGE, PolicyResponse, policyView, UpdatePolicyDto } from './dto/policy.dto';
import { PoliciesService } from './policies.service';

const escalationOf = (dto: EscalationDto | null | undefined): PolicyEscalation | null | undefined =>
  dto && { increase: dto.increase, cap: dto.cap };

/** Auto-enrollment policies for new hires (HTTP Basic with the ops credentials). */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/policies')
@UseGuards(OpsCredentialsGuard)
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Creates the policy of an entity for one benefit (one per entity and benefit)' })
  @ApiOkResponse({ type: PolicyResponse })
  async create(@Body() body: CreatePolicyDto, @OpsUser() user: string): Promise<PolicyResponse> {
    const policy = await this.policies.create(
      {
        connectionId: body.connection_id,
        entityId: body.entity_id,
        benefitId: body.benefit_id,
        configuration: body.configuration,
        waitingPeriodDays: body.waiting_period_days,
        escalation: escalationOf(body.escalation) ?? null,
      },
      user,
    );
    return policyView(policy);
  }

  @Get()
  @ApiOperation({ summary: 'Policies, oldest first; filter by connection, entity, active' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [policy] }' })
  async list(@Query() query: ListPoliciesQueryDto) {
    const page = { limit: query.limit ?? MAX_POLICIES_PAGE, offset: query.offset ?? 0 };
    const active = query.active === undefined ? undefined : query.active === 'true';
    const { count, policies } = await this.policies.list({ connectionId: query.connection_id, entityId: query.entity_id, active }, page);
    return { paging: { count, offset: page.offset }, data: policies.map(policyView) };
  }

  @Get(':policy_id')
  @ApiOperation({ summary: 'One policy' })
  @ApiOkResponse({ type: PolicyResponse })
  async get(@Param('policy_id') id: string): Promise<PolicyResponse> {
    return policyView(await this.policies.get(id));
  }

  @Post(':policy_id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Changes configuration, waiting_period_days, escalation (null removes it) or active; absent fields stay' })
  @ApiOkResponse({ type: PolicyResponse })
  async update(@Param('policy_id') id: string, @Body() body: UpdatePolicyDto, @OpsUser() user: string): Promise<PolicyResponse> {
    const policy = await this.policies.update(
      id,
      { configuration: body.configuration, waitingPeriodDays: body.waiting_period_days, escalation: escalationOf(body.escalation), active: body.active },
      user,
    );
    return policyView(policy);
  }

  @Delete(':policy_id')
  @ApiOperation({ summary: 'Deactivates the policy: new hires are no longer enrolled by it' })
  @ApiOkResponse({ type: PolicyResponse })
  async deactivate(@Param('policy_id') id: string, @OpsUser() user: string): Promise<PolicyResponse> {
    return policyView(await this.policies.deactivate(id, user));
  }
}
