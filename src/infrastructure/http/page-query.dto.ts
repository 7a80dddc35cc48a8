import { Type as ClassType } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export interface PageQuery {
  limit?: number;
  offset?: number;
}

/** Query `limit` (1–max, default max) and `offset` (≥ 0) of a listing; extend it per route. */
export function PageQueryDto(maxLimit: number): ClassType<PageQuery> {
  class PageQueryOf implements PageQuery {
    @ApiPropertyOptional({ minimum: 1, maximum: maxLimit, default: maxLimit })
    @IsOptional()
    @Type(() => Number)
    @IsInt({ message: 'limit must be a whole number' })
    @Min(1)
    @Max(maxLimit)
    limit?: number;

    @ApiPropertyOptional({ minimum: 0, default: 0 })
    @IsOptional()
    @Type(() => Number)
    @IsInt({ message: 'offset must be a whole number' })
    @Min(0)
    offset?: number;
  }
  return PageQueryOf;
}
