import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength } from 'class-validator';

export class ExchangeCodeDto {
  @ApiProperty()
  @IsString()
  @Length(1, 200)
  client_id: string;

  @ApiProperty()
  @IsString()
  @Length(1, 500)
  client_secret: string;

  @ApiProperty()
  @IsString()
  @Length(1, 500)
  code: string;

  @ApiPropertyOptional({ description: 'The redirect_uri the flow ran with (absent for the embedded flow)' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  redirect_uri?: string;
}

export class TokenResponseDto {
  @ApiProperty() access_token: string;
  @ApiProperty({ enum: ['bearer'] }) token_type: 'bearer';
  @ApiProperty({ format: 'uuid' }) connection_id: string;
  @ApiProperty({ nullable: true }) customer_id: string | null;
  @ApiProperty({ format: 'uuid' }) account_id: string;
  @ApiProperty({ format: 'uuid' }) company_id: string;
  @ApiProperty({ type: [String] }) entity_ids: string[];
  @ApiProperty({ type: [String] }) products: string[];
  @ApiProperty() provider_id: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) client_type: 'sandbox' | 'production';
  @ApiProperty({ enum: ['provider', 'finch'] }) connection_type: string;
}
