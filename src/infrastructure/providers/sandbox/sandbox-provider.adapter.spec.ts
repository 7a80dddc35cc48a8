import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { liveLatencyMs } from './sandbox-provider.adapter';

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
