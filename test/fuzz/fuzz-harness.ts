import { existsSync, writeFileSync } from 'node:fs';
import { bodyOfShape, bodyOverValues, limitOf } from './limit-bodies';
import { join, sep } from 'node:path';
import { Logger } from '@nestjs/common';
import fc from 'fast-check';
import {
  applyMutation,
  BodyPlan,
  encodeQueryValue,
  FuzzCase,
  fuzzCase,
  fromPlain,
  IdPlan,
  percentEncode,
  QueryPlan,
  QueryValue,
  serialize,
  tweakText,
} from './arbitraries';
import { FuzzContext } from './fuzz-context';
import { RawOutcome, RawRequest, sendRaw } from './raw-http';
import { FuzzRoute, FuzzTargets, paramNames, routeName } from './route-catalogue';

/** The spec's error families: every error body names one of them. */
export const ERROR_NAMES = new Set([
  'bad_request_error',
  'invalid_request_error',
  'authentication_error',
  'forbidden_error',
  'not_found_error',
  'conflict_error',
  'unprocessable_request_error',
  'rate_limit_error',
  'server_error',
  'provider_error',
]);

export const API_VERSION = '2020-09-17';
const NIL_ID = '00000000-0000-4000-8000-000000000000';

// ---------------------------------------------------------------------------------------------
// From a case to bytes

