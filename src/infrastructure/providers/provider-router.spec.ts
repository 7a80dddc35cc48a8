import { EmployerRef, ProviderPort } from '../../domain/providers/provider-port';
import { ProviderRouter } from './provider-router';

/** A port whose every method answers which adapter it is. */
function namedPort(name: string): ProviderPort {
  return new Proxy({} as ProviderPort, {
    // Not a thenable: the router awaits the adapter it picks.
    get: (_target, method) =>
      method === 'then'
        ? undefined
        : method === 'snapshot'
        ? async function* () {
            yield { kind: 'company', record: { id: name } };
          }
        : async () => name,
  });
}

const ref = (overrides: Partial<EmployerRef> = {}): EmployerRef => ({
  connectionId: 'c1',
  entityId: 'e1',
  entityName: 'Acme',
  providerId: 'gusto',
  authenticationType: 'oauth',
  employeeSize: 20,
  sandbox: false,
  ...overrides,
});

describe('ProviderRouter', () => {
  let granted: Record<string, string>;
  let lookups: string[];
  let now: number;
  let router: ProviderRouter;

  beforeEach(() => {
    granted = { c1: 'gusto' };
    lookups = [];
    now = 0;
    const grants = {
      providerOf: async (id: string) => {
        lookups.push(id);
        return granted[id];
      },
    };
    router = new ProviderRouter(namedPort('sandbox'), new Map([['gusto', namedPort('gusto')]]), grants, () => now);
  });

  it('sends a production connection granted at Gusto to the Gusto adapter, for every call', async () => {
    expect(await router.company(ref())).toBe('gusto');
    expect(await router.enroll(ref(), 'b1', [])).toBe('gusto');
    const batches = [];
    for await (const batch of router.snapshot(ref())) batches.push(batch);
    expect(batches).toEqual([{ kind: 'company', record: { id: 'gusto' } }]);
  });

  it('keeps sandbox connections, and refs that do not say, on the simulation without reading grants', async () => {
    expect(await router.company(ref({ sandbox: true }))).toBe('sandbox');
    expect(await router.company(ref({ sandbox: undefined }))).toBe('sandbox');
    expect(lookups).toEqual([]);
  });

  it('keeps a production connection made by the simulated sign-in (no grant) on the simulation', async () => {
    expect(await router.directory(ref({ connectionId: 'c2' }), { limit: 10, offset: 0 })).toBe('sandbox');
  });

  it('never sends a grant at one provider to another provider’s adapter, nor a provider without an adapter anywhere but the simulation', async () => {
    granted.c3 = 'other';
    expect(await router.company(ref({ connectionId: 'c3' }))).toBe('sandbox');
    expect(await router.company(ref({ providerId: 'adp_run' }))).toBe('sandbox');
    expect(lookups).toEqual(['c3']);
  });

  it('reads a connection’s grant once per 30 s, so a grant given later by a reauthentication is seen soon', async () => {
    expect(await router.company(ref({ connectionId: 'c2' }))).toBe('sandbox');
    granted.c2 = 'gusto';
    now = 29_999;
    expect(await router.company(ref({ connectionId: 'c2' }))).toBe('sandbox');
    now = 30_000;
    expect(await router.company(ref({ connectionId: 'c2' }))).toBe('gusto');
    expect(lookups).toEqual(['c2', 'c2']);
  });
});
