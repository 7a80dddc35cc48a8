import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';

export const FORWARD_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ForwardMethod = (typeof FORWARD_METHODS)[number];

/** RFC 9110 field-name characters (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 8_000;

/** An object of header name → string value, as a raw HTTP request would carry. */
function IsHeaderRecord(): PropertyDecorator {
  return ValidateBy({
    name: 'isHeaderRecord',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= MAX_HEADERS &&
        Object.entries(value).every(
          ([name, v]) => HEADER_NAME.test(name) && typeof v === 'string' && v.length <= MAX_HEADER_VALUE && !/[\r\n]/.test(v),
        ),
      defaultMessage: () =>
        `headers must be an object of at most ${MAX_HEADERS} header names to string values ` +
        `(no line breaks, at most ${MAX_HEADER_VALUE} characters each)`,
    },
  });
}

/** `POST /forward` body: a raw request for the connection's provider. */
export class ForwardRequestDto {
  @ApiProperty({ enum: FORWARD_METHODS, description: 'HTTP method, case-insensitive' })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(FORWARD_METHODS, { message: `method is required and must be one of ${FORWARD_METHODS.join(', ')} (case-insensitive)` })
  method: ForwardMethod;

  @ApiProperty({ example: '/employees', description: 'Path of the provider’s own API, starting with /; may carry a query string' })
  @IsString({ message: 'route is required and must be a string starting with /' })
  @MaxLength(2000)
  @Matches(/^\/(?!\/)[^\s]*$/, { message: 'route must be a path starting with a single / and without spaces' })
  route: string;

  @ApiPropertyOptional({ description: 'Request body passed to the provider as is' })
  @Allow()
  data?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: 'null reads as absent' })
  @IsOptional()
  @IsHeaderRecord()
  headers?: Record<string, string> | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'Query parameters; null reads as absent' })
  @IsOptional()
  @IsObject({ message: 'params must be an object of query parameters' })
  params?: Record<string, unknown> | null;
}
