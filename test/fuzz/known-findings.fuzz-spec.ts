import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { basic, createApplication } from '../utils/connect';
import { json, startTestService, TestService } from '../utils/test-app';
import { API_VERSION, checkAnswer } from './fuzz-harness';
import { RawRequest, RawResponse, sendRaw } from './raw-http';

const OPS = `Basic ${Buffer.from('ops:ops-password-for-tests').toString('base64')}`;
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

interface Finding {
  /** What once failed, and how. */
  name: string;
  request: (s: { token: string; app: IssuedCredentials; individualId: string }) => Omit<RawRequest, 'headers'> & { headers?: [string, string][] };
  /** The status it must answer now. */
  status: number;
  /** What the message must name (the field, or the rule broken). */
  message?: RegExp;
}

const bearer = (token: string): [string, string][] => [['authorization', `Bearer ${token}`], ['service-api-version', API_VERSION]];
const jsonBody = (text: string, headers: [string, string][]) => ({
  headers: [...headers, ['content-type', 'application/json'], ['content-length', String(Buffer.byteLength(text))]] as [string, string][],
  body: Buffer.from(text),
});

/**
 * One request for each failure the fuzz suite (or its forerunners) found: each must answer
 * below 500, with the spec's error object, and the status named here. Kept as plain cases so
 * a regression names itself without a seed.
 */
const FINDINGS: Finding[] = [
  {
    name: 'JSON nested 5,000 levels deep (stack overflow → 500)',
    request: ({ token }) => ({ method: 'POST', target: '/employer/benefits', ...jsonBody(`{"type":"401k","description":"x","company_contribution":${nested(5_000)}}`, bearer(token)) }),
    status: 400,
    message: /deeper than/,
  },
  {
    name: 'arrays nested 12,000 levels deep in an enrollment body',
    request: ({ token }) => ({
      method: 'POST',
      target: '/employer/benefits/00000000-0000-4000-8000-000000000000/individuals',
      ...jsonBody(`${'['.repeat(12_000)}${']'.repeat(12_000)}`, bearer(token)),
    }),
    status: 400,
    message: /deeper than/,
  },
  {
    name: 'U+0000 in a string PostgreSQL stores (text refuses NUL → 500)',
    request: ({ token }) => ({ method: 'POST', target: '/employer/benefits', ...jsonBody(JSON.stringify({ type: '401k', description: 'a\u0000b', frequency: 'every_paycheck' }), bearer(token)) }),
    status: 400,
    message: /description/,
  },
  {
    name: 'U+0000 in a query filter',
    request: () => ({ method: 'GET', target: '/ops/api/dead-letters?topic=a%00b', headers: [['authorization', OPS]] }),
    status: 400,
    message: /topic/,
  },
  {
    name: 'a lone surrogate stored in jsonb (rule metadata: jsonb refuses \\ud800 → 500)',
    request: ({ token }) => ({
      method: 'POST',
      target: '/employer/pay-statement-item/rule',
      ...jsonBody(JSON.stringify({ conditions: [{ field: 'type', operator: 'equals', value: '401k' }], attributes: { metadata: { note: '\ud800' } } }), bearer(token)),
    }),
    status: 400,
    message: /metadata/,
  },
  {
    name: 'a lone surrogate in an HRIS event',
    request: ({ app }) => ({
      method: 'POST',
      target: '/hris/events',
      ...jsonBody(JSON.stringify({ id: '\udc00', type: 'EmployeeHired', version: 1 }), [['authorization', basic(app).authorization]]),
    }),
    status: 400,
    message: /\bid\b/,
  },
  {
    name: 'offset beyond bigint (1e20 → a failed query, 500)',
    request: ({ token }) => ({ method: 'GET', target: '/employer/directory?offset=1e20', headers: bearer(token) }),
    status: 400,
    message: /offset/,
  },
  {
    name: 'offset beyond bigint in a pay-statement request body',
    request: ({ token }) => ({
      method: 'POST',
      target: '/employer/pay-statement',
      ...jsonBody('{"requests":[{"payment_id":"00000000-0000-4000-8000-000000000000","offset":1e20}]}', bearer(token)),
    }),
    status: 400,
    message: /offset/,
  },
  {
    name: 'null for optional objects (POST /forward headers and params)',
    request: ({ token }) => ({ method: 'POST', target: '/forward', ...jsonBody(JSON.stringify({ method: 'GET', route: '/company', headers: null, params: null }), bearer(token)) }),
    status: 200,
  },
  {
    name: 'null for optional objects (sandbox connection products)',
    request: ({ app }) => ({
      method: 'POST',
      target: '/sandbox/connections',
      ...jsonBody(JSON.stringify({ provider_id: 'sandbox_automated', employee_size: 1, products: null }), [['authorization', basic(app).authorization]]),
    }),
    status: 200,
  },
  {
    name: 'a 100k query string (Node answers 431 without the error object)',
    request: ({ token }) => ({ method: 'GET', target: `/employer/directory?x=${'a'.repeat(100_000)}`, headers: bearer(token) }),
    status: 431,
  },
  {
    name: 'an over-long path parameter (FST_ERR_MAX_PARAM_LENGTH 414 without the error object)',
    request: ({ token }) => ({ method: 'GET', target: `/jobs/automated/${'a'.repeat(500)}`, headers: bearer(token) }),
    status: 414,
  },
  {
    name: 'a path that is not valid percent-encoding (FST_ERR_BAD_URL 400 without the error object)',
    request: ({ token }) => ({ method: 'GET', target: '/employer/benefits/%ff%fe', headers: bearer(token) }),
    status: 400,
    message: /percent/,
  },
  {
    name: 'a constructor key in a body',
    request: ({ token }) => ({
      method: 'POST',
      target: '/employer/benefits',
      ...jsonBody('{"type":"401k","description":"x","frequency":"every_paycheck","constructor":{"name":"x"}}', bearer(token)),
    }),
    status: 400,
    message: /constructor/,
  },
  {
    name: 'a prototype key in a nested object',
    request: ({ token }) => ({
      method: 'POST',
      target: '/employer/benefits',
      ...jsonBody('{"type":"401k","description":"x","frequency":"every_paycheck","company_contribution":{"prototype":{"x":1}}}', bearer(token)),
    }),
    status: 400,
    message: /prototype/,
  },
  {
    name: 'an Expect header other than 100-continue (Node answers 417 without the error object)',
    request: ({ token }) => ({ method: 'GET', target: '/employer/company', headers: [...bearer(token), ['expect', 'something-else']] }),
    status: 417,
  },
];

