import { ProviderCatalogue } from '../providers/provider-catalogue';
import { benefitSupportOf, BenefitType } from '../providers/provider';
import { benefitGroupOf, parseConfiguration, unsupportedFeatures } from './enrollment-configuration';

const catalogue = new ProviderCatalogue();
const supportOf = (provider: string, type: BenefitType) => benefitSupportOf(catalogue.get(provider), type);

describe('benefitGroupOf', () => {
  it.each<[BenefitType, string]>([
    ['401k', 'retirement'],
    ['457_roth', 'retirement'],
    ['simple_ira', 'retirement'],
    ['hsa_pre', 'hsa'],
    ['hsa_post', 'hsa'],
    ['s125_medical', 'basic'],
    ['fsa_dependent_care', 'basic'],
    ['custom_post_tax', 'basic'],
    ['commuter', 'basic'],
    ['401k_loan', 'basic'],
  ])('%s is %s', (type, group) => expect(benefitGroupOf(type)).toBe(group));
});

describe('parseConfiguration', () => {
  it('normalizes every field, absent ones to null or false', () => {
    expect(parseConfiguration({ employee_deduction: { type: 'percent', amount: 500 } }, 'retirement')).toEqual({
      ok: true,
      configuration: {
        employee_deduction: { type: 'percent', amount: 500 },
        company_contribution: null,
        annual_maximum: null,
        catch_up: false,
        hsa_contribution_limit: null,
      },
      effectiveDate: undefined,
    });
  });

  it('maps an HSA annual_contribution_limit to hsa_contribution_limit and hands back the raw date', () => {
    const result = parseConfiguration(
      {
        employee_deduction: { type: 'fixed', amount: 10_000 },
        company_contribution: { type: 'fixed', amount: 5_000 },
        catch_up: true,
        annual_maximum: 415_000,
        annual_contribution_limit: 'family',
        effective_date: '07/01/2026',
      },
      'hsa',
    );
    expect(result).toEqual({
      ok: true,
      configuration: {
        employee_deduction: { type: 'fixed', amount: 10_000 },
        company_contribution: { type: 'fixed', amount: 5_000 },
        annual_maximum: 415_000,
        catch_up: true,
        hsa_contribution_limit: 'family',
      },
      effectiveDate: '07/01/2026',
    });
  });

  it.each([
    ['catch_up', true],
    ['annual_maximum', 100],
    ['annual_contribution_limit', 'individual'],
  ])('refuses %s on a Section 125/FSA/custom benefit, naming the field', (field, value) => {
    const result = parseConfiguration({ [field]: value }, 'basic');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toEqual([expect.stringMatching(new RegExp(`^configuration\\.${field}: not accepted for a`))]);
  });

  it('refuses annual_contribution_limit on a retirement benefit and unknown fields anywhere', () => {
    const result = parseConfiguration({ annual_contribution_limit: 'family', bonus: 1 }, 'retirement', '[2].configuration');
    expect(result).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^\[2\]\.configuration\.annual_contribution_limit: not accepted/), '[2].configuration.bonus: unknown field'],
    });
  });

  it.each([
    [{ type: 'fixed', amount: -1 }, 'fixed amount'],
    [{ type: 'fixed', amount: 10.5 }, 'fixed amount'],
    [{ type: 'fixed', amount: '100' }, 'fixed amount'],
    [{ type: 'percent', amount: 10_001 }, 'percent amount'],
    [{ type: 'percent', amount: -5 }, 'percent amount'],
    [{ type: 'percent', amount: 2.5 }, 'percent amount'],
    [{ type: 'match', amount: 100 }, 'type: must be one of fixed, percent'],
    [{ amount: 100 }, 'type: must be one of fixed, percent'],
    ['500', 'must be an object'],
  ])('refuses the amount %j', (amount, problem) => {
    const result = parseConfiguration({ employee_deduction: amount }, 'basic');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.join()).toContain(problem);
  });

  it('accepts the bounds 0 and 10,000 basis points', () => {
    expect(parseConfiguration({ employee_deduction: { type: 'percent', amount: 0 } }, 'basic').ok).toBe(true);
    expect(parseConfiguration({ company_contribution: { type: 'percent', amount: 10_000 } }, 'basic').ok).toBe(true);
  });

  it('refuses wrong types of the other fields', () => {
    const result = parseConfiguration({ catch_up: 'yes', annual_maximum: -1, annual_contribution_limit: 'couple' }, 'hsa');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems).toEqual([
        'configuration.catch_up: must be a boolean',
        expect.stringMatching(/^configuration\.annual_maximum: must be a whole number of cents/),
        'configuration.annual_contribution_limit: must be one of individual, family, or null',
      ]);
    }
  });

  it('refuses a configuration that is not an object', () => {
    expect(parseConfiguration([], 'basic')).toEqual({ ok: false, problems: ['configuration: must be an object'] });
  });
});

describe('unsupportedFeatures', () => {
  const base = { employee_deduction: null, company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null };

  it('finds nothing missing on the sandbox for a full retirement configuration', () => {
    const configuration = { ...base, employee_deduction: { type: 'percent' as const, amount: 500 }, catch_up: true, annual_maximum: 100 };
    expect(unsupportedFeatures(configuration, supportOf('sandbox_automated', '401k'), '401k', 'Sandbox')).toEqual([]);
  });

  it('names the type a provider does not run (Namely: no HSA)', () => {
    expect(unsupportedFeatures(base, supportOf('namely', 'hsa_pre'), 'hsa_pre', 'Namely')).toEqual(['Namely does not support hsa_pre benefits']);
  });

  it('names catch_up where the provider has none (Paylocity)', () => {
    expect(unsupportedFeatures({ ...base, catch_up: true }, supportOf('paylocity', '401k'), '401k', 'Paylocity')).toEqual([
      'Paylocity does not support catch_up for 401k',
    ]);
    expect(unsupportedFeatures(base, supportOf('paylocity', '401k'), '401k', 'Paylocity')).toEqual([]);
  });

  it('names percent deductions and annual maximums where only flat amounts exist (Justworks)', () => {
    const configuration = { ...base, employee_deduction: { type: 'percent' as const, amount: 500 }, annual_maximum: 1000 };
    expect(unsupportedFeatures(configuration, supportOf('justworks', '401k'), '401k', 'Justworks')).toEqual([
      'Justworks does not support percent employee deductions for 401k',
      'Justworks does not support annual_maximum for 401k',
    ]);
  });

  it('names a family HSA limit where only individual ones exist (Paychex) and contributions on a loan', () => {
    expect(unsupportedFeatures({ ...base, hsa_contribution_limit: 'family' }, supportOf('paychex_flex', 'hsa_pre'), 'hsa_pre', 'Paychex')).toEqual([
      'Paychex does not support the family annual_contribution_limit for hsa_pre',
    ]);
    const loan = { ...base, company_contribution: { type: 'fixed' as const, amount: 100 } };
    expect(unsupportedFeatures(loan, supportOf('sandbox_automated', '401k_loan'), '401k_loan', 'Sandbox')).toEqual([
      'Sandbox does not support fixed company contributions for 401k_loan',
    ]);
  });
});
