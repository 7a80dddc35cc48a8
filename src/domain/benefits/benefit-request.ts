import { BenefitFeaturesAndOperations, BenefitFrequency, BenefitType } from '../providers/provider';
import { CompanyMatch } from './benefit';

/** A company-wide deduction a client asks for (create or register). */
export interface BenefitRequest {
  type: BenefitType;
  description: string;
  frequency: BenefitFrequency | null;
  companyContribution: CompanyMatch | null;
}

/** Company-level benefit operations, as the catalogue's `company_benefits` matrix names them. */
export type CompanyBenefitOperation = 'create' | 'read' | 'update';

/**
 * Why the provider cannot take this request, or undefined when it can. `support` is the
 * catalogue entry of the connection's provider and authentication method for the type (null:
 * the type is not supported at all). Answered as 422 `unsupported_paramters`.
 */
export function unsupportedBenefitRequest(
  support: BenefitFeaturesAndOperations | null,
  request: Pick<BenefitRequest, 'type' | 'frequency' | 'companyContribution'>,
  operation: CompanyBenefitOperation,
): string | undefined {
  if (support === null) return `The provider does not support benefit type ${request.type}`;
  if (support.supported_operations.company_benefits[operation] !== 'supported') {
    return `The provider does not support the ${operation} operation for benefit type ${request.type}`;
  }
  const features = support.supported_features;
  if (request.frequency !== null && !features.frequencies.includes(request.frequency)) {
    return `The provider does not support frequency ${request.frequency} for benefit type ${request.type} (supported: ${features.frequencies.join(', ')})`;
  }
  if (request.companyContribution !== null && !(features.company_contribution ?? []).includes('match')) {
    return `The provider does not support a company match for benefit type ${request.type}`;
  }
  return undefined;
}

/** The create-dedupe key (entity aside): type, frequency (absent and null alike) and description, exactly. */
export function sameDedupeKey(
  a: { type: string; frequency: string | null; description: string },
  b: { type: string; frequency: string | null; description: string },
): boolean {
  return a.type === b.type && (a.frequency ?? null) === (b.frequency ?? null) && a.description === b.description;
}
