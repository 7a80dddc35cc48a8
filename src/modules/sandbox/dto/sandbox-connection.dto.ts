import { ProductList } from '../../providers/dto/product-list';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Length, Max, Min } from 'class-validator';
import { CONNECTION_STATUSES } from '../../../domain/connections/connection';
import { AUTHENTICATION_TYPES } from '../../../domain/providers/provider';

export const MAX_EMPLOYEE_SIZE = 10_000;

export class CreateSandboxConnectionDto {
  @ApiProperty({ description: 'Provider id from GET /providers' })
  @IsString()
  @Length(1, 100)
  provider_id: string;

  @ApiPropertyOptional({ enum: AUTHENTICATION_TYPES })
  @IsOptional()
  @IsIn(AUTHENTICATION_TYPES)
  authentication_type?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_EMPLOYEE_SIZE, default: 20 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EMPLOYEE_SIZE)
  employee_size?: number;

  @ProductList({ optional: true, description: 'Default: every product the provider supports' })
  products?: string[] | null;
}

export class CreateSandboxAccountDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4')
  company_id: string;

  @ApiProperty()
  @IsString()
  @Length(1, 100)
  provider_id: string;

  @ApiPropertyOptional({ enum: AUTHENTICATION_TYPES })
  @IsOptional()
  @IsIn(AUTHENTICATION_TYPES)
  authentication_type?: string;

  @ProductList({ optional: true, description: 'Default: the products of the company’s existing connection' })
  products?: string[] | null;
}

export class UpdateSandboxAccountDto {
  @ApiProperty({ enum: CONNECTION_STATUSES, description: 'Forces the connection into this status, e.g. reauth' })
  @IsIn(CONNECTION_STATUSES)
  connection_status: (typeof CONNECTION_STATUSES)[number];
}