export interface BuiltRequest {
  raw: RawRequest;
  /** One line for a report: method, target, the headers that matter, the body's start. */
  summary: string;
}

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`);
const printable = (text: string) => JSON.stringify(text).slice(1, -1);

function idSegment(plan: IdPlan, real: string[]): string {
  const pick = (n: number) => (real.length === 0 ? NIL_ID : real[n % real.length]);
  switch (plan.kind) {
    case 'real':
      return percentEncode(pick(plan.pick));
    case 'upper':
      return percentEncode(pick(plan.pick).toUpperCase());
    case 'uuid':
      return plan.uuid;
    case 'text':
      return percentEncode(plan.value);
    case 'raw':
      return plan.value;
    case 'long':
      return percentEncode(plan.unit).repeat(plan.length);
  }
}

function pathOf(route: FuzzRoute, c: FuzzCase, t: FuzzTargets): string {
  const template = c.shape === 'upper-case' ? route.path.toUpperCase() : route.path;
  let i = 0;
  const names = paramNames(route.path);
  let path = template.replace(/:[A-Za-z0-9_]+|\*/gi, () => {
    const name = names[i];
    return idSegment(c.ids[i++], route.ids?.[name]?.(t) ?? []);
  });
  switch (c.shape) {
    case 'trailing-slash':
      path += '/';
      break;
    case 'double-slash':
      path = `/${path}`;
      break;
    case 'dot-segment':
      path = path.replace(/^\/([^/]*)/, '/$1/.');
      break;
    case 'matrix':
      path += ';x=1';
      break;
    case 'fragment':
      path += '#frag';
      break;
  }
  return path;
}

/** Query or form text: the valid parameters changed as planned, percent-encoded unless raw. */
export function queryText(valid: [string, string][], plan: QueryPlan): string {
  if (plan.kind === 'raw') return plan.text;
  if (plan.kind === 'huge') return `q=${'a'.repeat(plan.length)}`;
  const pairs: [QueryValue, QueryValue][] = valid.map(([k, v]) => [k, v]);
  if (plan.kind === 'edited') {
    for (const edit of plan.edits) {
      const at = pairs.length === 0 ? -1 : ('at' in edit ? edit.at : 0) % pairs.length;
      if (edit.kind === 'add') pairs.push([edit.key, edit.value]);
      else if (at < 0) pairs.push(['x', edit.kind === 'set' || edit.kind === 'repeat' ? edit.value : '']);
      else if (edit.kind === 'set') pairs[at] = [pairs[at][0], edit.value];
      else if (edit.kind === 'tweak') {
        const [key, value] = pairs[at];
        pairs[at] = [key, typeof value === 'string' ? tweakText(value, edit.how) : value];
      }
      else if (edit.kind === 'remove') pairs.splice(at, 1);
      else pairs.push([pairs[at][0], edit.value]);
    }
  }
  return pairs.map(([k, v]) => `${encodeQueryValue(k)}=${encodeQueryValue(v)}`).join('&');
}

const formPairs = (valid: unknown): [string, string][] =>
  Object.entries((valid ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);

function bodyOf(context: FuzzContext, route: FuzzRoute, plan: BodyPlan, t: FuzzTargets): Buffer | undefined {
  const valid = () => route.valid?.(t) ?? {};
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'valid':
      return route.body === 'form' ? Buffer.from(queryText(formPairs(valid()), { kind: 'valid' }), 'latin1') : Buffer.from(serialize(fromPlain(valid())));
    case 'mutated':
      return Buffer.from(serialize(plan.mutations.reduce(applyMutation, fromPlain(valid()))));
    case 'replaced':
      return Buffer.from(serialize(plan.value));
    case 'text':
      return Buffer.from(plan.text);
    case 'bytes':
      return Buffer.from(plan.bytes, 'latin1');
    case 'oversized':
      return Buffer.from(`{"a":"${'x'.repeat(limitOf(route).bytes + plan.extraBytes)}"}`);
    case 'at-limit':
      return bodyOfShape(plan.shape, limitOf(route).bytes);
    case 'over-values':
      return bodyOverValues(limitOf(route), plan.extraValues) ?? bodyOfShape('0', limitOf(route).bytes + 1);
    case 'form':
      return Buffer.from(queryText(formPairs(valid()), plan.plan), 'latin1');
  }
}

function authorizationOf(context: FuzzContext, route: FuzzRoute, c: FuzzCase, t: FuzzTargets): string | undefined {
  const bearerToken = `Bearer ${t.employer.token}`;
  const ownBasic = route.auth === 'ops' ? context.opsAuthorization : context.applicationAuthorization;
  const plan = c.headers.auth;
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'right':
      return route.auth === 'bearer' ? bearerToken : route.auth === 'application' ? context.applicationAuthorization : route.auth === 'ops' ? context.opsAuthorization : undefined;
    case 'other':
      return route.auth === 'bearer' ? context.opsAuthorization : route.auth === 'ops' ? context.applicationAuthorization : bearerToken;
    case 'revoked':
      if (route.auth === 'ops') return `Basic ${Buffer.from('ops:wrong-password').toString('base64')}`;
      if (route.auth === 'application') return `Basic ${Buffer.from(`${context.application.client_id}:wrong-secret-${'x'.repeat(20)}`).toString('base64')}`;
      return `Bearer ${context.revokedToken}`;
    case 'raw':
      return plan.value.replace(/\{token\}/g, t.employer.token).replace(/\{basic\}/g, ownBasic.slice('Basic '.length));
  }
}

export function buildRequest(context: FuzzContext, route: FuzzRoute, c: FuzzCase): BuiltRequest {
  const t = context.targets(route, c.employer);
  const method = c.method.kind === 'route' ? route.method : c.method.kind === 'head' ? (route.method === 'GET' ? 'HEAD' : route.method) : c.method.method;
  const query = queryText(route.query?.(t) ?? [], c.query);
  const target = `${pathOf(route, c, t)}${query === '' ? '' : `?${query}`}`;
  const body = bodyOf(context, route, c.body, t);

  const headers: [string, string][] = [['host', `${context.host}:${context.port}`], ['connection', 'close']];
  const authorization = authorizationOf(context, route, c, t);
  if (authorization !== undefined) headers.push(['authorization', authorization]);
  const version = c.headers.version;
  if (version.kind === 'right') headers.push(['service-api-version', API_VERSION]);
  else if (version.kind === 'value') headers.push(['service-api-version', version.value]);
  const contentType = c.headers.contentType;
  if (contentType.kind === 'value') headers.push(['content-type', contentType.value]);
  else if (contentType.kind === 'right' && body !== undefined) {
    headers.push(['content-type', c.body.kind === 'form' || (route.body === 'form' && c.body.kind === 'valid') ? 'application/x-www-form-urlencoded' : 'application/json']);
  }
  headers.push(...c.headers.extras);
  if (body !== undefined) headers.push(['content-length', String(body.length)]);

  const shown = headers
    .filter(([name]) => name !== 'host' && name !== 'connection' && name !== 'content-length')
    .map(([name, value]) => `${printable(clip(name, 40))}: ${printable(clip(value, 80))}`)
    .join(' | ');
  const summary = `${method} ${printable(clip(target, 200))} [${shown}] body=${body === undefined ? '-' : printable(clip(body.toString('latin1'), 240))}`;
  return { raw: { method, target, headers, body }, summary };
}

// ---------------------------------------------------------------------------------------------
// The property

export interface Violation {
  status: number | 'none';
  /** Groups failures of one cause: the status and what went wrong, without ids and input. */
  signature: string;
  answer: string;
  requestId?: string;
}

const normalize = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/\d+/g, '<n>')
    .slice(0, 240);

/**
 * Every answer is below 500 and, from 400 on, the spec's error object as JSON: `code` (the
 * status), `name` (a family), `message`, optional `service_code`. Routes for people (the connect
 * page) may answer with an HTML page instead.
 */
export function checkAnswer(route: Pick<FuzzRoute, 'errors'>, method: string, outcome: RawOutcome): Violation | undefined {
  if ('error' in outcome) return { status: 'none', signature: `no answer: ${normalize(outcome.error)}`, answer: outcome.error };
  const { status, headers, text } = outcome.response;
  const contentType = headers['content-type'] ?? '';
  const answer = `${status} ${contentType} ${clip(text, 300)}`;
  const requestId = headers['x-request-id'];
  if (status >= 500) return { status, signature: `${status}`, answer, requestId };
  if (status < 400) return undefined;
  if (route.errors === 'html' && /^text\/html/.test(contentType)) return undefined;
  const notTheErrorObject = (why: string): Violation => ({
    status,
    signature: `${status} not the error object (${why}): ${normalize(`${contentType} ${text.slice(0, 120)}`)}`,
    answer,
    requestId,
  });
  if (!/^application\/json/.test(contentType)) return notTheErrorObject('content type');
  if (method === 'HEAD' || outcome.response.truncated) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return notTheErrorObject('not JSON');
  }
  const e = body as Record<string, unknown>;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return notTheErrorObject('not an object');
  if (e.code !== status) return notTheErrorObject('code is not the status');
  if (typeof e.name !== 'string' || !ERROR_NAMES.has(e.name)) return notTheErrorObject('name is not an error family');
  if (typeof e.message !== 'string' || e.message === '') return notTheErrorObject('no message');
  if (e.service_code !== undefined && typeof e.service_code !== 'string') return notTheErrorObject('service_code is not a string');
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// What the service logged about a request it failed

/** What the service logged about an unexpected error: its message, and a key naming its cause. */
export interface LoggedError {
  /** `Error: message @ where`, for the report. */
  text: string;
  /** The error's class, PostgreSQL's error code if any, and where it was thrown: no input in it. */
  cause: string;
}

/**
 * The error filters log an unexpected error with the request id before they answer 500; this
 * keeps the error's message and where it was thrown, by request id, to name a failure's cause.
 */
export class ServerErrorLog {
  private readonly byRequest = new Map<string, LoggedError>();
  private spy?: jest.SpyInstance;

  start(): void {
    const original = Logger.prototype.error as (...args: unknown[]) => void;
    const byRequest = this.byRequest;
    this.spy = jest.spyOn(Logger.prototype, 'error').mockImplementation(function (this: Logger, ...args: unknown[]) {
      const fields = args[0] as { reqId?: unknown; err?: unknown } | undefined;
      if (fields && typeof fields === 'object' && typeof fields.reqId === 'string') {
        if (byRequest.size > 10_000) byRequest.clear();
        byRequest.set(fields.reqId, describeError(fields.err, args[1]));
      }
      return original.apply(this, args);
    } as never);
  }

  take(requestId: string | undefined): LoggedError | undefined {
    if (requestId === undefined) return undefined;
    const logged = this.byRequest.get(requestId);
    this.byRequest.delete(requestId);
    return logged;
  }

  stop(): void {
    this.spy?.mockRestore();
  }
}

const OWN_SOURCES = join(process.cwd(), 'src') + sep;
const existing = new Map<string, boolean>();

/** A frame in the service's own code (libraries' source maps may point at src/ paths that do not exist here). */
function isOwnFrame(frame: string): boolean {
  const file = /\(?([^\s()]+?):\d+:\d+\)?$/.exec(frame)?.[1];
  if (file === undefined || !file.startsWith(OWN_SOURCES)) return false;
  if (!existing.has(file)) existing.set(file, existsSync(file));
  return existing.get(file)!;
}

function describeError(error: unknown, stack: unknown): LoggedError {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : typeof stack === 'string' ? stack : String(error);
  const lines = text.split('\n');
  const frames = lines.filter((l) => /^\s+at /.test(l)).map((l) => l.trim().replace(/^at /, ''));
  const headline = lines.filter((l) => !/^\s+at /.test(l)).join(' ').trim();
  // The service's own frame names the cause best; a library's first frame otherwise.
  const frame = frames.find(isOwnFrame) ?? frames[0];
  const where = frame?.replace(/^.*?\(?\/[^\s]*?\/(src|node_modules)\//, '$1/').replace(/:\d+\)?$/, '');
  const name = error instanceof Error ? error.name : 'Error';
  const code = (error as { code?: unknown; driverError?: { code?: unknown } } | undefined)?.driverError?.code ?? (error as { code?: unknown } | undefined)?.code;
  return {
    text: `${clip(headline, 200)}${where ? ` @ ${where}` : ''}`,
    cause: `${name}${typeof code === 'string' ? ` ${code}` : ''}${where ? ` @ ${where}` : ''}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Failures, grouped by cause, each with what reproduces it