describeWithPostgres('fuzz: known findings', () => {
  let service: TestService;
  let setup: { token: string; app: IssuedCredentials; individualId: string };

  beforeAll(async () => {
    service = await startTestService();
    const app = await createApplication(service);
    const connection = await service.request('/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 2 }, basic(app)));
    if (connection.status !== 200) throw new Error(`sandbox connection failed: ${connection.text}`);
    const token = connection.body.access_token;
    const directory = await service.request('/employer/directory', { headers: { authorization: `Bearer ${token}`, 'service-api-version': API_VERSION } });
    setup = { token, app, individualId: directory.body.individuals[0].id };
  });
  afterAll(() => service?.close());

  it.each(FINDINGS.map((f) => [f.name, f] as const))('%s', async (_name, finding) => {
    const { hostname, host, port } = new URL(service.url);
    const { headers = [], ...request } = finding.request(setup);
    const outcome = await sendRaw(hostname, Number(port), { ...request, headers: [['host', host], ['connection', 'close'], ...headers] });
    const answer = 'response' in outcome ? shown(outcome.response) : outcome.error;
    expect({ violation: checkAnswer({}, request.method, outcome)?.signature, answer }).toEqual({ violation: undefined, answer: expect.any(String) });
    expect({ status: 'response' in outcome ? outcome.response.status : 'none', answer }).toEqual({ status: finding.status, answer });
    if (finding.message && 'response' in outcome) expect(JSON.parse(outcome.response.text).message).toMatch(finding.message);
  });

  it('leaves the service ready', async () => {
    expect((await service.request('/health/ready')).status).toBe(200);
  });
});

function shown(response: RawResponse): string {
  return `${response.status} ${response.headers['content-type'] ?? ''} ${response.text.slice(0, 300)}`;
}
