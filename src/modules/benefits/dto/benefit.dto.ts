import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { Benefit } from '../../../domain/benefits/benefit';
import { COMPANY_MATCH_TYPES, MAX_BASIS_POINTS, MAX_MATCH_TIERS } from '../../../domain/benefits/company-match';
import { BENEFIT_FREQUENCIES, BENEFIT_TYPES, BenefitFrequency, BenefitType } from '../../../domain/providers/provider';

const typeMessage = `type must be one of: ${BENEFIT_TYPES.join(', ')}`;
const frequencyMessage = `frequency must be one of: ${BENEFIT_FREQUENCIES.join(', ')} or null`;

export class MatchTierDto {
  @ApiProperty({ minimum: 1, maximum: MAX_BASIS_POINTS, description: 'Basis points of the band matched' })
  @IsDefined()
  @IsInt({ message: 'match must be an integer (basis points)' })
  @Min(1)
  @Max(MAX_BASIS_POINTS)
  match: number;

  @ApiProperty({ minimum: 1, maximum: MAX_BASIS_POINTS, description: 'Basis points of pay where this band ends (cumulative)' })
  @IsDefined()
  @IsInt({ message: 'threshold must be an integer (basis points)' })
  @Min(1)
  @Max(MAX_BASIS_POINTS)
  threshold: number;
}

export class CompanyMatchDto {
  @ApiProperty({ enum: COMPANY_MATCH_TYPES, description: '`tiered` (the public name) is the same as `match`; either is returned as `match`' })
  @IsIn(COMPANY_MATCH_TYPES, { message: `type must be one of: ${COMPANY_MATCH_TYPES.join(', ')}` })
  type: (typeof COMPANY_MATCH_TYPES)[number];

  @ApiProperty({ type: [MatchTierDto], minItems: 1, maxItems: MAX_MATCH_TIERS })
  @IsArray()
  @ArrayMinSize(1, { message: `tiers must hold 1 to ${MAX_MATCH_TIERS} tiers` })
  @ArrayMaxSize(MAX_MATCH_TIERS, { message: `tiers must hold 1 to ${MAX_MATCH_TIERS} tiers` })
  @IsObject({ each: true, message: 'each tier must be an object' })
  @ValidateNested({ each: true })
  @Type(() => MatchTierDto)
  tiers: MatchTierDto[];
}

/** A company match as reads return it: always under the contract's name, `match`. */
export class CompanyMatchResponse {
  @ApiProperty({ enum: ['match'] }) type: 'match';
  @ApiProperty({ type: [MatchTierDto] }) tiers: MatchTierDto[];
}

class BenefitFieldsDto {
  @ApiProperty({ enum: BENEFIT_TYPES })
  @IsDefined({ message: 'type is required' })
  @IsIn(BENEFIT_TYPES, { message: typeMessage })
  type: BenefitType;

  @ApiProperty({ minLength: 1, maxLength: 255, description: 'As on pay statements; under 30 characters recommended' })
  @IsDefined({ message: 'description is required' })
  @IsString({ message: 'description must be a string' })
  @Length(1, 255, { message: 'description must be 1 to 255 characters' })
  description: string;
}

export class CreateBenefitDto extends BenefitFieldsDto {
  @ApiPropertyOptional({ enum: BENEFIT_FREQUENCIES, nullable: true })
  @IsOptional()
  @IsIn(BENEFIT_FREQUENCIES, { message: frequencyMessage })
  frequency?: BenefitFrequency | null;

  @ApiPropertyOptional({ type: CompanyMatchDto, nullable: true })
  @IsOptional()
  @IsObject({ message: 'company_contribution must be an object or null' })
  @ValidateNested()
  @Type(() => CompanyMatchDto)
  company_contribution?: CompanyMatchDto | null;
}

/** Register: type, frequency and description all required (DECISIONS.md). */
export class RegisterBenefitDto extends BenefitFieldsDto {
  @ApiProperty({ enum: BENEFIT_FREQUENCIES })
  @IsDefined({ message: 'frequency is required' })
  @IsIn(BENEFIT_FREQUENCIES, { message: `frequency must be one of: ${BENEFIT_FREQUENCIES.join(', ')}` })
  frequency: BenefitFrequency;
}

export class UpdateBenefitDto {
  @ApiProperty({ minLength: 1, maxLength: 255 })
  @IsDefined({ message: 'description is required' })
  @IsString({ message: 'description must be a string' })
  @Length(1, 255, { message: 'description must be 1 to 255 characters' })
  description: string;
}

export class BenefitJobResponse {
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ format: 'uuid' }) job_id: string;
}

export class BenefitResponse {
  @ApiProperty({ format: 'uuid' }) benefit_id: string;
  @ApiProperty({ enum: BENEFIT_TYPES }) type: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: BENEFIT_FREQUENCIES, nullable: true, type: String }) frequency: string | null;
  @ApiProperty({ type: CompanyMatchResponse, nullable: true }) company_contribution: { type: 'match'; tiers: { match: number; threshold: number }[] } | null;
}

export const benefitView = (benefit: Pick<Benefit, 'id' | 'type' | 'description' | 'frequency' | 'companyContribution'>): BenefitResponse => ({
  benefit_id: benefit.id,
  type: benefit.type,
  description: benefit.description,
  frequency: benefit.frequency,
  company_contribution: benefit.companyContribution,
});
