import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * The public OpenAPI document of this API family (test/fixtures/public-openapi.json, a copy of
 * the document its official client SDKs are generated from), turned into JSON Schema that ajv
 * validates response bodies against.
 *
 * The document says 3.1 but marks null the OpenAPI 3.0 way (`nullable: true`), which JSON
 * Schema does not know; `toJsonSchema` rewrites it into `null` types. A bare `{ nullable: true }`
 * is "any value" where it stands alone and "null" where it is a branch of `oneOf`/`anyOf` (as in
 * `CompanyContribution`), else a fixed contribution would match two branches of a `oneOf`.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export const PUBLIC_DOCUMENT_PATH = path.join(__dirname, '..', 'fixtures', 'public-openapi.json');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export function loadPublicDocument(): Json {
  return JSON.parse(readFileSync(PUBLIC_DOCUMENT_PATH, 'utf8'));
}

/** `METHOD /path` of every operation of the document. */
export function operationsOf(document: Json): string[] {
  return Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${p}`),
  );
}

/** A deep copy with OpenAPI's `nullable` rewritten as JSON Schema. */
export function toJsonSchema(node: Json, branch = false): Json {
  if (Array.isArray(node)) return node.map((item) => toJsonSchema(item, false));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable') continue;
    const branches = (key === 'oneOf' || key === 'anyOf') && Array.isArray(value);
    out[key] = branches ? (value as Json[]).map((item) => toJsonSchema(item, true)) : toJsonSchema(value);
  }
  if (node.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  if (Array.isArray(out.type)) {
    if (!out.type.includes('null')) out.type = [...out.type, 'null'];
    return out;
  }
  if ('$ref' in out || 'allOf' in out || 'anyOf' in out || 'oneOf' in out) return { anyOf: [out, { type: 'null' }] };
  if (Array.isArray(out.enum)) return { ...out, enum: out.enum.includes(null) ? out.enum : [...out.enum, null] };
  const constraining = Object.keys(out).filter((k) => !['description', 'title', 'example', 'examples', 'deprecated'].includes(k));
  if (constraining.length === 0) return branch ? { type: 'null' } : out;
  return out;
}

export interface ResponseCheck {
  /** `METHOD /path` with the document's path template. */
  operation: string;
  status: number;
  /** The documented status whose schema the body was checked against (a status deviation maps it). */
  schemaStatus: string | null;
  errors: string[];
}

/**
 * Validates response bodies against the response schema the document gives the operation and
 * status. An error status (4xx, 5xx) that the operation does not document is checked against the
 * document's generic `Error` schema; any other undocumented status is itself a failure.
 */
export class PublicResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    readonly document: Json,
    /** status answered → status documented, per operation (the decided status deviations). */
    private readonly statusMap: Record<string, Record<number, number>> = {},
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'public');
  }

  check(operation: string, status: number, body: unknown): ResponseCheck {
    const [method, template] = operation.split(' ');
    const op = this.document.paths?.[template]?.[method.toLowerCase()];
    if (!op) return { operation, status, schemaStatus: null, errors: [`${operation} is not an operation of the public document`] };
    const mapped = this.statusMap[operation]?.[status] ?? status;
    let schemaPointer: string | null = null;
    let schemaStatus: string | null = null;
    if (op.responses?.[String(mapped)]) {
      schemaStatus = String(mapped);
      const response = op.responses[schemaStatus];
      if (response.content?.['application/json']?.schema) {
        schemaPointer = `#/paths/${encodeURIComponent(escape(template))}/${method.toLowerCase()}/responses/${schemaStatus}/content/application~1json/schema`;
      }
    } else if (status >= 400) {
      schemaStatus = 'Error';
      schemaPointer = '#/components/schemas/Error';
    } else {
      return { operation, status, schemaStatus: null, errors: [`status ${status} is not documented (documented: ${Object.keys(op.responses ?? {}).join(', ')})`] };
    }
    if (schemaPointer === null) return { operation, status, schemaStatus, errors: [] };
    const validate = this.validator(schemaPointer);
    const valid = validate(body);
    return { operation, status, schemaStatus, errors: valid ? [] : summarize(validate.errors ?? []) };
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `public${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** One line per error, without the noise of every failed branch of a `oneOf`/`anyOf` repeated. */
function summarize(errors: ErrorObject[]): string[] {
  const lines = errors.map((e) => `${e.instancePath || '(body)'} ${e.message}${e.keyword === 'enum' || e.keyword === 'const' ? ` ${JSON.stringify(e.params)}` : ''}${e.keyword === 'additionalProperties' ? ` ${JSON.stringify(e.params)}` : ''} [${e.schemaPath}]`);
  return [...new Set(lines)];
}
