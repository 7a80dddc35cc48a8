import { benefitSupportOf } from '../providers/provider';
import { ProviderCatalogue } from '../providers/provider-catalogue';
import { sameDedupeKey, unsupportedBenefitRequest } from './benefit-request';

const catalogue = new ProviderCatalogue();
const supportOf = (providerId: string, type: Parameters<typeof benefitSupportOf>[1]) => {
  const provider = catalogue.get(providerId);
  return benefitSupportOf(provider, type, provider.authentication_methods[0].type);
};
const plain = { frequency: null, companyContribution: null };
const MATCH = { type: 'match' as const, tiers: [{ match: 10_000, threshold: 300 }] };

describe('unsupportedBenefitRequest', () => {
  it('accepts what the sandbox provider supports', () => {
    expect(unsupportedBenefitRequest(supportOf('sandbox_automated', '401k'), { type: '401k', frequency: 'every_paycheck', companyContribution: MATCH }, 'create')).toBeUndefined();
  });

  it('refuses a type the provider lacks', () => {
    expect(unsupportedBenefitRequest(supportOf('gusto', '457'), { type: '457', ...plain }, 'create')).toBe(
      'The provider does not support benefit type 457',
    );
  });

  it('refuses a match where the provider takes none', () => {
    expect(unsupportedBenefitRequest(supportOf('quickbooks_payroll', '401k'), { type: '401k', frequency: null, companyContribution: MATCH }, 'create')).toMatch(
      /company match/,
    );
    expect(unsupportedBenefitRequest(supportOf('quickbooks_payroll', '401k'), { type: '401k', ...plain }, 'create')).toBeUndefined();
  });

  it('refuses a frequency the provider does not run', () => {
    expect(unsupportedBenefitRequest(supportOf('justworks', '401k'), { type: '401k', frequency: 'monthly', companyContribution: null }, 'create')).toMatch(
      /frequency monthly/,
    );
  });

  it('refuses an operation the provider does not offer', () => {
    const support = supportOf('sandbox_automated', 'commuter')!;
    const noUpdate = {
      ...support,
      supported_operations: { ...support.supported_operations, company_benefits: { ...support.supported_operations.company_benefits, update: 'not_supported_by_provider' as const } },
    };
    expect(unsupportedBenefitRequest(noUpdate, { type: 'commuter', ...plain }, 'update')).toMatch(/update operation/);
  });
});

describe('sameDedupeKey', () => {
  const key = { type: '401k', frequency: null, description: 'Retirement' };
  it('matches on type, frequency and exact description', () => {
    expect(sameDedupeKey(key, { ...key })).toBe(true);
    expect(sameDedupeKey(key, { ...key, description: 'retirement' })).toBe(false);
    expect(sameDedupeKey(key, { ...key, frequency: 'monthly' })).toBe(false);
    expect(sameDedupeKey(key, { ...key, type: '403b' })).toBe(false);
  });
});
