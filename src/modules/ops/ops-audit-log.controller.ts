import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { ListAuditQueryDto, MAX_AUDIT_PAGE } from './dto/audit-log.dto';
import { OpsAuditLogRepository } from './ops-audit-log.repository';
import { pageOf } from './ops-ids';

/** Who did what through the ops API, and when. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/audit')
@UseGuards(OpsCredentialsGuard)
export class OpsAuditLogController {
  constructor(private readonly audit: OpsAuditLogRepository) {}

  @Get()
  @ApiOperation({ summary: 'The audit trail, newest first; filter by target, actor, action' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [{ audit_id, actor, action, target_type, target_id, detail, at }] }' })
  async list(@Query() query: ListAuditQueryDto) {
    const page = { limit: query.limit ?? MAX_AUDIT_PAGE, offset: query.offset ?? 0 };
    const { count, entries } = await this.audit.list(
      { targetType: query.target_type, targetId: query.target_id, actor: query.actor, action: query.action },
      page,
    );
    return pageOf(count, page.offset, entries);
  }
}
