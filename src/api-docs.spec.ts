import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { INestApplication, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { DECORATORS, OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { DomainError } from './domain/shared/domain-error';
import { buildApiDocument, IDEMPOTENCY_KEY_PARAMETER, SECURITY, VERSION_HEADER_PARAMETER } from './infrastructure/http/api-docs';
import { OPERATION_ERRORS } from './infrastructure/http/api-docs-errors';
import { REQUEST_BODIES } from './infrastructure/http/api-docs-examples';
import { ApiVersionGuard, CURRENT_API_VERSION, isValidApiVersion } from './infrastructure/http/api-version';
import { AccessTokenGuard } from './modules/auth/access-token.guard';

/**
 * The OpenAPI document built from every controller of src/modules (found on disk, so a new one
 * is covered without listing it), checked against what the guards actually enforce.
 */

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return controllerFiles(path);
    return entry.name.endsWith('.controller.ts') ? [path] : [];
  });
}

const controllers: Type[] = controllerFiles(join(__dirname, 'modules')).flatMap((file) =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  Object.values(require(file) as Record<string, unknown>).filter(
    (value): value is Type => typeof value === 'function' && Reflect.getMetadata(PATH_METADATA, value) !== undefined,
  ),
);

interface Handler {
  controller: Type;
  name: string;
  handler: (...args: unknown[]) => unknown;
  key: string;
}

/** Each documented handler with its `METHOD /path`, computed from Nest's routing metadata. */
function documentedHandlers(): Handler[] {
  const scanner = new MetadataScanner();
  return controllers
    .filter((controller) => !Reflect.getMetadata(DECORATORS.API_EXCLUDE_CONTROLLER, controller)?.[0])
    .flatMap((controller) =>
      scanner.getAllMethodNames(controller.prototype).flatMap((name) => {
        const handler = controller.prototype[name];
        const methodPath = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (methodPath === undefined || Reflect.getMetadata(DECORATORS.API_EXCLUDE_ENDPOINT, handler)?.disable) return [];
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const path = `/${[Reflect.getMetadata(PATH_METADATA, controller), methodPath].join('/')}`
          .replace(/\/+/g, '/')
          .replace(/(.)\/$/, '$1')
          .replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        return [{ controller, name, handler, key: `${method} ${path}` }];
      }),
    );
}

/** The service code a guard refuses a request without any header with (undefined: let through). */
async function probe(guard: { canActivate(context: ExecutionContextHost): unknown }, handler: Handler): Promise<string | undefined> {
  const context = new ExecutionContextHost([{ headers: {}, query: {} }, {}, undefined], handler.controller, handler.handler);
  context.setType('http');
  try {
    await guard.canActivate(context);
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error.serviceCode;
    throw error;
  }
}
const versionGuard = new ApiVersionGuard(new Reflector());
// Without a token the guard refuses before it reads the database or the rate limiter.
const tokenGuard = new AccessTokenGuard(new Reflector(), {} as never, {} as never);

