import { DomainError } from '../shared/domain-error';
import {
  AUTHENTICATION_TYPES,
  BENEFIT_FREQUENCIES,
  BENEFIT_TYPES,
  BenefitsSupport,
  HSA_BENEFIT_TYPES,
  isAssisted,
  isBenefitType,
  isProduct,
  Product,
  PRODUCTS,
  ProviderDescriptor,
  ProviderId,
  RETIREMENT_BENEFIT_TYPES,
} from './provider';
import { PROVIDER_CATALOGUE } from './provider-catalogue.data';

/** The catalogue data breaks a rule; the message lists every problem found. */
export class InvalidProviderCatalogueError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid provider catalogue:\n  - ${problems.join('\n  - ')}`);
    this.name = 'InvalidProviderCatalogueError';
  }
}

/** Every provider the service knows, validated and frozen once at construction. */
export class ProviderCatalogue {
  private readonly providers: readonly ProviderDescriptor[];
  private readonly byId: ReadonlyMap<ProviderId, ProviderDescriptor>;

  constructor(entries: readonly ProviderDescriptor[] = PROVIDER_CATALOGUE) {
    const problems = validateProviderCatalogue(entries);
    if (problems.length > 0) throw new InvalidProviderCatalogueError(problems);
    // Copied and frozen: callers share one instance and must not be able to change capabilities.
    this.providers = Object.freeze(entries.map((entry) => deepFreeze(structuredClone(entry))));
    this.byId = new Map(this.providers.map((p) => [p.id, p]));
  }

  list(): readonly ProviderDescriptor[] {
    return this.providers;
  }

  find(id: ProviderId): ProviderDescriptor | undefined {
    return this.byId.get(id);
  }

  get(id: ProviderId): ProviderDescriptor {
    const provider = this.byId.get(id);
    if (!provider) {
      throw new DomainError('not_found_error', `No provider with id ${id}; GET /providers lists them`, {
        serviceCode: 'provider_not_found',
      });
    }
    return provider;
  }

  /**
   * Whether a connection's benefit work is done by hand: by its provider's catalogue entry and
   * authentication type; the connection's own `manual` flag for a provider no longer listed.
   */
  isAssistedConnection(connection: { providerId: ProviderId; authenticationType: string; manual: boolean }): boolean {
    const provider = this.byId.get(connection.providerId);
    return provider ? isAssisted(provider, connection.authenticationType) : connection.manual;
  }

  /** Case-insensitive substring match on id and display name; blank text matches all. */
  search(text: string): readonly ProviderDescriptor[] {
    const query = text.trim().toLowerCase();
    if (query === '') return this.providers;
    return this.providers.filter((p) => p.id.includes(query) || p.display_name.toLowerCase().includes(query));
  }
}

/** Problems in catalogue data, one sentence each; empty when the data is valid. */
export function validateProviderCatalogue(entries: readonly ProviderDescriptor[]): string[] {
  const problems: string[] = [];
  if (!Array.isArray(entries) || entries.length === 0) return ['the catalogue lists no provider'];
  const seen = new Set<string>();
  entries.forEach((provider, index) => {
    const at = typeof provider?.id === 'string' && provider.id !== '' ? `provider ${provider.id}` : `provider #${index}`;
    const problem = (text: string) => problems.push(`${at}: ${text}`);
    if (typeof provider?.id !== 'string' || !/^[a-z0-9_]+$/.test(provider.id)) {
      problem('id must be lower-case letters, digits and underscores');
    } else if (seen.has(provider.id)) {
      problem('duplicate id');
    } else {
      seen.add(provider.id);
    }
    if (typeof provider.display_name !== 'string' || provider.display_name.trim() === '') problem('display_name is empty');
    for (const flag of ['manual', 'mfa_required', 'beta'] as const) {
      if (typeof provider[flag] !== 'boolean') problem(`${flag} must be a boolean`);
    }
    if (typeof provider.primary_color !== 'string' || !/^#[0-9a-f]{6}$/i.test(provider.primary_color)) {
      problem('primary_color must be #rrggbb');
    }
    checkProducts(provider.products, 'products', problem);
    const latency = provider.live_latency_ms;
    if (!latency || !(latency.min >= 0) || !(latency.max >= latency.min) || !Number.isFinite(latency.max)) {
      problem('live_latency_ms needs 0 <= min <= max');
    }
    const offersBenefits = Array.isArray(provider.products) && provider.products.includes('benefits');
    checkBenefitsSupport(provider.benefits_support, 'benefits_support', offersBenefits, problem);

    const methods = provider.authentication_methods;
    if (!Array.isArray(methods) || methods.length === 0) {
      problem('authentication_methods is empty');
      return;
    }
    const types = new Set<string>();
    methods.forEach((method, m) => {
      const where = `authentication_methods[${m}]`;
      if (!(AUTHENTICATION_TYPES as readonly string[]).includes(method?.type)) {
        problem(`${where}.type ${String(method?.type)} is not one of ${AUTHENTICATION_TYPES.join(', ')}`);
      } else if (types.has(method.type)) {
        problem(`${where}.type ${method.type} is listed twice`);
      }
      types.add(method?.type);
      if (provider.manual && method?.type !== 'assisted') {
        problem(`${where}.type is ${String(method?.type)}, but a manual provider is reached only through assisted`);
      }
      checkProducts(method?.products, `${where}.products`, problem);
      const outside = (method?.products ?? []).filter((p: Product) => !provider.products?.includes(p));
      if (outside.length > 0) problem(`${where}.products ${outside.join(', ')} are not products of the provider`);
      checkBenefitsSupport(
        method?.benefits_support,
        `${where}.benefits_support`,
        Array.isArray(method?.products) && method.products.includes('benefits'),
        problem,
      );
    });
    if (JSON.stringify(provider.benefits_support) !== JSON.stringify(methods[0]?.benefits_support)) {
      problem('benefits_support must be that of the first (default) authentication method');
    }
  });
  return problems;
}