export interface Failure {
  route: string;
  status: number | 'none';
  signature: string;
  seed: number;
  path: string;
  request: string;
  answer: string;
  serverError?: string;
}

export class FailureLog {
  readonly all: Failure[] = [];

  record(failure: Failure): void {
    this.all.push(failure);
  }

  of(route: string): Failure[] {
    return this.all.filter((f) => f.route === route);
  }

  /** One block per distinct cause: how often, one example, and the command that replays it. */
  static report(failures: Failure[], specPath: string): string {
    const groups = new Map<string, Failure[]>();
    for (const f of failures) groups.set(`${f.route}\n${f.signature}`, [...(groups.get(`${f.route}\n${f.signature}`) ?? []), f]);
    return [...groups.values()]
      .map((group) => {
        const f = group[0];
        return [
          `${f.route}: ${f.signature}${f.serverError ? `\n    logged: ${f.serverError}` : ''}`,
          `    ${group.length} case(s); e.g. ${f.request}`,
          `    answer: ${f.answer}`,
          `    replay: FUZZ_SEED=${f.seed} FUZZ_PATH=${f.path} FUZZ_ROUTE='${f.route}' TEST_LOG_LEVEL=error node test/run-tests.js ${specPath}`,
        ].join('\n');
      })
      .join('\n\n');
  }