describe('the OpenAPI document (/docs/openapi.json)', () => {
  let app: INestApplication;
  let document: OpenAPIObject;
  const handlers = documentedHandlers();

  beforeAll(async () => {
    const module = await Test.createTestingModule({ controllers }).useMocker(() => ({})).compile();
    app = module.createNestApplication(new FastifyAdapter(), { logger: false });
    document = buildApiDocument(app, '0.0.0-test');
  });
  afterAll(() => app?.close());

  const operation = (key: string): OperationObject => {
    const [method, path] = key.split(' ');
    const found = document.paths[path]?.[method.toLowerCase() as 'get'];
    if (!found) throw new Error(`${key} is not in the document`);
    return found;
  };
  const resolve = <T extends object>(item: T | ReferenceObject): T => {
    if (!('$ref' in item)) return item;
    const [, , kind, name] = item.$ref.split('/');
    return (document.components as Record<string, Record<string, T>>)[kind][name];
  };
  const header = (op: OperationObject, name: string) =>
    (op.parameters ?? []).map((p) => resolve<ParameterObject>(p)).find((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase());
  const allOperations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((method) => (item[method] ? [{ key: `${method.toUpperCase()} ${path}`, op: item[method] }] : [])),
    );

  it('documents every route of every controller not excluded from it', () => {
    expect(handlers.length).toBeGreaterThan(50);
    for (const handler of handlers) expect(() => operation(handler.key)).not.toThrow();
    expect(allOperations()).toHaveLength(handlers.length);
  });

  /** The handlers each guard refuses without the header it needs. */
  const refusedBy = async (guard: typeof versionGuard | typeof tokenGuard, code: string) => {
    const refused: string[] = [];
    for (const handler of handlers) if ((await probe(guard, handler)) === code) refused.push(handler.key);
    return refused;
  };

  it('declares Service-API-Version, required with its default, exactly where the guard requires it', async () => {
    const requiring = await refusedBy(versionGuard, 'missing_version_header');
    // The spec's "read, deduction and disconnect operations" are among them; the sandbox's and the public ones are not.
    expect(requiring).toEqual(
      expect.arrayContaining(['GET /employer/directory', 'GET /employer/company', 'POST /employer/benefits', 'POST /disconnect', 'GET /jobs/automated']),
    );
    expect(requiring).not.toEqual(expect.arrayContaining(['POST /sandbox/jobs']));
    for (const handler of handlers) {
      const declared = header(operation(handler.key), VERSION_HEADER_PARAMETER);
      if (!requiring.includes(handler.key)) {
        expect({ key: handler.key, declared }).toEqual({ key: handler.key, declared: undefined });
        continue;
      }
      expect({ key: handler.key, required: declared?.required }).toEqual({ key: handler.key, required: true });
      const schema = declared!.schema as SchemaObject;
      expect(schema.default).toBe(CURRENT_API_VERSION);
      expect(isValidApiVersion(schema.default)).toBe(true);
      expect(new RegExp(schema.pattern!).test(schema.default)).toBe(true);
      expect(new RegExp(schema.pattern!).test('2020-9-17')).toBe(false);
    }
  });

  it('declares the bearer security exactly where the access-token guard asks for a token', async () => {
    const tokenOperations = await refusedBy(tokenGuard, 'missing_access_token');
    expect(tokenOperations.length).toBeGreaterThan(30);
    for (const handler of handlers) {
      const guarded = tokenOperations.includes(handler.key);
      const security = (operation(handler.key).security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect({ key: handler.key, bearer: security.includes(SECURITY.bearer) }).toEqual({ key: handler.key, bearer: guarded });
    }
  });

  it('describes the bearer token as opaque and the Basic schemes where they are used', () => {
    const schemes = document.components!.securitySchemes!;
    expect(schemes[SECURITY.bearer]).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: expect.stringContaining('opaque') });
    for (const scheme of Object.values(schemes)) expect('bearerFormat' in scheme ? scheme.bearerFormat : undefined).not.toBe('JWT');
    expect(schemes[SECURITY.client]).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(schemes[SECURITY.ops]).toMatchObject({ type: 'http', scheme: 'basic' });
    const uses = (key: string) => (operation(key).security ?? []).flatMap((requirement) => Object.keys(requirement));
    for (const key of ['POST /connect/sessions', 'POST /hris/events', 'POST /sandbox/connections']) expect(uses(key)).toEqual([SECURITY.client]);
    for (const { key } of allOperations().filter(({ key }) => key.includes(' /ops/api/'))) expect(uses(key)).toEqual([SECURITY.ops]);
    for (const { op } of allOperations()) {
      for (const name of (op.security ?? []).flatMap((requirement) => Object.keys(requirement))) expect(Object.keys(schemes)).toContain(name);
      // Credentials travel by the security schemes, never as a parameter (which OpenAPI ignores).
      expect(header(op, 'authorization')).toBeUndefined();
    }
  });

  it('gives every operation its error responses, each the Error schema with examples that are valid errors', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const isError = ajv.compile(document.components!.schemas!.Error as object);
    expect(document.components!.schemas!.Error).toMatchObject({ required: ['code', 'name', 'message'] });
    for (const { key, op } of allOperations()) {
      const statuses = Object.keys(op.responses).map(Number);
      expect({ key, has500: statuses.includes(500) }).toEqual({ key, has500: true });
      for (const status of statuses.filter((s) => s >= 400)) {
        const response = resolve<ResponseObject>(op.responses[status]!);
        const json = response.content?.['application/json'];
        expect({ key, status, schema: json?.schema }).toEqual({ key, status, schema: { $ref: '#/components/schemas/Error' } });
        const examples = Object.values(json?.examples ?? {}) as { value: Record<string, unknown> }[];
        expect(examples.length).toBeGreaterThan(0);
        for (const { value } of examples) {
          expect({ key, status, valid: isError(value), errors: isError.errors }).toEqual({ key, status, valid: true, errors: null });
          expect(value.code).toBe(status);
        }
      }
    }
  });

  it('lists the guards’ errors on the operations they guard', async () => {
    const requiring = await refusedBy(versionGuard, 'missing_version_header');
    const tokenOperations = await refusedBy(tokenGuard, 'missing_access_token');
    const codes = (key: string, status: number) =>
      Object.values(resolve<ResponseObject>(operation(key).responses[status] ?? { description: '' }).content?.['application/json']?.examples ?? {}).map(
        (example) => (example as { value: { service_code?: string } }).value.service_code,
      );
    for (const handler of handlers) {
      if (requiring.includes(handler.key)) {
        expect({ key: handler.key, codes: codes(handler.key, 400) }).toEqual({
          key: handler.key,
          codes: expect.arrayContaining(['missing_version_header', 'invalid_version_header']),
        });
      }
      if (tokenOperations.includes(handler.key)) {
        expect({ key: handler.key, codes: codes(handler.key, 401) }).toEqual({
          key: handler.key,
          codes: expect.arrayContaining(['missing_access_token', 'invalid_access_token']),
        });
        expect(codes(handler.key, 429)).toContain('rate_limit_exceeded');
      }
    }
    expect(codes('GET /employer/directory', 403)).toEqual(expect.arrayContaining(['product_not_granted', 'entity_not_authorized']));
    expect(codes('POST /employer/benefits/{benefit_id}/individuals', 404)).toEqual(['benefit_not_found']);
    expect(codes('POST /employer/benefits/{benefit_id}/individuals', 422)).toEqual(['unprocessable_parameters']);
    expect(codes('GET /ops/api/tasks', 401)).toEqual(['missing_ops_credentials', 'invalid_ops_credentials']);
    expect(codes('POST /connect/sessions', 401)).toEqual(['invalid_client']);
  });

  it('names only operations that exist in its per-operation tables', () => {
    const keys = allOperations().map(({ key }) => key);
    for (const key of Object.keys(OPERATION_ERRORS)) expect(keys).toContain(key);
    for (const key of Object.keys(REQUEST_BODIES)) {
      expect(keys).toContain(key);
      expect({ key, body: operation(key).requestBody !== undefined }).toEqual({ key, body: true });
    }
  });

  it('gives the core writes example bodies that match their schemas, with units spelled out', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...document, $id: 'openapi.json' });
    for (const key of ['POST /employer/benefits', 'POST /employer/benefits/{benefit_id}', 'POST /employer/benefits/{benefit_id}/individuals', 'DELETE /employer/benefits/{benefit_id}/individuals', 'POST /sandbox/connections']) {
      const [method, path] = key.split(' ');
      const pointer = `openapi.json#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/requestBody/content/application~1json`;
      const json = resolve(operation(key).requestBody!).content['application/json'];
      expect(Object.keys(json.examples ?? {}).length).toBeGreaterThan(0);
      const validate = ajv.compile({ $ref: `${pointer}/schema` });
      for (const [name, example] of Object.entries(json.examples ?? {})) {
        const { value } = example as { value: unknown };
        expect({ key, name, valid: validate(value), errors: validate.errors }).toEqual({ key, name, valid: true, errors: null });
      }
    }
    const create = resolve(operation('POST /employer/benefits').requestBody!).content['application/json'].examples!;
    expect((create['401k_with_match'] as { value: unknown }).value).toMatchObject({
      type: '401k',
      frequency: 'every_paycheck',
      company_contribution: { type: 'match', tiers: [{ match: 10000, threshold: 300 }, { match: 5000, threshold: 500 }] },
    });
    const enroll = resolve(operation('POST /employer/benefits/{benefit_id}/individuals').requestBody!);
    expect(enroll.description).toMatch(/basis points/);
    expect(enroll.description).toMatch(/600 = 6 %/);
    expect(enroll.description).toMatch(/cents/);
    const configuration = document.components!.schemas!.EnrollmentConfiguration as SchemaObject;
    expect(JSON.stringify(configuration.properties!.employee_deduction)).toMatch(/`amount: 3` means 0\.03 %/);
    expect(document.components!.schemas!.EnrollmentElementDto).toMatchObject({ properties: { configuration: { $ref: '#/components/schemas/EnrollmentConfiguration' } } });
  });

  it('offers the optional Idempotency-Key on every POST', () => {
    for (const { key, op } of allOperations()) {
      const declared = header(op, IDEMPOTENCY_KEY_PARAMETER);
      expect({ key, declared: declared?.required }).toEqual({ key, declared: key.startsWith('POST ') ? false : undefined });
    }
  });
});
