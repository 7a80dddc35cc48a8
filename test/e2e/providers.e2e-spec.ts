import { BENEFIT_TYPES } from '../../src/domain/providers/provider';
import { ProvidersModule } from '../../src/modules/providers/providers.module';
import { describeWithPostgres } from '../setup/test-env';
import { startTestService, TestService } from '../utils/test-app';

describeWithPostgres('GET /providers', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ extraModules: [ProvidersModule] });
  });
  afterAll(() => service?.close());

  it('lists the catalogue without an access token or a version header', async () => {
    const res = await service.request('/providers');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.length).toBeGreaterThanOrEqual(8);
    const ids = res.body.map((p: { id: string }) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('renders each provider in the public shape, without simulation hints', async () => {
    const { body } = await service.request('/providers');
    for (const provider of body) {
      expect(Object.keys(provider).sort()).toEqual(
        ['authentication_methods', 'benefits_not_supported', 'benefits_support', 'beta', 'display_name', 'id', 'manual', 'mfa_required', 'primary_color', 'products'].sort(),
      );
      expect(provider).toEqual(
        expect.objectContaining({
          id: expect.stringMatching(/^[a-z0-9_]+$/),
          display_name: expect.any(String),
          products: expect.any(Array),
          manual: expect.any(Boolean),
          mfa_required: expect.any(Boolean),
          beta: expect.any(Boolean),
          primary_color: expect.stringMatching(/^#[0-9a-f]{6}$/i),
        }),
      );
      expect(provider.authentication_methods.length).toBeGreaterThan(0);
      for (const method of provider.authentication_methods) {
        expect(['credential', 'api_token', 'oauth', 'assisted']).toContain(method.type);
        expect(Object.keys(method.benefits_support).sort()).toEqual([...BENEFIT_TYPES].sort());
      }
    }
  });

  it('shows gusto with what the Gusto adapter drives: Gusto’s benefit types, every paycheck, and why each other type is not offered', async () => {
    const { body } = await service.request('/providers');
    const gusto = body.find((p: { id: string }) => p.id === 'gusto');
    const supported = Object.entries(gusto.benefits_support)
      .filter(([, support]) => support !== null)
      .map(([type]) => type)
      .sort();
    expect(supported).toEqual(
      ['401k', '401k_roth', '403b', '403b_roth', 'simple_ira', 'hsa_pre', 's125_medical', 's125_dental', 's125_vision', 'fsa_medical', 'fsa_dependent_care', 'commuter', 'custom_post_tax'].sort(),
    );
    for (const type of supported) expect(gusto.benefits_support[type].supported_features.frequencies).toEqual(['every_paycheck']);
    // Every type Gusto does not take is explained; none that it takes is.
    const unsupported = Object.keys(gusto.benefits_support).filter((type) => gusto.benefits_support[type] === null);
    expect(Object.keys(gusto.benefits_not_supported).sort()).toEqual(unsupported.sort());
    expect(gusto.benefits_not_supported.hsa_post).toMatch(/pre-tax only/);
  });

  it('has Automated and Assisted providers, the sandbox family among them', async () => {
    const { body } = await service.request('/providers');
    const byId = new Map(body.map((p: { id: string }) => [p.id, p]));
    expect(byId.get('sandbox_automated')).toMatchObject({
      display_name: 'Sandbox Payroll (Automated)',
      manual: false,
      authentication_methods: expect.arrayContaining([expect.objectContaining({ type: 'credential' })]),
    });
    expect(byId.get('sandbox_assisted')).toMatchObject({
      display_name: 'Sandbox Payroll (Assisted)',
      manual: true,
      authentication_methods: [expect.objectContaining({ type: 'assisted' })],
    });
    expect(body.some((p: { manual: boolean }) => !p.manual)).toBe(true);
    expect(body.some((p: { manual: boolean }) => p.manual)).toBe(true);
  });

  it('reports benefit support per type, null when unsupported', async () => {
    const { body } = await service.request('/providers');
    const sandbox = body.find((p: { id: string }) => p.id === 'sandbox_automated');
    expect(sandbox.benefits_support['401k']).toEqual({
      supported_features: {
        description: null,
        frequencies: ['every_paycheck', 'monthly', 'one_time'],
        annual_maximum: true,
        catch_up: true,
        company_contribution: ['match', 'fixed', 'percent'],
        employee_deduction: ['fixed', 'percent'],
        hsa_contribution_limit: null,
      },
      supported_operations: {
        company_benefits: { create: 'supported', read: 'supported', update: 'supported', delete: 'supported' },
        individual_benefits: { create: 'supported', read: 'supported', update: 'supported', delete: 'supported' },
      },
    });
    const namely = body.find((p: { id: string }) => p.id === 'namely');
    expect(namely.benefits_support.hsa_pre).toBeNull();
  });

  it('answers an unknown route below /providers with the 404 error object', async () => {
    const res = await service.request('/providers/x');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 404, name: 'not_found_error', message: expect.any(String) });
  });
});
