import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import { pageOf } from '../ops/ops-ids';
import { ListWebhookDeliveriesQueryDto, MAX_DELIVERIES_PAGE, WebhookDeliveryDetailResponse } from './dto/webhook-endpoint.dto';
import { endpointView, WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';

export class OpsDeliveriesQueryDto extends ListWebhookDeliveriesQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'endpoint_id must be a UUID' })
  endpoint_id?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'The application (client_id) whose endpoints' })
  @IsOptional()
  @IsUUID('all', { message: 'application_id must be a UUID' })
  application_id?: string;
}

/** Every application's webhook endpoints and deliveries, for the ops dashboard; Resend of a finished delivery. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/webhooks')
@UseGuards(OpsCredentialsGuard)
export class OpsWebhooksController {
  constructor(
    private readonly webhooks: WebhookEndpointsService,
    private readonly endpoints: WebhookEndpointsRepository,
  ) {}

  @Get('endpoints')
  @ApiOperation({ summary: 'Every endpoint with its application and delivery counts; disabled ones carry the reason' })
  @ApiOkResponse({ description: '{ data: [endpoint + application_id, application_name, pending, failed, delivered, last_delivered_at] }' })
  async endpointsList() {
    const all = await this.webhooks.all();
    const counts = await this.endpoints.countsOf(all.map((e) => e.id));
    return {
      data: all.map((e) => {
        const c = counts.get(e.id)!;
        return {
          ...endpointView(e),
          application_id: e.applicationId,
          application_name: e.applicationName,
          pending: c.pending,
          failed: c.failed,
          delivered: c.delivered,
          last_delivered_at: c.lastDeliveredAt ? c.lastDeliveredAt.toISOString() : null,
        };
      }),
    };
  }

  @Get('deliveries')
  @ApiOperation({ summary: 'Deliveries, newest first; filter by status, endpoint, application' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [delivery] }' })
  async deliveries(@Query() query: OpsDeliveriesQueryDto) {
    const page = { limit: query.limit ?? MAX_DELIVERIES_PAGE, offset: query.offset ?? 0 };
    const { count, deliveries } = await this.webhooks.deliveries(
      { status: query.status, endpointId: query.endpoint_id, applicationId: query.application_id },
      page,
    );
    return pageOf(count, page.offset, deliveries);
  }

  @Get('deliveries/:delivery_id')
  @ApiOkResponse({ type: WebhookDeliveryDetailResponse })
  delivery(@Param('delivery_id') id: string): Promise<WebhookDeliveryDetailResponse> {
    return this.webhooks.delivery(id);
  }

  @Post('deliveries/:delivery_id/resend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sends a delivered or failed delivery again (same event id, fresh retry window); audited' })
  @ApiOkResponse({ type: WebhookDeliveryDetailResponse })
  resend(@Param('delivery_id') id: string, @OpsUser() user: string): Promise<WebhookDeliveryDetailResponse> {
    return this.webhooks.resend(id, { kind: 'ops', user });
  }
}
