import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { ApiEntityQuery } from '../employer/dto/entity-scoped-query.dto';
import { uuidParam } from '../employer/dto/uuid-param';
import { CreateRuleDto, UpdateRuleDto } from './dto/rule.dto';
import { RulesService } from './rules.service';

/** Rules that attach metadata to pay-statement items; one entity's rules at a time. */
@ApiTags('pay-statement-item rules')
@ApiBearerAuth('access-token')
@ApiEntityQuery()
@RequiresApiVersion()
@RequiresAccessToken('pay_statement')
@Controller('employer/pay-statement-item/rule')
export class RulesController {
  constructor(private readonly rules: RulesService) {}

  @Get()
  @ApiOperation({ summary: 'List the rules, highest priority first' })
  async list(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity) {
    return { responses: await this.rules.list({ connectionId: connection.id, entity }) };
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a rule; priority defaults to the highest + 1' })
  create(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Body() body: CreateRuleDto) {
    return this.rules.create({ connectionId: connection.id, entity }, body);
  }

  @Put(':rule_id')
  @ApiOperation({ summary: 'Update a rule: the fields given replace the current ones' })
  update(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('rule_id', uuidParam('rule_id')) ruleId: string,
    @Body() body: UpdateRuleDto,
  ) {
    return this.rules.update({ connectionId: connection.id, entity }, ruleId, body);
  }

  @Delete(':rule_id')
  @ApiOperation({ summary: 'Delete a rule; answers the rule with its deleted_at' })
  delete(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Param('rule_id', uuidParam('rule_id')) ruleId: string,
  ) {
    return this.rules.delete({ connectionId: connection.id, entity }, ruleId);
  }
}
