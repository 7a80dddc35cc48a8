import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsArray, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PAY_STATEMENT_ITEM_CATEGORIES } from '../../../domain/employer/pay-statement-items';
import { IsCalendarDate } from '../../employer/dto/calendar-date.validator';
import { EntityScopedQueryDto, queryList } from '../../employer/dto/entity-scoped-query.dto';

const categoryMessage = (name: string) => `each value in ${name} must be one of ${PAY_STATEMENT_ITEM_CATEGORIES.join(', ')}`;

export class PayStatementItemQueryDto extends EntityScopedQueryDto {
  @ApiPropertyOptional({ enum: PAY_STATEMENT_ITEM_CATEGORIES, isArray: true, name: 'categories[]' })
  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @IsIn(PAY_STATEMENT_ITEM_CATEGORIES, { each: true, message: categoryMessage('categories[]') })
  'categories[]'?: string[];

  @IsOptional()
  @Transform(queryList)
  @IsArray()
  @IsIn(PAY_STATEMENT_ITEM_CATEGORIES, { each: true, message: categoryMessage('categories') })
  categories?: string[];

  @ApiPropertyOptional({ format: 'date', description: 'Only items seen on a pay date on or after this one' })
  @IsOptional()
  @IsCalendarDate()
  start_date?: string;

  @ApiPropertyOptional({ format: 'date', description: 'Only items seen on a pay date on or before this one' })
  @IsOptional()
  @IsCalendarDate()
  end_date?: string;

  @ApiPropertyOptional({ description: 'Only items of this name (exact)' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  name?: string;

  @ApiPropertyOptional({ description: 'Only items of this type (attributes.type, exact)' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  type?: string;
}
