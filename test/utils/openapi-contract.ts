import { readFileSync } from 'node:fs';
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { load as loadYaml } from 'js-yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface ContractRequest {
  method: string;
  /** The concrete path, without the query string, e.g. /v1/companies/7f1…/company_benefits */
  path: string;
  query?: Record<string, string | string[] | undefined>;
  /** Names in any case. */
  headers?: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or undefined when none was sent. */
  body?: unknown;
  /** The body's media type, when one was sent. */
  contentType?: string;
}

export interface MatchedOperation {
  /** `METHOD /template` as the document writes it. */
  name: string;
  template: string;
  pathParams: Record<string, string>;
}

/**
 * A provider's OpenAPI 3.1 document as a contract both sides of a test are held to: every
 * request a fake provider receives and every answer it gives is checked against the operation
 * the document defines for it (parameters, request body, documented statuses, response bodies,
 * as JSON Schema 2020-12 with the document's formats). A request to an operation the document
 * does not have, or an undocumented status, is itself a violation.
 *
 * One normalisation, written down because the document leaves it open: a schema whose `type`
 * admits null but whose `enum` lists no null (`type: [string, 'null']`, `enum: [elective,
 * deemed]`) accepts null, as its type says; JSON Schema alone would refuse it.
 */
export class OpenApiContract {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp; names: string[]; literals: number }[];

  constructor(
    readonly document: Json,
    private readonly id = 'contract',
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(nullableEnums(document), id);
    this.templates = Object.keys(document.paths ?? {})
      .map((template) => {
        const names: string[] = [];
        const source = template
          .split('/')
          .map((segment) => segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}/g, (_m, name: string) => (names.push(name), '([^/]+)')))
          .join('/');
        return { template, pattern: new RegExp(`^${source}$`), names, literals: template.split('/').filter((s) => s && !s.includes('{')).length };
      })
      // A literal segment wins over a parameter: /pay_schedules/preview before /pay_schedules/{id}.
      .sort((a, b) => b.literals - a.literals);
  }

  static fromFile(file: string, id?: string): OpenApiContract {
    const text = readFileSync(file, 'utf8');
    return new OpenApiContract(file.endsWith('.json') ? JSON.parse(text) : loadYaml(text), id);
  }

  /** The document's operation for a method and a concrete path, or undefined. */
  match(method: string, path: string): MatchedOperation | undefined {
    const verb = method.toLowerCase();
    for (const { template, pattern, names } of this.templates) {
      const found = pattern.exec(path);
      if (!found || !this.document.paths[template][verb]) continue;
      const pathParams = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1])]));
      return { name: `${method.toUpperCase()} ${template}`, template, pathParams };
    }
    return undefined;
  }

  /** What is wrong with a request, by the document: an empty list when nothing is. */
  checkRequest(request: ContractRequest): string[] {
    const matched = this.match(request.method, request.path);
    if (!matched) return [`${request.method.toUpperCase()} ${request.path} is not an operation of the document`];
    const verb = request.method.toLowerCase();
    const item = this.document.paths[matched.template];
    const operation = item[verb];
    const problems: string[] = [];
    const parameters: Json[] = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p) => this.resolve(p));
    const headers = lowerCased(request.headers ?? {});
    parameters.forEach((parameter) => {
      const raw =
        parameter.in === 'path'
          ? matched.pathParams[parameter.name]
          : parameter.in === 'query'
            ? request.query?.[parameter.name]
            : parameter.in === 'header'
              ? headers[parameter.name.toLowerCase()]
              : undefined;
      if (raw === undefined) {
        if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is required`);
        return;
      }
      if (!parameter.schema) return;
      const value = coerce(raw, parameter.schema);
      const validate = this.validator(this.pointerOf(parameter.schema, `${matched.name} ${parameter.in} ${parameter.name}`), parameter.schema);
      if (!validate(value)) problems.push(...summarize(validate.errors ?? [], `${parameter.in} parameter ${parameter.name}`));
    });
    const requestBody = operation.requestBody ? this.resolve(operation.requestBody) : undefined;
    if (request.body === undefined) {
      if (requestBody?.required) problems.push('a request body is required');
      return problems;
    }
    if (!requestBody) return [...problems, `${matched.name} takes no request body`];
    const media = (request.contentType ?? 'application/json').split(';')[0].trim().toLowerCase();
    const content = requestBody.content?.[media];
    if (!content) return [...problems, `${matched.name} takes no ${media} body (documented: ${Object.keys(requestBody.content ?? {}).join(', ')})`];
    if (content.schema) {
      const validate = this.validator(`${matched.name} body ${media}`, content.schema);
      if (!validate(request.body)) problems.push(...summarize(validate.errors ?? [], 'body'));
    }
    return problems;
  }

  /** What is wrong with an answer to `operation` (`METHOD /template`), by the document. */
  checkResponse(operation: string, status: number, body: unknown): string[] {
    const [method, template] = operation.split(' ');
    const op = this.document.paths?.[template]?.[method.toLowerCase()];
    if (!op) return [`${operation} is not an operation of the document`];
    const documented = op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`] ?? op.responses?.default;
    if (!documented) return [`${operation} does not document status ${status} (documented: ${Object.keys(op.responses ?? {}).join(', ')})`];
    const response = this.resolve(documented);
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return body === undefined || body === '' || body === null ? [] : [`${operation} ${status} documents no JSON body`];
    const validate = this.validator(`${operation} ${status} response`, schema);
    return validate(body) ? [] : summarize(validate.errors ?? [], 'response');
  }

  /** An OpenAPI object (parameter, request body, response) with its `$ref` followed. */
  resolve(node: Json): Json {
    let current = node;
    for (let hops = 0; current?.$ref && hops < 10; hops++) current = this.at(current.$ref);
    return current;
  }

  private at(ref: string): Json {
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: Json, key) => node?.[key], this.document);
  }

  private pointerOf(schema: Json, key: string): string {
    return schema.$ref ? `ref:${schema.$ref}` : key;
  }

  /** A compiled validator, cached by key; a schema's `$ref`s resolve within the document. */
  private validator(key: string, schema?: Json): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      const target = key.startsWith('ref:') ? { $ref: `${this.id}${key.slice(4)}` } : withDocumentRefs(nullableEnums(schema), this.id);
      validate = this.ajv.compile(target);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

/** The document with every `enum` of a null-admitting type made to admit null too. */
function nullableEnums(node: Json): Json {
  if (Array.isArray(node)) return node.map(nullableEnums);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = nullableEnums(value);
  if (Array.isArray(out.enum) && Array.isArray(out.type) && out.type.includes('null') && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/** An inline schema whose `$ref`s (`#/components/…`) point into the registered document. */
function withDocumentRefs(node: Json, id: string): Json {
  if (Array.isArray(node)) return node.map((item) => withDocumentRefs(item, id));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${id}${value}` : withDocumentRefs(value, id);
  return out;
}

function lowerCased(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** A query, path or header value (text) as the schema's type reads it. */
function coerce(raw: string | string[], schema: Json): unknown {
  if (Array.isArray(raw)) return schema.type === 'array' ? raw : raw[raw.length - 1];
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'integer' || type === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (type === 'array') return raw.split(',');
  return raw;
}

function summarize(errors: ErrorObject[], where: string): string[] {
  const lines = errors.map(
    (e) =>
      `${where}${e.instancePath} ${e.message}${['enum', 'const', 'additionalProperties', 'required'].includes(e.keyword) ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
  return [...new Set(lines)];
}

