import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../../../domain/webhooks/webhook-event-types';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';

export const MAX_DESCRIPTION = 500;
export const MAX_URL = 2_000;
export const MAX_CONCURRENCY = 64;
export const MAX_DELIVERIES_PAGE = 100;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const CONCURRENCY_MESSAGE = `max_concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}`;
const EVENT_TYPES_DESCRIPTION =
  'Types to receive; absent: every standard type (the opt-in hris.* types only when named). GET /webhooks/event-types lists them';

/** Given, even as null: checked (IsOptional would let null through as "absent"). */
const Given = () => ValidateIf((_object: unknown, value: unknown) => value !== undefined);

export class CreateWebhookEndpointDto {
  @ApiProperty({ example: 'https://platform.example.com/webhooks/benefits', maxLength: MAX_URL, description: 'https; http only to a loopback receiver of a sandbox application' })
  @IsString({ message: 'url must be a string' })
  @MaxLength(MAX_URL, { message: `url must be at most ${MAX_URL} characters` })
  url: string;

  @ApiPropertyOptional({ type: [String], enum: WEBHOOK_EVENT_TYPES, description: EVENT_TYPES_DESCRIPTION })
  @Given()
  @IsArray({ message: 'event_types must be an array of event type names' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: `event_types must hold at most ${WEBHOOK_EVENT_TYPES.length} types` })
  @IsString({ each: true, message: 'each of event_types must be a string' })
  event_types?: string[];

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  @Given()
  @IsString({ message: 'description must be a string' })
  @MaxLength(MAX_DESCRIPTION, { message: `description must be at most ${MAX_DESCRIPTION} characters` })
  description?: string;

  @ApiPropertyOptional({ default: true })
  @Given()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'Deliver one connection’s events one at a time, in order (a failing event holds back the later ones of its connection until it is delivered or fails for good)',
  })
  @Given()
  @IsBoolean({ message: 'ordered_by_connection must be true or false' })
  ordered_by_connection?: boolean;

  @ApiPropertyOptional({ default: 4, minimum: 1, maximum: MAX_CONCURRENCY, description: 'Deliveries to this endpoint in flight at once, over all instances' })
  @Given()
  @IsInt({ message: CONCURRENCY_MESSAGE })
  @Min(1, { message: CONCURRENCY_MESSAGE })
  @Max(MAX_CONCURRENCY, { message: CONCURRENCY_MESSAGE })
  max_concurrency?: number;
}

/** Absent fields stay as they are; enabling an endpoint the service disabled clears its notice. */
export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ maxLength: MAX_URL })
  @Given()
  @IsString({ message: 'url must be a string' })
  @MaxLength(MAX_URL, { message: `url must be at most ${MAX_URL} characters` })
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: WEBHOOK_EVENT_TYPES })
  @Given()
  @IsArray({ message: 'event_types must be an array of event type names' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: `event_types must hold at most ${WEBHOOK_EVENT_TYPES.length} types` })
  @IsString({ each: true, message: 'each of event_types must be a string' })
  event_types?: string[];

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION, nullable: true })
  @IsOptional()
  @IsString({ message: 'description must be a string or null' })
  @MaxLength(MAX_DESCRIPTION, { message: `description must be at most ${MAX_DESCRIPTION} characters` })
  description?: string | null;

  @ApiPropertyOptional()
  @Given()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;

  @ApiPropertyOptional()
  @Given()
  @IsBoolean({ message: 'ordered_by_connection must be true or false' })
  ordered_by_connection?: boolean;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CONCURRENCY })
  @Given()
  @IsInt({ message: CONCURRENCY_MESSAGE })
  @Min(1, { message: CONCURRENCY_MESSAGE })
  @Max(MAX_CONCURRENCY, { message: CONCURRENCY_MESSAGE })
  max_concurrency?: number;
}

export class ListWebhookDeliveriesQueryDto extends PageQueryDto(MAX_DELIVERIES_PAGE) {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of: ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class WebhookEndpointResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() url: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: [String] }) event_types: string[];
  @ApiProperty() enabled: boolean;
  @ApiProperty() ordered_by_connection: boolean;
  @ApiProperty() max_concurrency: number;
  @ApiProperty({ nullable: true, type: String, description: 'Since when every delivery has failed; null while healthy' }) failing_since: string | null;
  @ApiProperty({ nullable: true, type: String }) disabled_at: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Why the service disabled it (failing for days); enabling it again clears this' })
  disabled_reason: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Until when the secret replaced by the last rotation still signs too' })
  previous_secret_expires_at: string | null;
  @ApiProperty() created_at: string;
  @ApiProperty() updated_at: string;
}

export class WebhookEndpointWithSecretResponse extends WebhookEndpointResponse {
  @ApiProperty({
    description:
      'The signing secret (base64), shown only here: at creation and at each rotation. An Idempotency-Key replay of either ' +
      'answers without it (it is kept only encrypted); rotate to get a new one',
  })
  secret: string;
}

export class WebhookAttemptResponse {
  @ApiProperty() attempted_at: string;
  @ApiProperty({ nullable: true, type: Number, description: 'null when no HTTP answer came (timeout, refused, blocked address)' }) status_code: number | null;
  @ApiProperty() latency_ms: number;
  @ApiProperty({ description: 'The start of the answer’s body' }) response_excerpt: string;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
}

export class WebhookDeliveryResponse {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'uuid' }) endpoint_id: string;
  @ApiProperty({ format: 'uuid', description: 'The event id: webhook-id / finch-event-id, the same on every attempt' }) event_id: string;
  @ApiProperty() event_type: string;
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty() attempts: number;
  @ApiProperty({ nullable: true, type: String }) next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: Number }) last_status_code: number | null;
  @ApiProperty({ nullable: true, type: String }) last_error: string | null;
  @ApiProperty() created_at: string;
  @ApiProperty({ nullable: true, type: String }) completed_at: string | null;
}

export class WebhookDeliveryDetailResponse extends WebhookDeliveryResponse {
  @ApiProperty({ description: 'The body every attempt sends' }) body: string;
  @ApiProperty({ type: [WebhookAttemptResponse], description: 'Oldest first, the last 100' }) recent_attempts: WebhookAttemptResponse[];
}
