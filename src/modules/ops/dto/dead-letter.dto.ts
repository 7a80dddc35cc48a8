import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { ErrorBody } from '../../../infrastructure/http/error-response';
import { MessageHeaders } from '../../../infrastructure/messaging/message';
import { PageQueryDto } from '../../../infrastructure/http/page-query.dto';
import { IndividualNameMap } from '../individual-names';
import { IndividualNamesProperty } from './include-names.dto';

export const DEAD_LETTER_STATUSES = ['open', 'replayed', 'discarded'] as const;
export type DeadLetterStatus = (typeof DEAD_LETTER_STATUSES)[number];

export const MAX_DEAD_LETTERS_PAGE = 100;
export const MAX_REPLAY_IDS = 100;
const MAX_NOTE = 2_000;

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class ListDeadLettersQueryDto extends PageQueryDto(MAX_DEAD_LETTERS_PAGE) {
  @ApiPropertyOptional({ enum: DEAD_LETTER_STATUSES })
  @IsOptional()
  @IsIn(DEAD_LETTER_STATUSES, { message: `status must be one of: ${DEAD_LETTER_STATUSES.join(', ')}` })
  status?: DeadLetterStatus;

  @ApiPropertyOptional({ example: 'hris.events', description: 'The topic the message came from' })
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'topic must not be empty' })
  @MaxLength(200)
  topic?: string;

  @ApiPropertyOptional({ description: 'The consumer that refused it' })
  @IsOptional()
  @IsString()
  @IsNotEmpty({ message: 'consumer must not be empty' })
  @MaxLength(200)
  consumer?: string;
}

export class ReplayDeadLettersDto {
  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_REPLAY_IDS })
  @IsArray({ message: 'ids must be an array of dead letter ids' })
  @ArrayMinSize(1, { message: 'ids must hold at least one dead letter id' })
  @ArrayMaxSize(MAX_REPLAY_IDS, { message: `ids must hold at most ${MAX_REPLAY_IDS} dead letter ids` })
  @ArrayUnique({ message: 'ids must not repeat an id' })
  @IsUUID('all', { each: true, message: 'each of ids must be a UUID' })
  ids: string[];

  @ApiPropertyOptional({ maxLength: MAX_NOTE, description: 'Why it is replayed (e.g. what was fixed); kept on the dead letter' })
  @IsOptional()
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @MaxLength(MAX_NOTE)
  note?: string;
}

export class DiscardDeadLetterDto {
  @ApiProperty({ maxLength: MAX_NOTE, description: 'Why the message is dropped for good' })
  @Transform(trimmed)
  @IsString({ message: 'note must be a string' })
  @IsNotEmpty({ message: 'note is required to discard a dead letter' })
  @MaxLength(MAX_NOTE)
  note: string;
}

export interface DeadLetter {
  id: string;
  consumer: string;
  topic: string;
  partition: number | null;
  offset: string | null;
  messageKey: string | null;
  messageId: string | null;
  payload: string;
  headers: MessageHeaders;
  reason: string;
  status: DeadLetterStatus;
  createdAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  note: string | null;
}

export class DeadLetterSummaryResponse {
  @ApiProperty({ format: 'uuid' }) dead_letter_id: string;
  @ApiProperty() consumer: string;
  @ApiProperty() topic: string;
  @ApiProperty({ nullable: true, type: Number }) partition: number | null;
  @ApiProperty({ nullable: true, type: String }) offset: string | null;
  @ApiProperty({ nullable: true, type: String }) message_key: string | null;
  @ApiProperty({ nullable: true, type: String }) message_id: string | null;
  @ApiProperty({ description: 'Why the consumer refused it' }) reason: string;
  @ApiProperty({ enum: DEAD_LETTER_STATUSES }) status: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) resolved_at: string | null;
  @ApiProperty({ nullable: true, type: String }) resolved_by: string | null;
  @ApiProperty({ nullable: true, type: String }) note: string | null;
}

export class DeadLetterDetailResponse extends DeadLetterSummaryResponse {
  @ApiProperty({ description: 'The message body exactly as received (it may not be JSON)' }) payload: string;
  @ApiProperty({ nullable: true, description: 'The body parsed, when it is JSON' }) payload_json: unknown;
  @ApiProperty({ type: Object }) headers: MessageHeaders;
  @IndividualNamesProperty() individual_names?: IndividualNameMap;
}

/** One id of a replay: `code` 200 with the dead letter, or the error object of why not. */
export class ReplayResultResponse {
  @ApiProperty({ format: 'uuid' }) dead_letter_id: string;
  @ApiProperty({ description: '200 replayed; 404, 409 (not open), 422 (still refused, or no consumer here), 503 (try again later)' })
  code: number;
  @ApiProperty({ type: Object, description: 'The dead letter (200) or an error object {code, name, service_code, message}' })
  body: DeadLetterDetailResponse | ErrorBody;
}

export function deadLetterSummaryView(dl: DeadLetter): DeadLetterSummaryResponse {
  return {
    dead_letter_id: dl.id,
    consumer: dl.consumer,
    topic: dl.topic,
    partition: dl.partition,
    offset: dl.offset,
    message_key: dl.messageKey,
    message_id: dl.messageId,
    reason: dl.reason,
    status: dl.status,
    created_at: dl.createdAt.toISOString(),
    resolved_at: dl.resolvedAt?.toISOString() ?? null,
    resolved_by: dl.resolvedBy,
    note: dl.note,
  };
}

function parsedOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function deadLetterDetailView(dl: DeadLetter): DeadLetterDetailResponse {
  return { ...deadLetterSummaryView(dl), payload: dl.payload, payload_json: parsedOrNull(dl.payload), headers: dl.headers };
}
