import { ApiProperty } from '@nestjs/swagger';
import {
  BENEFIT_FREQUENCIES,
  BENEFIT_TYPES,
  BenefitFrequency,
  BenefitsSupport,
  BenefitType,
  CompanyContributionType,
  EmployeeDeductionType,
  HsaContributionLimit,
  SupportedOperations,
} from '../../../domain/providers/provider';

/** `tiered` is the public document's name for the match `company_contribution` a benefit is created with. */
type PublicCompanyContributionType = Exclude<CompanyContributionType, 'match'> | 'tiered';

/**
 * One element of `GET /employer/benefits/meta`: the public document's BenefitFeature (the
 * provider's features for one benefit type), plus the type it is for and the operations the
 * provider supports on it.
 */
export class BenefitMetaEntry {
  @ApiProperty({ enum: BENEFIT_TYPES }) type: BenefitType;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: BENEFIT_FREQUENCIES, isArray: true }) frequencies: BenefitFrequency[];
  @ApiProperty({ enum: ['fixed', 'percent'], isArray: true, nullable: true }) employee_deduction: EmployeeDeductionType[] | null;

  @ApiProperty({
    enum: ['fixed', 'percent', 'tiered'],
    isArray: true,
    nullable: true,
    description: '`tiered`: a match (`company_contribution` of `type` `match` or `tiered`) at creation; `fixed`/`percent`: per enrollment',
  })
  company_contribution: PublicCompanyContributionType[] | null;

  @ApiProperty({ type: Boolean, nullable: true }) annual_maximum: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) catch_up: boolean | null;
  @ApiProperty({ enum: ['individual', 'family'], isArray: true, nullable: true }) hsa_contribution_limit: HsaContributionLimit[] | null;

  @ApiProperty({ type: Object, description: '{company_benefits, individual_benefits}, each {create, read, update, delete}: supported or not_supported_by_provider' })
  supported_operations: SupportedOperations;
}

/** The supported benefit types, in the order of the type enum; unsupported ones are left out. */
export function benefitsMetaView(support: BenefitsSupport): BenefitMetaEntry[] {
  return BENEFIT_TYPES.flatMap((type) => {
    const entry = support[type];
    if (!entry) return [];
    const features = entry.supported_features;
    return [
      {
        type,
        description: features.description,
        frequencies: features.frequencies,
        employee_deduction: features.employee_deduction,
        company_contribution: features.company_contribution?.map((c) => (c === 'match' ? 'tiered' : c)) ?? null,
        annual_maximum: features.annual_maximum,
        catch_up: features.catch_up,
        hsa_contribution_limit: features.hsa_contribution_limit,
        supported_operations: entry.supported_operations,
      },
    ];
  });
}
