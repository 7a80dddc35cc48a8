import { INestApplication } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, SwaggerModule } from '@nestjs/swagger';
import { ERROR_SCHEMA_NAME, errorCasesOf, errorResponses, errorSchema, OperationTraits } from './api-docs-errors';
import { AMOUNT_UNITS, enrollmentConfigurationSchemas, HRIS_EVENTS_BODY, REQUEST_BODIES } from './api-docs-examples';
import { isOperationOf, requiresApiVersion, RouteHandler, routeHandlersOf } from './api-docs-routes';
import { CURRENT_API_VERSION, KNOWN_API_VERSIONS } from './api-version';

export const DOCS_PATH = 'docs';
export const OPENAPI_PATH = 'docs/openapi.json';

/** Security scheme names, as the controllers' @ApiBearerAuth / @ApiBasicAuth name them. */
export const SECURITY = { bearer: 'access-token', client: 'client-credentials', ops: 'ops' } as const;
export const VERSION_HEADER_PARAMETER = 'Service-API-Version';
export const IDEMPOTENCY_KEY_PARAMETER = 'Idempotency-Key';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** The OpenAPI document is generated from the controllers and DTOs; the docs page renders it. */
export function setupApiDocs(app: NestFastifyApplication, version: string): void {
  SwaggerModule.setup(DOCS_PATH, app, buildApiDocument(app, version), {
    jsonDocumentUrl: OPENAPI_PATH,
    customSiteTitle: 'Benefits orchestration API',
    swaggerOptions: { persistAuthorization: true },
  });
}

/**
 * The generated document, completed with what the decorators do not say: the version header
 * where the guard requires it, the error responses of every operation, and example bodies.
 */
export function buildApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Unified HR & Payroll API — benefits enrollment orchestration')
      .setDescription(
        'Employer reads, deductions and enrollments driven into payroll providers.\n\n' +
          `- **Version header.** Employer reads, deductions, enrollments, jobs, forward and disconnect take ` +
          `\`Service-API-Version: ${CURRENT_API_VERSION}\`; the operations that need it list it (pre-filled here).\n` +
          '- **Authentication.** Employer operations take `Authorization: Bearer <access token>` (an opaque token from ' +
          '`POST /auth/token` or `POST /sandbox/connections`); connect sessions, HRIS events and sandbox connections take ' +
          'the application’s `client_id:client_secret` by HTTP Basic; `/ops/api` takes the ops credentials by HTTP Basic.\n' +
          `- **Units.** Money amounts are integers in cents; percentages are integers in basis points. ${AMOUNT_UNITS}\n` +
          '- **Errors.** Every error is `{ code, name, service_code?, message }` (schema `Error`); each operation lists the ones it can answer.',
      )
      .setVersion(version)
      .addSecurity(SECURITY.bearer, {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque',
        description:
          'An opaque access token (not a JWT: it carries nothing readable and is checked by the service) from ' +
          '`POST /auth/token`, or for a sandbox employer from `POST /sandbox/connections`. It is valid until its connection is disconnected.',
      })
      .addSecurity(SECURITY.client, {
        type: 'http',
        scheme: 'basic',
        description: 'The application’s credentials: username `client_id`, password `client_secret`.',
      })
      .addSecurity(SECURITY.ops, {
        type: 'http',
        scheme: 'basic',
        description: 'The ops credentials (OPS_USERNAME / OPS_PASSWORD) of the ops task API under /ops/api.',
      })
      .build(),
  );
  completeDocument(document, routeHandlersOf(app));
  return document;
}

function completeDocument(document: OpenAPIObject, routes: readonly RouteHandler[]): void {
  const components = (document.components ??= {});
  components.schemas = { ...components.schemas, [ERROR_SCHEMA_NAME]: errorSchema(), ...enrollmentConfigurationSchemas() };
  const element = components.schemas.EnrollmentElementDto;
  if (element && 'properties' in element && element.properties?.configuration) {
    element.properties.configuration = { $ref: '#/components/schemas/EnrollmentConfiguration' };
  }
  components.parameters = { ...components.parameters, [VERSION_HEADER_PARAMETER]: versionHeader(), [IDEMPOTENCY_KEY_PARAMETER]: idempotencyKeyHeader() };

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const requiresVersion = routes.some((route) => isOperationOf(route, operation.operationId) && requiresApiVersion(route));
      completeOperation(operation, { key, method, path, requiresVersion });
    }
  }
}

function completeOperation(operation: OperationObject, traits: OperationTraits): void {
  // Credentials are the security schemes' business; an `Authorization` parameter is ignored by OpenAPI.
  const parameters = (operation.parameters ?? []).filter((parameter) => !isHeader(parameter, 'authorization'));
  if (traits.requiresVersion) parameters.push({ $ref: `#/components/parameters/${VERSION_HEADER_PARAMETER}` });
  if (traits.method === 'post') parameters.push({ $ref: `#/components/parameters/${IDEMPOTENCY_KEY_PARAMETER}` });
  operation.parameters = parameters;

  if (traits.key === 'POST /hris/events' && operation.requestBody === undefined) operation.requestBody = HRIS_EVENTS_BODY;
  const body = REQUEST_BODIES[traits.key];
  const requestBody = operation.requestBody;
  if (body && requestBody && !('$ref' in requestBody)) {
    if (body.description) requestBody.description = body.description;
    const json = requestBody.content['application/json'];
    if (json) json.examples = body.examples;
  }

  const errors = errorResponses(errorCasesOf(operation, traits, SECURITY));
  for (const [status, response] of Object.entries(errors)) operation.responses[status] ??= response;
}

const isHeader = (parameter: ParameterObject | ReferenceObject, name: string) =>
  'in' in parameter && parameter.in === 'header' && parameter.name.toLowerCase() === name;

function versionHeader(): ParameterObject {
  return {
    name: VERSION_HEADER_PARAMETER,
    in: 'header',
    required: true,
    description:
      `The API version: a date, YYYY-MM-DD. Current and default version: \`${CURRENT_API_VERSION}\` ` +
      `(known: ${KNOWN_API_VERSIONS.join(', ')}). Absent: 400 \`missing_version_header\`; not a date or not a known version: ` +
      '400 `invalid_version_header`.',
    schema: {
      type: 'string',
      format: 'date',
      pattern: '^([12]\\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01]))$',
      default: CURRENT_API_VERSION,
      example: CURRENT_API_VERSION,
    },
  };
}

function idempotencyKeyHeader(): ParameterObject {
  return {
    name: IDEMPOTENCY_KEY_PARAMETER,
    in: 'header',
    required: false,
    description:
      'Optional, 1–255 printable ASCII characters. The same key and request within 24 h get the first answer again ' +
      '(marked `Idempotent-Replayed: true`); the same key with another request is 409 `idempotency_key_reused`. ' +
      'A replay never shows a secret again: a webhook endpoint’s `secret` and a sandbox `access_token` are left out, and ' +
      '`POST /auth/token` does not apply the key (a retried exchange is a second use of its code). An answer too large to ' +
      'keep is answered once; its replay is 409 `idempotency_answer_not_kept`. An application takes a bounded number of ' +
      'keys a day; past it a new key is 429 `idempotency_keys_exhausted`.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  };
}
