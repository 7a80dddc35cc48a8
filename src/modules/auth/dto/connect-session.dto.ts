import { ProductList } from '../../providers/dto/product-list';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const MAX_MINUTES_TO_EXPIRE = 129_600;
const AUTH_METHODS = ['credential', 'api_token', 'oauth', 'assisted'] as const;

class IntegrationDto {
  @ApiProperty({ description: 'Provider id from GET /providers; skips provider selection' })
  @IsString()
  @Length(1, 100)
  provider: string;

  @ApiPropertyOptional({ enum: AUTH_METHODS, nullable: true })
  @IsOptional()
  @IsIn(AUTH_METHODS)
  auth_method?: string | null;
}

/** Fields both session kinds share. */
class SessionOptionsDto {
  @ApiPropertyOptional({ description: 'Application credential (or HTTP Basic)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  client_id?: string;

  @ApiPropertyOptional({ description: 'Application credential (or HTTP Basic)' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  client_secret?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_MINUTES_TO_EXPIRE, default: MAX_MINUTES_TO_EXPIRE })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_MINUTES_TO_EXPIRE)
  minutes_to_expire?: number;

  @ApiPropertyOptional({ description: 'Must be one of the application’s registered redirect URIs' })
  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/\S+$/, { message: 'redirect_uri must be an http(s) URL' })
  @MaxLength(2000)
  redirect_uri?: string;

  /** Not accepted by this operation; silently ignored (the spec says so). */
  @ApiPropertyOptional({ description: 'Ignored' })
  @Allow()
  state?: unknown;
}

export class CreateConnectSessionDto extends SessionOptionsDto {
  @ApiProperty({ minLength: 1, maxLength: 255, description: 'Stable, unique per employer' })
  @IsString()
  @Length(1, 255)
  customer_id: string;

  @ApiProperty({ minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  customer_name: string;

  @ApiPropertyOptional({ format: 'email', nullable: true })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  customer_email?: string | null;

  @ProductList()
  products: string[];

  @ApiPropertyOptional({ type: IntegrationDto, nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => IntegrationDto)
  integration?: IntegrationDto | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  manual?: boolean;

  @ApiPropertyOptional({ enum: ['finch', 'provider'], nullable: true })
  @ValidateIf((_, v) => v !== null && v !== undefined)
  @IsIn(['finch', 'provider'])
  sandbox?: 'finch' | 'provider' | null;
}

export class ReauthenticateSessionDto extends SessionOptionsDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4')
  connection_id: string;

  @ProductList({ optional: true, description: 'Replaces the connection’s products' })
  products?: string[];
}

export class ConnectSessionResponseDto {
  @ApiProperty({ format: 'uuid' })
  session_id: string;

  @ApiProperty()
  connect_url: string;
}
