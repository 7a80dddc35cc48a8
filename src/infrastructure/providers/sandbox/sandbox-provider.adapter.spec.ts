import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { liveLatencyMs, providerFault } from './sandbox-provider.adapter';

describe('sandbox provider latency', () => {
  const catalogue = new ProviderCatalogue();

  it('takes PROVIDER_LATENCY_MS when it is set, whatever the provider', () => {
    expect(liveLatencyMs(catalogue.get('workday'), 0)).toBe(0);
    expect(liveLatencyMs(catalogue.get('sandbox_automated'), 1_234)).toBe(1_234);
  });

  it("otherwise stays within the catalogue entry's live_latency_ms, ends included", () => {
    for (const id of ['sandbox_automated', 'adp_workforce_now', 'workday']) {
      const { min, max } = catalogue.get(id).live_latency_ms;
      expect(liveLatencyMs(catalogue.get(id), undefined, () => 0)).toBe(min);
      expect(liveLatencyMs(catalogue.get(id), undefined, () => 0.999_999_999)).toBe(max);
      const middle = liveLatencyMs(catalogue.get(id), undefined, () => 0.5);
      expect(middle).toBeGreaterThan(min);
      expect(middle).toBeLessThan(max);
    }
    expect(catalogue.get('sandbox_automated').live_latency_ms).toEqual({ min: 50, max: 500 });
  });
});

describe('provider fault drills', () => {
  it('never fails a call when both rates are 0', () => {
    expect(providerFault(0, 0, () => 0)).toBeUndefined();
  });

  it('splits the draw: errors first, then timeouts, then none', () => {
    expect(providerFault(0.3, 0.2, () => 0)).toBe('error');
    expect(providerFault(0.3, 0.2, () => 0.299)).toBe('error');
    expect(providerFault(0.3, 0.2, () => 0.3)).toBe('timeout');
    expect(providerFault(0.3, 0.2, () => 0.499)).toBe('timeout');
    expect(providerFault(0.3, 0.2, () => 0.5)).toBeUndefined();
    expect(providerFault(1, 0, () => 0.999)).toBe('error');
    expect(providerFault(0, 1, () => 0.999)).toBe('timeout');
  });

  it('fails about the configured share of calls', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647);
    const faults = Array.from({ length: 10_000 }, () => providerFault(0.3, 0.1, random));
    const errors = faults.filter((f) => f === 'error').length;
    const timeouts = faults.filter((f) => f === 'timeout').length;
    expect(errors / 10_000).toBeCloseTo(0.3, 1);
    expect(timeouts / 10_000).toBeCloseTo(0.1, 1);
  });
});
