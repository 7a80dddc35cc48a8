import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVED_OPERATIONS } from '../../fakes/gusto/fake-gusto';
import { OpenApiContract } from '../../utils/openapi-contract';

/**
 * Gusto's published API document (version 2026-02-01, from Gusto's own client repository), which
 * the Gusto adapter and its fake are held to: a copy in the repository, so a clone tests alone.
 */
const GUSTO_DOCUMENT = path.resolve(__dirname, '../../fixtures/gusto-openapi.yaml');
/** Where the team keeps the provider documents, beside the project, when it is there. */
const SHARED_GUSTO_DOCUMENT = path.resolve(__dirname, '../../../../shared/spec/providers/gusto/openapi.yaml');

/**
 * The operations the Gusto adapter uses (docs/providers/gusto.md): connecting, reads into the
 * unified records, benefit writes, webhooks and events. The fake serves exactly these.
 */
const GUSTO_OPERATIONS = SERVED_OPERATIONS;

/**
 * Where the document's own examples disagree with its schemas. The schema is taken as the
 * contract (the fake answers by it; the adapter reads both forms): docs/providers/gusto.md,
 * "What the document leaves open".
 */
const EXAMPLES_AGAINST_THEIR_SCHEMA = [
  // Amounts shown as JSON numbers where the schema has decimal strings.
  'GET /v1/company_benefits/{company_benefit_id} 200 Example: response/employee_benefits/0/employee_deduction must be string; response/employee_benefits/0/company_contribution must be string; response/employee_benefits/0/contribution/value must be string',
  // An employee id shown as a number (908123091820398) where the schema has a string (a UUID).
  'POST /v1/employees/{employee_id}/employee_benefits 201 Example: response/employee_uuid must be string',
  'GET /v1/employee_benefits/{employee_benefit_id} 200 Example: response/employee_uuid must be string',
  'PUT /v1/employee_benefits/{employee_benefit_id} 200 Example: response/employee_uuid must be string',
];

/**
 * The contract checker the Gusto fake runs every request and answer through: it must find the
 * right operation, accept what the document allows and refuse what it does not. Without this, a
 * fake and an adapter could agree with each other and both be wrong about Gusto.
 */
describe('Gusto API document as a contract (test/utils/openapi-contract.ts)', () => {
  const contract = OpenApiContract.fromFile(GUSTO_DOCUMENT, 'gusto');
  const version = { 'X-Gusto-API-Version': '2026-02-01' };
  const create = (body: unknown, headers: Record<string, string> = version) =>
    contract.checkRequest({ method: 'POST', path: '/v1/companies/c0a1/company_benefits', headers, body, contentType: 'application/json' });

  it('is the shared copy of the document, where the shared copy is at hand', () => {
    if (!existsSync(SHARED_GUSTO_DOCUMENT)) return;
    expect(readFileSync(GUSTO_DOCUMENT, 'utf8') === readFileSync(SHARED_GUSTO_DOCUMENT, 'utf8')).toBe(true);
  });

  it('has every operation the adapter uses', () => {
    const missing = GUSTO_OPERATIONS.filter((name) => {
      const [method, template] = name.split(' ');
      return !contract.document.paths[template]?.[method.toLowerCase()];
    });
    expect(missing).toEqual([]);
  });

  it('finds the operation of a concrete path, a literal segment before a parameter', () => {
    expect(contract.match('post', '/v1/companies/c0a1/company_benefits')).toEqual({
      name: 'POST /v1/companies/{company_id}/company_benefits',
      template: '/v1/companies/{company_id}/company_benefits',
      pathParams: { company_id: 'c0a1' },
    });
    expect(contract.match('GET', '/v1/companies/c0a1/pay_schedules/preview')?.template).toBe('/v1/companies/{company_id}/pay_schedules/preview');
    expect(contract.match('GET', '/v1/companies/c0a1/pay_schedules/ps1')?.pathParams).toEqual({ company_id: 'c0a1', pay_schedule_id: 'ps1' });
    expect(contract.match('PATCH', '/v1/companies/c0a1/company_benefits')).toBeUndefined();
    expect(contract.checkRequest({ method: 'GET', path: '/v2/nothing' })).toEqual(['GET /v2/nothing is not an operation of the document']);
  });

  it('accepts a request body the document allows', () => {
    expect(create({ description: '401(k) plan', benefit_type: 105, catch_up_type: 'elective' })).toEqual([]);
    // Its type admits null, its enum does not list it: the type is taken at its word.
    expect(create({ description: '401(k) plan', catch_up_type: null })).toEqual([]);
    expect(create({ description: 'no version header' }, {})).toEqual([]);
  });

  it('refuses a request body or header the document does not allow', () => {
    expect(create({ benefit_type: 105 })).toEqual([expect.stringContaining("body must have required property 'description'")]);
    expect(create({ description: 'x', catch_up_type: 'sometimes' }).join()).toMatch(/body\/catch_up_type must be equal to one of the allowed values/);
    expect(create({ description: 'x', benefit_type: '105' }).join()).toMatch(/body\/benefit_type must be integer/);
    expect(create({ description: 'x' }, { 'x-gusto-api-version': '2024-04-01' }).join()).toMatch(/header parameter X-Gusto-API-Version must be equal to one of the allowed values/);
    expect(contract.checkRequest({ method: 'POST', path: '/v1/companies/c0a1/company_benefits', headers: version })).toEqual(['a request body is required']);
  });

  it('checks query parameters by their schema, read from text', () => {
    const list = (query: Record<string, string>) => contract.checkRequest({ method: 'GET', path: '/v1/companies/c0a1/company_benefits', query, headers: version });
    expect(list({ active: 'true', enrollment_count: 'false' })).toEqual([]);
    expect(list({ active: 'yes' }).join()).toMatch(/query parameter active must be boolean/);
  });

  it('checks answers against the documented status and body', () => {
    const operation = 'POST /v1/companies/{company_id}/company_benefits';
    const example = contract.resolve(contract.document.paths['/v1/companies/{company_id}/company_benefits'].post.responses['201']).content['application/json'].examples.Example.value;
    expect(contract.checkResponse(operation, 201, example)).toEqual([]);
    expect(contract.checkResponse(operation, 201, { ...example, active: 'yes' }).join()).toMatch(/response\/active must be boolean/);
    expect(contract.checkResponse(operation, 200, example)).toEqual([expect.stringContaining('does not document status 200')]);
  });

  it('holds the document’s own examples for the adapter’s operations to its schemas, and knows where they differ', () => {
    const failing: string[] = [];
    let checked = 0;
    for (const name of GUSTO_OPERATIONS) {
      const [method, template] = name.split(' ');
      const operation = contract.document.paths[template][method.toLowerCase()];
      for (const [status, documented] of Object.entries(operation.responses ?? {})) {
        const content = contract.resolve(documented).content?.['application/json'];
        for (const [label, example] of Object.entries((content?.examples ?? {}) as Record<string, { value?: unknown }>)) {
          if (example.value === undefined) continue;
          checked++;
          const problems = contract.checkResponse(name, Number(status), example.value);
          if (problems.length > 0) failing.push(`${name} ${status} ${label}: ${problems.slice(0, 3).join('; ')}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(failing).toEqual(EXAMPLES_AGAINST_THEIR_SCHEMA);
  });
});
