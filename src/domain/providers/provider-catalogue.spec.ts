import { DomainError } from '../shared/domain-error';
import { BENEFIT_TYPES, benefitSupportOf, isAssisted, ProviderDescriptor, supportsBenefitType } from './provider';
import { InvalidProviderCatalogueError, ProviderCatalogue, validateProviderCatalogue } from './provider-catalogue';
import { PROVIDER_CATALOGUE } from './provider-catalogue.data';

const catalogue = new ProviderCatalogue();
const automated = (p: ProviderDescriptor) => !p.manual && p.authentication_methods.some((m) => m.type !== 'assisted');
const copy = (): ProviderDescriptor[] => structuredClone(PROVIDER_CATALOGUE) as ProviderDescriptor[];

describe('ProviderCatalogue', () => {
  it('is built from valid data', () => {
    expect(validateProviderCatalogue(PROVIDER_CATALOGUE)).toEqual([]);
    expect(catalogue.list().map((p) => p.id)).toEqual(PROVIDER_CATALOGUE.map((p) => p.id));
  });

  it('lists at least 8 providers with unique ids, the sandbox family among them', () => {
    const ids = catalogue.list().map((p) => p.id);
    expect(ids.length).toBeGreaterThanOrEqual(8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['sandbox_automated', 'sandbox_assisted', 'gusto', 'adp_workforce_now']));
  });

  it('has Automated and Assisted providers', () => {
    expect(catalogue.list().filter(automated).length).toBeGreaterThan(0);
    expect(catalogue.list().filter((p) => p.manual).length).toBeGreaterThan(0);
    expect(catalogue.get('sandbox_assisted')).toMatchObject({ manual: true, authentication_methods: [{ type: 'assisted' }] });
    expect(catalogue.get('sandbox_automated').manual).toBe(false);
  });

  it('describes every benefit type for every method, null when unsupported', () => {
    for (const provider of catalogue.list()) {
      for (const method of provider.authentication_methods) {
        expect(Object.keys(method.benefits_support).sort()).toEqual([...BENEFIT_TYPES].sort());
      }
    }
  });

  it('lets the sandbox automated provider do everything', () => {
    const sandbox = catalogue.get('sandbox_automated');
    expect(sandbox.products).toEqual(['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits']);
    for (const type of BENEFIT_TYPES) expect(supportsBenefitType(sandbox, type)).toBe(true);
    expect(benefitSupportOf(sandbox, '401k')).toEqual({
      supported_features: expect.objectContaining({
        annual_maximum: true,
        catch_up: true,
        company_contribution: ['match', 'fixed', 'percent'],
        employee_deduction: ['fixed', 'percent'],
        hsa_contribution_limit: null,
      }),
      supported_operations: {
        company_benefits: { create: 'supported', read: 'supported', update: 'supported', delete: 'supported' },
        individual_benefits: { create: 'supported', read: 'supported', update: 'supported', delete: 'supported' },
      },
    });
    expect(benefitSupportOf(sandbox, 'hsa_pre')?.supported_features.hsa_contribution_limit).toEqual(['individual', 'family']);
  });

  it('says when a provider lacks HSA, match, percent deductions or catch-up', () => {
    const namely = catalogue.get('namely');
    expect(supportsBenefitType(namely, 'hsa_pre')).toBe(false);
    expect(supportsBenefitType(namely, 'hsa_post')).toBe(false);
    expect(benefitSupportOf(namely, 'hsa_pre')).toBeNull();
    expect(supportsBenefitType(namely, '401k')).toBe(true);

    expect(benefitSupportOf(catalogue.get('quickbooks_payroll'), '401k')?.supported_features.company_contribution).not.toContain('match');
    expect(benefitSupportOf(catalogue.get('justworks'), '401k')?.supported_features.employee_deduction).toEqual(['fixed']);
    expect(benefitSupportOf(catalogue.get('paylocity'), '401k')?.supported_features.catch_up).toBe(false);
    expect(benefitSupportOf(catalogue.get('paychex_flex'), 'hsa_pre')?.supported_features.hsa_contribution_limit).toEqual(['individual']);
  });

  it('gives a provider without the benefits product no benefit type', () => {
    const bamboo = catalogue.get('bamboo_hr');
    expect(bamboo.products).not.toContain('benefits');
    expect(BENEFIT_TYPES.filter((type) => supportsBenefitType(bamboo, type))).toEqual([]);
  });

  it('reads support through a given authentication method', () => {
    const adp = catalogue.get('adp_workforce_now');
    expect(supportsBenefitType(adp, '401k', 'assisted')).toBe(true);
    expect(supportsBenefitType(adp, '401k', 'oauth')).toBe(false); // ADP WFN offers no OAuth method
  });

  describe('isAssisted', () => {
    it('is true for a manual provider whatever the method', () => {
      expect(isAssisted(catalogue.get('sandbox_assisted'), 'assisted')).toBe(true);
      expect(isAssisted(catalogue.get('sandbox_assisted'), 'credential')).toBe(true);
    });

    it('is true for the assisted method of an automated provider, false for its other methods', () => {
      const adp = catalogue.get('adp_workforce_now');
      expect(adp.manual).toBe(false);
      expect(isAssisted(adp, 'assisted')).toBe(true);
      expect(isAssisted(adp, 'credential')).toBe(false);
      expect(isAssisted(catalogue.get('gusto'), 'oauth')).toBe(false);
    });
  });

  describe('search', () => {
    it('matches id and display name case-insensitively', () => {
      expect(catalogue.search('GUSTO').map((p) => p.id)).toEqual(['gusto']);
      expect(catalogue.search('workforce').map((p) => p.id)).toEqual(['adp_workforce_now']);
      expect(catalogue.search('adp_run').map((p) => p.id)).toEqual(['adp_run']);
      expect(catalogue.search('adp').map((p) => p.id)).toEqual(['adp_workforce_now', 'adp_run']);
      expect(catalogue.search('sandbox payroll').map((p) => p.id)).toEqual(['sandbox_automated', 'sandbox_assisted']);
    });

    it('returns everything for blank text and nothing for no match', () => {
      expect(catalogue.search('  ')).toHaveLength(catalogue.list().length);
      expect(catalogue.search('no such payroll')).toEqual([]);
    });
  });

  it('finds by id, and get() of an unknown id throws not_found_error / provider_not_found', () => {
    expect(catalogue.find('gusto')?.display_name).toBe('Gusto');
    expect(catalogue.find('nope')).toBeUndefined();
    let thrown: unknown;
    try {
      catalogue.get('nope');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(thrown).toMatchObject({ family: 'not_found_error', serviceCode: 'provider_not_found' });
  });

  it('cannot be changed through what it returns', () => {
    const gusto = catalogue.get('gusto');
    // Frozen objects throw in strict mode (the TypeError comes from another realm under jest).
    expect(() => gusto.products.push('benefits')).toThrow(/not extensible/);
    expect(() => {
      gusto.benefits_support['401k'] = null;
    }).toThrow(/read only/);
    expect(supportsBenefitType(catalogue.get('gusto'), '401k')).toBe(true);
  });

  describe('validation of broken data', () => {
    it('rejects a duplicate id', () => {
      const entries = copy();
      entries.push({ ...structuredClone(entries[0]) });
      expect(() => new ProviderCatalogue(entries)).toThrow(InvalidProviderCatalogueError);
      expect(() => new ProviderCatalogue(entries)).toThrow(`provider ${entries[0].id}: duplicate id`);
    });

    it('rejects an unknown benefit type', () => {
      const entries = copy();
      const gusto = entries.find((p) => p.id === 'gusto')!;
      (gusto.benefits_support as Record<string, unknown>)['401k_gold'] = gusto.benefits_support['401k'];
      expect(() => new ProviderCatalogue(entries)).toThrow(/provider gusto: benefits_support: unknown benefit type 401k_gold/);
    });

    it('rejects an unknown product, authentication method, or features that do not fit the type', () => {
      const entries = copy();
      const gusto = entries.find((p) => p.id === 'gusto')!;
      (gusto.products as string[]).push('time_off');
      (gusto.authentication_methods[0] as { type: string }).type = 'telepathy';
      gusto.authentication_methods[0].benefits_support.s125_dental!.supported_features.catch_up = true;
      const problems = validateProviderCatalogue(entries);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringContaining('provider gusto: products: unknown product time_off'),
          expect.stringContaining('authentication_methods[0].type telepathy is not one of'),
          expect.stringContaining('s125_dental.catch_up must be null'),
        ]),
      );
    });

    it('rejects a manual provider with a non-assisted method and benefit support without the product', () => {
      const entries = copy();
      const trinet = entries.find((p) => p.id === 'trinet')!;
      trinet.authentication_methods[0].type = 'credential';
      const bamboo = entries.find((p) => p.id === 'bamboo_hr')!;
      bamboo.benefits_support['401k'] = structuredClone(entries.find((p) => p.id === 'gusto')!.benefits_support['401k']);
      const problems = validateProviderCatalogue(entries);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringContaining('provider trinet: authentication_methods[0].type is credential, but a manual provider'),
          expect.stringContaining('provider bamboo_hr: benefits_support: supports 401k without the benefits product'),
        ]),
      );
    });

    it('rejects an empty catalogue', () => {
      expect(() => new ProviderCatalogue([])).toThrow('the catalogue lists no provider');
    });
  });
});

describe('isAssistedConnection', () => {
  const catalogue = new ProviderCatalogue();

  it('follows the catalogue entry and the authentication type', () => {
    expect(catalogue.isAssistedConnection({ providerId: 'sandbox_assisted', authenticationType: 'assisted', manual: false })).toBe(true);
    expect(catalogue.isAssistedConnection({ providerId: 'sandbox_automated', authenticationType: 'credential', manual: true })).toBe(false);
  });

  it("falls back to the connection's own flag for a provider no longer listed", () => {
    expect(catalogue.isAssistedConnection({ providerId: 'gone', authenticationType: 'credential', manual: true })).toBe(true);
    expect(catalogue.isAssistedConnection({ providerId: 'gone', authenticationType: 'credential', manual: false })).toBe(false);
  });
});
