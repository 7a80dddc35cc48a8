import { randomUUID } from 'node:crypto';
import type { OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, RequestBodyObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DataSource } from 'typeorm';
import { EXAMPLE_IDS } from '../../src/infrastructure/http/api-docs-examples';
import { CURRENT_API_VERSION } from '../../src/infrastructure/http/api-version';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, createApplication } from '../utils/connect';
import { json, startTestService, TestResponse, TestService } from '../utils/test-app';
import { ReconciliationFixtures } from '../utils/reconciliation-fixtures';

/**
 * The served OpenAPI document against the running service: every read answers 200 when called
 * the way the docs page fills it in, every error the service answers is a response the document
 * lists (with the Error schema), and every example request body is accepted.
 */

interface Operation {
  key: string;
  method: string;
  path: string;
  op: OperationObject;
}

interface SandboxConnection {
  access_token: string;
  connection_id: string;
  company_id: string;
  entity_id: string;
}

const OPS_AUTH = { authorization: `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}` };

describeWithPostgres('the OpenAPI document against the service', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let document: OpenAPIObject;
  let isError: ValidateFunction;
  let connection: SandboxConnection;
  let individuals: string[];

  const sandboxConnection = async (body: Record<string, unknown> = {}): Promise<SandboxConnection> => {
    const res = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5, ...body }, basic(app)));
    if (res.status !== 200) throw new Error(`sandbox connection failed: ${res.text}`);
    return res.body;
  };

  beforeAll(async () => {
    service = await startTestService();
    app = await createApplication(service);
    const served = await service.request('/docs/openapi.json');
    expect(served.status).toBe(200);
    document = served.body;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    isError = ajv.compile(document.components!.schemas!.Error as object);
    connection = await sandboxConnection();
    const directory = await service.request('/employer/directory', {
      headers: { authorization: `Bearer ${connection.access_token}`, 'service-api-version': CURRENT_API_VERSION },
    });
    individuals = directory.body.individuals.map((individual: { id: string }) => individual.id);
  });
  afterAll(() => service?.close());

  const operations = (): Operation[] =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((method) =>
        item[method] ? [{ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op: item[method] }] : [],
      ),
    );
  const resolve = <T extends object>(item: T | ReferenceObject): T => {
    if (!('$ref' in item)) return item;
    const [, , kind, name] = item.$ref.split('/');
    return (document.components as Record<string, Record<string, T>>)[kind][name];
  };
  const parameters = (op: OperationObject) => (op.parameters ?? []).map((p) => resolve<ParameterObject>(p));
  const schemes = (op: OperationObject) => (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** The request the docs page sends: required parameters from their default or example, the rest left out. */
  function pageRequest(
    { method, path, op }: Operation,
    {
      ids = {},
      query = {},
      extraQuery = {},
      headers = {},
      body,
    }: { ids?: Record<string, string>; query?: Record<string, string>; extraQuery?: Record<string, string>; headers?: Record<string, string>; body?: unknown } = {},
  ): [string, RequestInit] {
    const search = new URLSearchParams();
    const sent: Record<string, string> = {};
    for (const parameter of parameters(op)) {
      const schema = (parameter.schema ?? {}) as SchemaObject;
      const filled = parameter.required ? (schema.default ?? schema.example ?? parameter.example) : undefined;
      if (parameter.in === 'header' && filled !== undefined) sent[parameter.name] = String(filled);
      if (parameter.in === 'query' && (query[parameter.name] ?? filled) !== undefined) search.set(parameter.name, String(query[parameter.name] ?? filled));
    }
    for (const [name, value] of Object.entries(extraQuery)) search.set(name, value);
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? randomUUID()) + (search.size > 0 ? `?${search}` : '');
    const init: RequestInit = { method, headers: { ...sent, ...headers } };
    if (body !== undefined) {
      init.headers = { 'content-type': 'application/json', ...init.headers };
      init.body = JSON.stringify(body);
    }
    return [url, init];
  }

  /** The response is one the operation documents; an error is the Error object with its status as `code`. */
  function expectDocumented({ key, op }: Operation, res: TestResponse): void {
    expect({ key, status: res.status, documented: String(res.status) in op.responses }).toEqual({ key, status: res.status, documented: true });
    if (res.status >= 400) {
      expect({ key, valid: isError(res.body), errors: isError.errors, body: res.body }).toEqual({ key, valid: true, errors: null, body: res.body });
      expect(res.body.code).toBe(res.status);
      const examples = Object.values(resolve<ResponseObject>(op.responses[res.status]!).content?.['application/json']?.examples ?? {}).map(
        (example) => (example as { value: { service_code?: string; name: string } }).value,
      );
      const documentedCodes = examples.map((example) => example.service_code ?? example.name);
      const code = res.body.service_code ?? res.body.name;
      expect({ key, code, documented: documentedCodes.includes(code), documentedCodes }).toEqual({ key, code, documented: true, documentedCodes });
    }
  }

  it('answers every read 200 when the docs page fills it in with a sandbox token', async () => {
    const token = connection.access_token;
    const benefit = await service.request(
      '/employer/benefits',
      json({ type: '401k', description: 'Docs read fixture', frequency: 'every_paycheck' }, { ...bearer(token), 'service-api-version': CURRENT_API_VERSION }),
    );
    expect(benefit.status).toBe(200);
    const job = await service.request('/jobs/automated', json({ type: 'data_sync_all' }, { ...bearer(token), 'service-api-version': CURRENT_API_VERSION }));
    expect(job.status).toBeLessThan(300);
    const groups = await service.request('/employer/pay-groups', { headers: { ...bearer(token), 'service-api-version': CURRENT_API_VERSION } });
    // What reconciliation writes, for the reads of it: one reconciled statement and the discrepancy it fed.
    const target = { connectionId: connection.connection_id, entityId: connection.entity_id };
    const reconciliation = new ReconciliationFixtures(service.app.get(DataSource));
    const [paymentId, individualId] = [randomUUID(), randomUUID()];
    const discrepancyId = await reconciliation.discrepancy(target, {
      benefitId: benefit.body.benefit_id,
      individualId,
      kind: 'missing',
      status: 'open',
      firstPaymentId: paymentId,
      firstPayDate: '2026-01-15',
      openedAt: '2026-01-16T00:00:00Z',
    });
    await reconciliation.results(target, [
      { paymentId, individualId, benefitId: benefit.body.benefit_id, payDate: '2026-01-15', result: 'missing', expectedEmployee: 500, discrepancyId },
    ]);
    const ids = {
      benefit_id: benefit.body.benefit_id,
      job_id: job.body.job_id,
      pay_group_id: groups.body[0].id,
      discrepancy_id: discrepancyId,
      payment_id: paymentId,
    };
    // Required parameters without a default or example are the ones a person types in.
    const query = { start_date: '2026-01-01', end_date: '2026-12-31' };

    const reads = operations().filter(({ method, op }) => method === 'GET' && schemes(op).includes('access-token'));
    expect(reads.length).toBeGreaterThan(15);
    for (const read of reads) {
      const res = await service.request(...pageRequest(read, { ids, query, headers: bearer(token) }));
      expectDocumented(read, res);
      // An Automated sandbox employer has no manual jobs: that read can only be a documented 404.
      const expected = read.key === 'GET /jobs/manual/{job_id}' ? 404 : 200;
      expect({ key: read.key, status: res.status, body: res.status === expected ? undefined : res.body }).toEqual({ key: read.key, status: expected, body: undefined });
    }
  });

  it('refuses every operation without credentials with a documented error', async () => {
    for (const operation of operations()) {
      const res = await service.request(...pageRequest(operation));
      if (operation.key === 'GET /providers') {
        expect(res.status).toBe(200);
        continue;
      }
      expect({ key: operation.key, status: res.status, refused: res.status >= 400 && res.status < 500 }).toEqual({ key: operation.key, status: res.status, refused: true });
      expectDocumented(operation, res);
    }
  });

  it('refuses a missing or invalid version header where the document requires it, and only there', async () => {
    const token = (await sandboxConnection()).access_token;
    for (const operation of operations().filter(({ op }) => schemes(op).includes('access-token'))) {
      const requires = parameters(operation.op).some((p) => p.in === 'header' && p.name === 'Service-API-Version');
      if (requires) {
        for (const [version, code] of [[undefined, 'missing_version_header'], ['2021-02-30', 'invalid_version_header']] as const) {
          const [url, init] = pageRequest(operation, { headers: bearer(token) });
          const headers = { ...(init.headers as Record<string, string>) };
          if (version === undefined) delete headers['Service-API-Version'];
          else headers['Service-API-Version'] = version;
          const res = await service.request(url, { ...init, headers });
          expect({ key: operation.key, status: res.status, code: res.body?.service_code }).toEqual({ key: operation.key, status: 400, code });
          expectDocumented(operation, res);
        }
      } else if (operation.method === 'GET') {
        // Elsewhere a bad header is ignored (writes are not called here: they would run).
        const res = await service.request(...pageRequest(operation, { headers: { ...bearer(token), 'service-api-version': 'not a date' } }));
        expect({ key: operation.key, status: res.status }).toEqual({ key: operation.key, status: 200 });
      }
    }
  });

  it('documents the guards’ refusals: foreign entities, products not granted, bodies that are not JSON', async () => {
    const limited = await sandboxConnection({ products: ['company'] });
    // The guard refuses them before any handler runs, so writes are safe to call here.
    const tokenOperations = operations().filter(({ op }) => schemes(op).includes('access-token'));
    expect(tokenOperations.length).toBeGreaterThan(30);
    for (const operation of tokenOperations) {
      const res = await service.request(...pageRequest(operation, { extraQuery: { entity_ids: randomUUID() }, headers: bearer(connection.access_token) }));
      expect({ key: operation.key, code: res.body?.service_code }).toEqual({ key: operation.key, code: 'entity_not_authorized' });
      expectDocumented(operation, res);
    }
    const employer = operations().filter(({ path, key }) => path.startsWith('/employer/') && key !== 'GET /employer/company');
    for (const operation of employer) {
      const res = await service.request(...pageRequest(operation, { headers: bearer(limited.access_token) }));
      expect({ key: operation.key, code: res.body?.service_code }).toEqual({ key: operation.key, code: 'product_not_granted' });
      expectDocumented(operation, res);
    }
    for (const operation of operations().filter(({ op }) => op.requestBody !== undefined)) {
      const [url, init] = pageRequest(operation, { headers: bearer(connection.access_token) });
      const text = await service.request(url, { ...init, headers: { ...(init.headers as object), 'content-type': 'text/plain' }, body: 'hello' });
      expect({ key: operation.key, status: text.status }).toEqual({ key: operation.key, status: 415 });
      expectDocumented(operation, text);
      const broken = await service.request(url, { ...init, headers: { ...(init.headers as object), 'content-type': 'application/json' }, body: '{"a":' });
      expect({ key: operation.key, code: broken.body?.service_code }).toEqual({ key: operation.key, code: 'malformed_request' });
      expectDocumented(operation, broken);
    }
    const tooLarge = operations().find(({ key }) => key === 'POST /employer/benefits')!;
    const [url, init] = pageRequest(tooLarge, { headers: bearer(connection.access_token) });
    const res = await service.request(url, { ...init, headers: { ...(init.headers as object), 'content-type': 'application/json' }, body: `"${'x'.repeat(9 * 1024 * 1024)}"` });
    expect(res.status).toBe(413);
    expectDocumented(tooLarge, res);
  });

  it('accepts every example request body of the document', async () => {
    const assisted = await sandboxConnection({ provider_id: 'sandbox_assisted' });
    // Connections the examples may change: one forced into reauth, one whose company gets another account.
    const throwaway = await sandboxConnection();
    const otherCompany = await sandboxConnection();
    const version = { 'service-api-version': CURRENT_API_VERSION };
    const created = await service.request('/employer/benefits', json({ type: 'hsa_pre', description: 'Health Savings Account', frequency: 'every_paycheck' }, { ...bearer(connection.access_token), ...version }));
    const hsa = created.body.benefit_id as string;
    let benefit401k = '';

    const withRealIds = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value)
          .replaceAll(EXAMPLE_IDS.individuals[0], individuals[0])
          .replaceAll(EXAMPLE_IDS.individuals[1], individuals[1])
          .replaceAll(EXAMPLE_IDS.sandboxCompany, otherCompany.company_id),
      );
    const credentialsFor = (operation: Operation): Record<string, string> => {
      const names = schemes(operation.op);
      if (names.includes('client-credentials')) return basic(app);
      if (names.includes('ops')) return OPS_AUTH;
      if (operation.key === 'POST /employer/benefits/register') return bearer(assisted.access_token);
      if (operation.key === 'PUT /sandbox/connections/accounts') return bearer(throwaway.access_token);
      return bearer(connection.access_token);
    };

    const withExamples = operations().filter(({ op }) => op.requestBody && Object.keys(resolve<RequestBodyObject>(op.requestBody).content['application/json']?.examples ?? {}).length > 0);
    // Benefits first: enrollments name them.
    withExamples.sort((a, b) => Number(b.key === 'POST /employer/benefits') - Number(a.key === 'POST /employer/benefits'));
    expect(withExamples.map(({ key }) => key)).toEqual(
      expect.arrayContaining(['POST /employer/benefits', 'POST /employer/benefits/{benefit_id}', 'POST /employer/benefits/{benefit_id}/individuals', 'DELETE /employer/benefits/{benefit_id}/individuals']),
    );
    let accepted = 0;
    for (const operation of withExamples) {
      const examples = resolve<RequestBodyObject>(operation.op.requestBody!).content['application/json'].examples!;
      for (const [name, example] of Object.entries(examples)) {
        const value = withRealIds((example as { value: unknown }).value);
        const benefitId = name === 'hsa_family' ? hsa : benefit401k;
        const [url, init] = pageRequest(operation, {
          ids: { benefit_id: benefitId, individual_id: individuals[1] },
          headers: credentialsFor(operation),
          body: value,
        });
        const res = await service.request(url, init);
        expect({ key: operation.key, name, accepted: res.status >= 200 && res.status < 300, body: res.status < 300 ? undefined : res.body }).toEqual({
          key: operation.key,
          name,
          accepted: true,
          body: undefined,
        });
        accepted += 1;
        if (operation.key === 'POST /employer/benefits' && name === '401k_with_match') benefit401k = res.body.benefit_id;
      }
    }
    expect(accepted).toBeGreaterThan(20);
  });
});
