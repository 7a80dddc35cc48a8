import { Json, PublicResponseValidator, toJsonSchema } from './public-openapi';

/*
 * The deviations from the public OpenAPI document that the contract decides, and the validator
 * that applies them: shared by the public-API conformance suites (the sandbox's,
 * test/e2e/public-api-conformance.e2e-spec.ts, which also holds the list to account, and
 * Gusto's, test/e2e/gusto-conformance.e2e-spec.ts).
 */

export interface Deviation {
  /** What the service does instead of the public document. */
  id: string;
  /** The rule of the contract that decides it. */
  rule: string;
  /** Edits the (JSON Schema) public document into what the contract decides. */
  apply(document: Json): void;
  /** Status deviations: status answered → status documented, per operation. */
  statuses?: Record<string, Record<number, number>>;
  /** Not decided by the contract, but waiting on work elsewhere: why, and what removes it. */
  pending?: string;
}

const schemas = (document: Json) => document.components.schemas as Record<string, Json>;
const responseSchema = (document: Json, operation: string, status: string) => {
  const [method, path] = operation.split(' ');
  return document.paths[path][method.toLowerCase()].responses[status].content['application/json'].schema;
};

/** Every schema object of the document, depth first. */
export function eachSchema(node: Json, visit: (schema: Json) => void): void {
  if (Array.isArray(node)) return node.forEach((item) => eachSchema(item, visit));
  if (node === null || typeof node !== 'object') return;
  visit(node);
  for (const value of Object.values(node)) eachSchema(value, visit);
}

export const DEVIATIONS: Deviation[] = [
  {
    id: 'error-service-code',
    rule:
      'unified-api.md "Error object" and "Errors": the machine code is `service_code`, absent on some errors ' +
      '(the public document calls it `finch_code`)',
    apply: (document) =>
      eachSchema(document, (schema) => {
        if (!schema.properties?.finch_code) return;
        const { finch_code: serviceCode, ...others } = schema.properties;
        schema.properties = { ...others, service_code: serviceCode };
        if (Array.isArray(schema.required)) schema.required = schema.required.filter((name: string) => name !== 'finch_code');
      }),
  },
  {
    id: 'error-object',
    rule:
      'unified-api.md "Errors" and DECISIONS.md "Other errors": every error body is the error object `{code, name, ' +
      'service_code?, message}`; the public `ErrorResponse` (`statusCode`, `status`) of the job and disconnect operations is not used',
    apply: (document) => {
      schemas(document).ErrorResponse = { $ref: '#/components/schemas/Error' };
      for (const status of ['401', '404']) document.paths['/jobs/automated'].get.responses[status].content['application/json'].schema = { $ref: '#/components/schemas/Error' };
    },
  },
  {
    id: 'benefit-create-status-200',
    rule: 'unified-api.md "Create a deduction" and "Register a deduction" (Response 200) and DECISIONS.md "Status codes"; the public document answers 201',
    apply: () => undefined,
    statuses: { 'POST /employer/benefits': { 200: 201 }, 'POST /employer/benefits/register': { 200: 201 } },
  },
  {
    id: 'benefit-job-types',
    rule: 'DECISIONS.md "Jobs": automated jobs also have the types benefit_create, benefit_register, benefit_update, benefit_enroll, benefit_unenroll',
    apply: (document) => {
      const type = schemas(document).AutomatedAsyncJob.properties.type;
      type.enum = [...type.enum, 'benefit_create', 'benefit_register', 'benefit_update', 'benefit_enroll', 'benefit_unenroll'];
    },
  },
  {
    id: 'opaque-access-token',
    rule:
      'DECISIONS.md "Tokens": access tokens are opaque (256 random bits here, not a UUID); the public document gives ' +
      '`access_token` the format uuid on POST /sandbox/connections/accounts only',
    apply: (document) => {
      delete responseSchema(document, 'POST /sandbox/connections/accounts', '200').properties.access_token.format;
    },
  },
];

/** The public document as JSON Schema, with `deviations` applied: what responses are validated against. */
export function publicValidatorWith(publicDocument: Json, deviations: Deviation[]): PublicResponseValidator {
  const document = toJsonSchema(publicDocument);
  for (const deviation of deviations) deviation.apply(document);
  const statuses: Record<string, Record<number, number>> = {};
  for (const deviation of deviations) {
    for (const [operation, map] of Object.entries(deviation.statuses ?? {})) statuses[operation] = { ...statuses[operation], ...map };
  }
  return new PublicResponseValidator(document, statuses);
}