  write(file: string): void {
    writeFileSync(file, JSON.stringify(this.all, null, 2));
  }
}

// ---------------------------------------------------------------------------------------------
// Running a route

export interface FuzzSettings {
  seed: number;
  /** Cases per route. */
  runs: number;
  /** Replays one case (with `seed`): the property then throws, so fast-check prints the counterexample. */
  path?: string;
  /** Shrink a replayed failure to a smaller one. */
  shrink: boolean;
  /** Only routes whose "METHOD /path" contains this. */
  route?: string;
  report?: string;
  /** Print how each route answered (statuses by count), to see how much reaches the handlers. */
  stats: boolean;
}

/** FUZZ_RUNS (total cases, default 5,000), FUZZ_SEED, FUZZ_PATH, FUZZ_SHRINK, FUZZ_ROUTE, FUZZ_REPORT, FUZZ_STATS. */
export function fuzzSettings(routeCount: number): FuzzSettings & { total: number } {
  const total = Number(process.env.FUZZ_RUNS || 5_000);
  if (!Number.isInteger(total) || total < 1) throw new Error(`FUZZ_RUNS must be a positive whole number, not ${process.env.FUZZ_RUNS}`);
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be a whole number, not ${process.env.FUZZ_SEED}`);
  return {
    seed,
    total,
    runs: Math.max(10, Math.ceil(total / routeCount)),
    path: process.env.FUZZ_PATH || undefined,
    shrink: /^(1|true|yes)$/i.test(process.env.FUZZ_SHRINK ?? ''),
    route: process.env.FUZZ_ROUTE || undefined,
    report: process.env.FUZZ_REPORT || undefined,
    stats: /^(1|true|yes)$/i.test(process.env.FUZZ_STATS ?? ''),
  };
}

/** Each route draws its own cases from the run's seed (else every route would get the same plans). */
export function routeSeed(seed: number, route: string): number {
  let hash = 0x811c9dc5;
  for (const char of route) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return ((hash ^ seed) >>> 0) & 0x7fffffff;
}

/** Checks readiness every this many cases. */
const READY_EVERY = 25;
let casesSinceReadyCheck = 0;

export async function readiness(context: FuzzContext): Promise<Failure | undefined> {
  const res = await context.service.request('/health/ready').catch((error: Error) => ({ status: 0, text: error.message }));
  if (res.status === 200) return undefined;
  return { route: 'GET /health/ready', status: res.status || 'none', signature: `not ready: ${res.status}`, seed: 0, path: '', request: 'GET /health/ready', answer: res.text.slice(0, 300) };
}

/**
 * Runs `settings.runs` generated cases against one route over real HTTP. Every violation is
 * recorded (the run goes on, so one run finds every cause it meets) with the seed and path that
 * replay it; a replay throws instead, for fast-check to print (and, with FUZZ_SHRINK, shrink).
 */
export async function fuzzRoute(
  context: FuzzContext,
  route: FuzzRoute,
  settings: FuzzSettings,
  failures: FailureLog,
  serverErrors: ServerErrorLog,
): Promise<Map<string, number>> {
  const name = routeName(route);
  const seed = routeSeed(settings.seed, name);
  const statuses = new Map<string, number>();
  let runIndex = 0;
  const property = fc.asyncProperty(fuzzCase(paramNames(route.path).length, route.body, route.query !== undefined), async (c) => {
    const index = runIndex++;
    const built = buildRequest(context, route, c);
    const outcome = await sendRaw(context.host, context.port, built.raw);
    const violation = checkAnswer(route, built.raw.method, outcome);
    const status = 'response' in outcome ? String(outcome.response.status) : 'none';
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (route.disposable) await context.renewDisposableIfUsed();
    if (++casesSinceReadyCheck >= READY_EVERY) {
      casesSinceReadyCheck = 0;
      const notReady = await readiness(context);
      if (notReady) failures.record({ ...notReady, route: name, seed: settings.seed, path: settings.path ?? String(index), request: `after ${built.summary}` });
    }
    if (!violation) return;
    const failure: Failure = {
      route: name,
      status: violation.status,
      signature: violation.signature,
      seed: settings.seed,
      path: settings.path ?? String(index),
      request: built.summary,
      answer: violation.answer,
    };
    const logged = violation.status === 'none' || violation.status < 500 ? undefined : serverErrors.take(violation.requestId);
    if (logged) {
      failure.serverError = logged.text;
      failure.signature = `${failure.signature} ${logged.cause}`;
    }
    if (settings.path !== undefined) throw new Error(`${failure.signature}\n  request: ${failure.request}\n  answer: ${failure.answer}\n  logged: ${failure.serverError ?? '-'}`);
    failures.record(failure);
  });
  await fc.assert(property, { seed, numRuns: settings.path === undefined ? settings.runs : 1, path: settings.path, endOnFailure: !settings.shrink });
  return statuses;
}
