import { Type as ClassType } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/**
 * The largest `offset` any listing takes: PostgreSQL's OFFSET is a bigint, and a number past it
 * (`1e20`) must be a 400 naming the field, not a failed query.
 */
export const MAX_OFFSET = 2_147_483_647;

export interface PageQuery {
  limit?: number;
  offset?: number;
}

/**
 * Query `limit` (1–max, default max) and `offset` (0–MAX_OFFSET) of a listing; extend it per
 * route. `Base` adds the fields of another query class (e.g. a read's `entity_ids`).
 */
export function PageQueryDto(maxLimit: number): ClassType<PageQuery>;
export function PageQueryDto<B extends object>(maxLimit: number, Base: ClassType<B>): ClassType<PageQuery & B>;
export function PageQueryDto(maxLimit: number, Base: ClassType<object> = class {}): ClassType<PageQuery> {
  class PageQueryOf extends Base implements PageQuery {
    @ApiPropertyOptional({ minimum: 1, maximum: maxLimit, default: maxLimit })
    @IsOptional()
    @Type(() => Number)
    @IsInt({ message: 'limit must be a whole number' })
    @Min(1)
    @Max(maxLimit)
    limit?: number;

    @ApiPropertyOptional({ minimum: 0, maximum: MAX_OFFSET, default: 0 })
    @IsOptional()
    @Type(() => Number)
    @IsInt({ message: 'offset must be a whole number' })
    @Min(0)
    @Max(MAX_OFFSET, { message: `offset must be at most ${MAX_OFFSET}` })
    offset?: number;
  }
  return PageQueryOf;
}
