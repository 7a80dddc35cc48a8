import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBasicAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AnswerCarriesSecret } from '../../infrastructure/http/idempotency/secret-answers';
import { ClientAddress } from '../../infrastructure/http/client-address';
import { EVENT_TYPE_DESCRIPTIONS, OPT_IN_EVENT_TYPES, WEBHOOK_EVENT_TYPES, WebhookEventType } from '../../domain/webhooks/webhook-event-types';
import { Application, ApplicationsService } from '../applications/applications.service';
import { clientCredentialsOf } from '../applications/client-credentials';
import { pageOf } from '../ops/ops-ids';
import {
  CreateWebhookEndpointDto,
  ListWebhookDeliveriesQueryDto,
  MAX_DELIVERIES_PAGE,
  UpdateWebhookEndpointDto,
  WebhookDeliveryDetailResponse,
  WebhookEndpointResponse,
  WebhookEndpointWithSecretResponse,
} from './dto/webhook-endpoint.dto';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/**
 * An application's webhook endpoints, managed with its own credentials (HTTP Basic
 * `client_id:client_secret`, as `POST /hris/events`). An application sees and changes only its
 * own endpoints and their deliveries; another's answer 404.
 */
@ApiTags('webhooks')
@ApiBasicAuth('client-credentials')
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly webhooks: WebhookEndpointsService,
  ) {}

  @Get('event-types')
  @ApiOperation({ summary: 'The event types an endpoint can receive; opt_in types are sent only to endpoints that name them' })
  async eventTypes(@ClientAddress() from: string, @Headers('authorization') authorization?: string) {
    await this.caller(authorization, from);
    return {
      data: WEBHOOK_EVENT_TYPES.map((type) => ({
        type,
        opt_in: (OPT_IN_EVENT_TYPES as readonly string[]).includes(type),
        description: EVENT_TYPE_DESCRIPTIONS[type as WebhookEventType],
      })),
    };
  }

  @Post('endpoints')
  // The secret is kept only sealed: an Idempotency-Key replay answers the endpoint without it.
  @AnswerCarriesSecret('secret')
  @ApiOperation({ summary: 'Creates an endpoint; the answer carries its signing secret, shown only here and at rotation' })
  @ApiCreatedResponse({ type: WebhookEndpointWithSecretResponse })
  async create(
    @Body() body: CreateWebhookEndpointDto,
    @ClientAddress() from: string,
    @Headers('authorization') authorization?: string,
  ): Promise<WebhookEndpointWithSecretResponse> {
    const application = await this.caller(authorization, from);
    return this.webhooks.create(application.id, application.sandbox, body);
  }

  @Get('endpoints')
  @ApiOperation({ summary: 'This application’s endpoints, oldest first' })
  @ApiOkResponse({ description: '{ data: [endpoint] }' })
  async list(@ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<{ data: WebhookEndpointResponse[] }> {
    const application = await this.caller(authorization, from);
    return { data: await this.webhooks.list(application.id) };
  }

  @Get('endpoints/:endpoint_id')
  @ApiOkResponse({ type: WebhookEndpointResponse })
  async get(@Param('endpoint_id') id: string, @ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<WebhookEndpointResponse> {
    return this.webhooks.get((await this.caller(authorization, from)).id, id);
  }

  @Patch('endpoints/:endpoint_id')
  @ApiOperation({ summary: 'Changes url, event_types, description, enabled, ordered_by_connection or max_concurrency' })
  @ApiOkResponse({ type: WebhookEndpointResponse })
  async update(
    @Param('endpoint_id') id: string,
    @Body() body: UpdateWebhookEndpointDto,
    @ClientAddress() from: string,
    @Headers('authorization') authorization?: string,
  ): Promise<WebhookEndpointResponse> {
    const application = await this.caller(authorization, from);
    return this.webhooks.update(application.id, application.sandbox, id, body);
  }

  @Delete('endpoints/:endpoint_id')
  @ApiOperation({ summary: 'Deletes an endpoint and its deliveries, pending ones included' })
  async delete(@Param('endpoint_id') id: string, @ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<{ id: string; deleted: true }> {
    return this.webhooks.delete((await this.caller(authorization, from)).id, id);
  }

  @Post('endpoints/:endpoint_id/rotate-secret')
  @HttpCode(200)
  @AnswerCarriesSecret('secret')
  @ApiOperation({ summary: 'A new signing secret; the old one keeps signing beside it for 24 hours (both signatures sent)' })
  @ApiOkResponse({ type: WebhookEndpointWithSecretResponse })
  async rotate(@Param('endpoint_id') id: string, @ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<WebhookEndpointWithSecretResponse> {
    return this.webhooks.rotateSecret((await this.caller(authorization, from)).id, id);
  }

  @Get('endpoints/:endpoint_id/deliveries')
  @ApiOperation({ summary: 'Deliveries to an endpoint, newest first; filter by status' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [delivery] }' })
  async deliveries(
    @Param('endpoint_id') id: string,
    @Query() query: ListWebhookDeliveriesQueryDto,
    @ClientAddress() from: string,
    @Headers('authorization') authorization?: string,
  ) {
    const application = await this.caller(authorization, from);
    await this.webhooks.get(application.id, id);
    const page = { limit: query.limit ?? MAX_DELIVERIES_PAGE, offset: query.offset ?? 0 };
    const { count, deliveries } = await this.webhooks.deliveries({ applicationId: application.id, endpointId: id, status: query.status }, page);
    return pageOf(count, page.offset, deliveries);
  }

  @Get('deliveries/:delivery_id')
  @ApiOperation({ summary: 'One delivery with its body and attempts (status, latency, the start of the answer)' })
  @ApiOkResponse({ type: WebhookDeliveryDetailResponse })
  async delivery(@Param('delivery_id') id: string, @ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<WebhookDeliveryDetailResponse> {
    return this.webhooks.delivery(id, (await this.caller(authorization, from)).id);
  }

  @Post('deliveries/:delivery_id/resend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sends a delivered or failed delivery again, with the same event id and a fresh retry window' })
  @ApiOkResponse({ type: WebhookDeliveryDetailResponse })
  async resend(@Param('delivery_id') id: string, @ClientAddress() from: string, @Headers('authorization') authorization?: string): Promise<WebhookDeliveryDetailResponse> {
    const application = await this.caller(authorization, from);
    return this.webhooks.resend(id, { kind: 'application', applicationId: application.id, sandbox: application.sandbox });
  }

  /** `from`: the client's address, whose wrong secrets are counted (ClientSecretCheck). */
  private caller(authorization: string | undefined, from: string): Promise<Application> {
    const credentials = clientCredentialsOf(authorization, undefined, { allowBody: false });
    return this.applications.authenticate(credentials.clientId, credentials.clientSecret, from);
  }
}
