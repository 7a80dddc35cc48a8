import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { notFound } from '../../domain/shared/domain-error';
import { OpsCredentialsGuard } from '../ops-auth/ops-credentials.guard';
import { ListOpsConnectionsQueryDto, MAX_CONNECTIONS_PAGE, OpsConnectionDetailResponse } from './dto/ops-connection.dto';
import { OpsConnectionsRepository } from './ops-connections.repository';
import { pageOf, requireUuid } from './ops-ids';

/** Employers' connections: status, entities, and their latest data sync. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/connections')
@UseGuards(OpsCredentialsGuard)
export class OpsConnectionsController {
  constructor(private readonly connections: OpsConnectionsRepository) {}

  @Get()
  @ApiOperation({ summary: 'Connections, newest first, with entities and the latest sync; filter by status, provider' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [connection] }' })
  async list(@Query() query: ListOpsConnectionsQueryDto) {
    const page = { limit: query.limit ?? MAX_CONNECTIONS_PAGE, offset: query.offset ?? 0 };
    const { count, connections } = await this.connections.list({ status: query.status, providerId: query.provider_id }, page);
    return pageOf(count, page.offset, connections);
  }

  @Get(':connection_id')
  @ApiOperation({ summary: 'One connection with its recent syncs and counts of its unfinished work' })
  @ApiOkResponse({ type: OpsConnectionDetailResponse })
  async get(@Param('connection_id') id: string): Promise<OpsConnectionDetailResponse> {
    const connection = await this.connections.find(requireUuid('connection_id', id));
    if (!connection) throw notFound(`No connection ${id}`, 'connection_not_found');
    return connection;
  }
}