function checkProducts(products: unknown, where: string, problem: (text: string) => void): void {
  if (!Array.isArray(products) || products.length === 0) {
    problem(`${where} is empty`);
    return;
  }
  const unknown = products.filter((p) => !isProduct(p));
  if (unknown.length > 0) problem(`${where}: unknown product ${unknown.join(', ')} (known: ${PRODUCTS.join(', ')})`);
  if (new Set(products).size !== products.length) problem(`${where} lists a product twice`);
}

function checkBenefitsSupport(
  support: BenefitsSupport | undefined,
  where: string,
  offersBenefits: boolean,
  problem: (text: string) => void,
): void {
  if (support === null || typeof support !== 'object') {
    problem(`${where} must map every benefit type`);
    return;
  }
  for (const key of Object.keys(support)) {
    if (!isBenefitType(key)) problem(`${where}: unknown benefit type ${key}`);
  }
  const supported = BENEFIT_TYPES.filter((type) => {
    if (!(type in support)) {
      problem(`${where}: benefit type ${type} is missing (null when unsupported)`);
      return false;
    }
    return support[type] !== null;
  });
  if (offersBenefits && supported.length === 0) problem(`${where}: the benefits product is offered but no benefit type`);
  if (!offersBenefits && supported.length > 0) {
    problem(`${where}: supports ${supported.join(', ')} without the benefits product`);
  }
  for (const type of supported) {
    const entry = support[type]!;
    const at = `${where}.${type}`;
    const features = entry.supported_features;
    const operations = entry.supported_operations;
    if (!features || !operations) {
      problem(`${at} needs supported_features and supported_operations`);
      continue;
    }
    const hsa = HSA_BENEFIT_TYPES.includes(type);
    const limited = hsa || RETIREMENT_BENEFIT_TYPES.includes(type);
    for (const feature of ['annual_maximum', 'catch_up'] as const) {
      const value = features[feature];
      if (limited ? typeof value !== 'boolean' : value !== null) {
        problem(`${at}.${feature} must be ${limited ? 'a boolean' : 'null (it applies to retirement and HSA types only)'}`);
      }
    }
    if (hsa ? !Array.isArray(features.hsa_contribution_limit) : features.hsa_contribution_limit !== null) {
      problem(`${at}.hsa_contribution_limit must be ${hsa ? 'an array' : 'null (it applies to HSA types only)'}`);
    }
    checkValues(features.hsa_contribution_limit, ['individual', 'family'], `${at}.hsa_contribution_limit`, problem);
    checkValues(features.employee_deduction, ['fixed', 'percent'], `${at}.employee_deduction`, problem);
    checkValues(features.company_contribution, ['match', 'fixed', 'percent'], `${at}.company_contribution`, problem);
    checkValues(features.frequencies, BENEFIT_FREQUENCIES, `${at}.frequencies`, problem);
    if (!Array.isArray(features.frequencies) || features.frequencies.length === 0) problem(`${at}.frequencies is empty`);
    for (const scope of ['company_benefits', 'individual_benefits'] as const) {
      for (const operation of ['create', 'read', 'update', 'delete'] as const) {
        const value = operations[scope]?.[operation];
        if (value !== 'supported' && value !== 'not_supported_by_provider') {
          problem(`${at}.supported_operations.${scope}.${operation} must be supported or not_supported_by_provider`);
        }
      }
    }
  }
}

function checkValues(values: unknown, allowed: readonly string[], where: string, problem: (text: string) => void): void {
  if (values === null) return;
  if (!Array.isArray(values)) {
    problem(`${where} must be an array or null`);
    return;
  }
  const unknown = values.filter((v) => !allowed.includes(v));
  if (unknown.length > 0) problem(`${where}: unknown value ${unknown.join(', ')} (known: ${allowed.join(', ')})`);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
