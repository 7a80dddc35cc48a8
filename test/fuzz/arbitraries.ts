import fc from 'fast-check';
import { LIMIT_SHAPES, LimitShape } from './limit-bodies';

/*
 * Hostile inputs for every part of a request: JSON values (wrong types, null, deep nesting,
 * huge strings and numbers, NUL, lone surrogates, unknown and prototype keys), query strings,
 * path ids, headers and methods. A case is a plan of how to spoil a valid-ish request; the
 * harness applies it to a route's valid request (test/fuzz/fuzz-harness.ts).
 */

// ---------------------------------------------------------------------------------------------
// JSON model: what JSON.stringify cannot write (duplicate and `__proto__` keys, 1e400, 10,000
// levels of nesting) is kept as written, and large values print as a short label.

/** JSON text sent verbatim, shown by its label. */
export class RawJson {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}

  [fc.toStringMethod](): string {
    return `raw(${this.label})`;
  }
}

/** A JSON object as its members in order, so `__proto__`, `constructor` and repeated keys stay as written. */
export class JsonObject {
  constructor(readonly members: [string, Json][]) {}

  [fc.toStringMethod](): string {
    return `{${this.members.map(([key, value]) => `${JSON.stringify(key)}:${fc.stringify(value)}`).join(',')}}`;
  }
}

export type Json = null | boolean | number | string | Json[] | JsonObject | RawJson;

/** A plain value (a route's valid body) in the model. */
export function fromPlain(value: unknown): Json {
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(fromPlain);
  if (typeof value === 'object') return new JsonObject(Object.entries(value as object).map(([k, v]) => [k, fromPlain(v)]));
  return null;
}

/** JSON text of a model value; strings go through JSON.stringify, which escapes NUL and lone surrogates. */
export function serialize(value: Json): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonObject) return `{${value.members.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  return JSON.stringify(value) ?? 'null';
}

type PathStep = string | number;

/** Every node's path, the root's ([]) first; raw JSON is a leaf. */
export function nodePaths(value: Json, at: PathStep[] = [], into: PathStep[][] = []): PathStep[][] {
  into.push(at);
  if (value instanceof JsonObject) value.members.forEach(([, v], i) => nodePaths(v, [...at, i], into));
  else if (Array.isArray(value)) value.forEach((v, i) => nodePaths(v, [...at, i], into));
  return into;
}

function nodeAt(value: Json, path: PathStep[]): Json {
  let node = value;
  for (const step of path) node = node instanceof JsonObject ? node.members[step as number][1] : (node as Json[])[step as number];
  return node;
}

/** `value` with the node at `path` replaced by `change(node)`; `undefined` removes it. Objects are addressed by member index. */
function updateAt(value: Json, path: PathStep[], change: (node: Json) => Json | undefined): Json | undefined {
  if (path.length === 0) return change(value);
  const [step, ...rest] = path as number[];
  if (value instanceof JsonObject) {
    const members = value.members.flatMap(([k, v], i): [string, Json][] => {
      if (i !== step) return [[k, v]];
      const next = updateAt(v, rest, change);
      return next === undefined ? [] : [[k, next]];
    });
    return new JsonObject(members);
  }
  if (Array.isArray(value)) {
    return value.flatMap((v, i) => {
      if (i !== step) return [v];
      const next = updateAt(v, rest, change);
      return next === undefined ? [] : [next];
    });
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Hostile scalars

/** Strings that have broken services before: NUL, lone surrogates, formats that almost parse. */
const SPECIAL_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'a\udc00b', 'x\ud83d', '\ud83d\ude00', '\uffff', '\ufffe', '\ufeff', '\u202e',
  '\r\n', '\t', '%00', '%ff%fe', '../../etc/passwd', "' OR '1'='1", '"; DROP TABLE jobs; --', '${jndi:ldap://x}', '{{7*7}}',
  '<script>alert(1)</script>', 'null', 'undefined', 'true', 'false', '0', '-1', '1e20', '-1e20', 'NaN', 'Infinity', '0x10',
  ' 1', '2026-02-30', '0000-00-00', '9999-12-31', '2026-07-01T25:61:00Z', '+275760-09-13', '12/31/2026', '2026-07-01', '0001-01-01',
  '1970-01-01', '2038-01-19', '2100-02-28', '2026-12-31T23:59:59.999Z', '+010000-01-01', '2026-07-01T00:00:00+14:00', '1e3',
  '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF', '123e4567-e89b-12d3-a456-426614174000',
  'not-a-uuid', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'a'.repeat(256), 'İ', 'ß',
  // Almost a path, a URL, an address.
  '/', '//x', '/%', '/%ff', '/%E0%A4%A', '/company?x=%', '/../../x', '/company#x', '/\u0000', '/company/%2e%2e/', '/' + 'a'.repeat(3000),
  'http://', 'http://[', 'http://x:99999/', 'http://a b', 'https://%', 'javascript:alert(1)', 'http://127.0.0.1:9/callback#f',
  'http://127.0.0.1:9/callback?x=%', 'mailto:x', '@', 'a@b', 'a@b@c', 'x@' + 'y'.repeat(300) + '.com', '+1', '+999999999999999999',
];

const loneSurrogate = fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff');
const controlChar = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));

/** Short hostile strings (JSON string values, query values, path ids, form fields). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, controlChar, fc.constantFrom('a', 'é', '\u0000')), minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\ud800', '\udc00'), fc.string({ maxLength: 10 })).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
);

/** A string too long for any field, as raw JSON so a counterexample prints as its label. */
const hugeString = fc
  .tuple(fc.oneof(fc.integer({ min: 256, max: 5_000 }), fc.integer({ min: 5_000, max: 300_000 })), fc.constantFrom('x', 'é', '\u0000', '\ud800', '😀'))
  .map(([n, c]) => new RawJson(JSON.stringify(c.repeat(n)), `string of ${n} × ${JSON.stringify(c)}`));

const SPECIAL_NUMBERS = [
  0, -1, 1, 0.5, -0.5, 1.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 63, 2 ** 64, 1e20, -1e20, 1e21,
  1e308, -1e308, Number.MIN_VALUE, Number.EPSILON, 10_000, 10_001, 1_000_000, 99_999_999_999,
];

/** Numbers as JSON text that JSON.stringify cannot produce. */
const RAW_NUMBERS = [
  '1e400', '-1e400', '1e-400', '-0', '0.0', '1.0', '1E2', '1e+2', '123456789012345678901234567890', '-123456789012345678901234567890',
  '0.1000000000000000055511151231257827', '9'.repeat(400),
];

const hostileNumber: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_NUMBERS) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.maxSafeInteger() },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((n) => new RawJson(n, n.length > 40 ? `number of ${n.length} digits` : n)) },
);

const leaf: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
);

/** Member names: prototype keys, empty, NUL, surrogates, dotted and bracketed, plausible field names. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', '', ' ', '\u0000', '\ud800',
      'a.b', 'a[0]', '$where', '$gt', 'id', 'type', 'configuration', 'data', 'metadata', 'requests', 'individual_ids', 'entity_ids',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
);

/** Nesting deep enough to overflow a recursive walker (JSON.parse itself copes). */
const deepJson = fc
  .tuple(
    fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 200, max: 4_000 }), fc.integer({ min: 4_000, max: 12_000 })),
    fc.constantFrom('array', 'object', 'mixed'),
  )
  .map(([depth, shape]) => {
    if (shape === 'array') return new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`, `array nested ${depth} deep`);
    if (shape === 'object') return new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, `object nested ${depth} deep`);
    const half = Math.ceil(depth / 2);
    return new RawJson(`${'[{"a":'.repeat(half)}0${'}]'.repeat(half)}`, `arrays and objects nested ${2 * half} deep`);
  });

/** Many elements or members. */
const wideJson = fc
  .tuple(fc.integer({ min: 500, max: 20_000 }), fc.constantFrom('0', '{}', '"x"', 'null', '"00000000-0000-4000-8000-000000000000"', 'object'))
  .map(([n, element]) =>
    element === 'object'
      ? new RawJson(`{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`, `object of ${n} members`)
      : new RawJson(`[${Array(n).fill(element).join(',')}]`, `array of ${n} × ${element}`),
  );

const { json: smallContainer } = fc.letrec<{ json: Json; array: Json[]; object: JsonObject }>((tie) => ({
  json: fc.oneof({ depthSize: 'small', maxDepth: 4 }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 4 }),
  object: fc.array(fc.tuple(hostileKey, tie('json')), { maxLength: 4 }).map((members) => new JsonObject(members)),
}));

/** Any hostile JSON value: scalars of the wrong type or range, containers, deep, wide and huge ones. */
export const hostileJson: fc.Arbitrary<Json> = fc.oneof(
  { weight: 8, arbitrary: leaf },
  { weight: 3, arbitrary: smallContainer },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: wideJson },
  { weight: 1, arbitrary: hugeString },
);

// ---------------------------------------------------------------------------------------------
// Bodies

/** One change to a valid body; `at` picks a node (modulo the number of candidates). */
export type Mutation =
  | { kind: 'replace'; at: number; value: Json }
  | { kind: 'tweak'; at: number; how: number }
  | { kind: 'remove'; at: number }
  | { kind: 'add'; at: number; key: string | { existing: number }; value: Json }
  | { kind: 'wrap'; at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: hostileJson }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tweak' as const), at: fc.nat(), how: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      at: fc.nat(),
      key: fc.oneof({ weight: 4, arbitrary: hostileKey }, { weight: 1, arbitrary: fc.record({ existing: fc.nat() }) }),
      value: hostileJson,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wrap' as const), at: fc.nat() }) },
);

/** Near misses of a valid value: what a validator's boundary or a parser's corner may let through. */
const TWEAKS: ((value: Json) => Json)[] = [
  (v) => (typeof v === 'string' ? `${v}x` : typeof v === 'number' ? v + 1 : v),
  (v) => (typeof v === 'string' ? v.toUpperCase() : typeof v === 'number' ? v - 1 : v),
  (v) => (typeof v === 'string' ? ` ${v}` : typeof v === 'number' ? -v : v),
  (v) => (typeof v === 'string' ? `${v} ` : typeof v === 'number' ? v * 1_000 : v),
  (v) => (typeof v === 'string' ? v.slice(0, -1) : typeof v === 'number' ? v / 2 : v),
  (v) => (typeof v === 'string' ? v.repeat(40) : typeof v === 'number' ? v + 0.5 : v),
  (v) => (typeof v === 'string' ? `${v}\u00e9😀` : typeof v === 'number' ? String(v) : v),
  (v) => (typeof v === 'string' ? `${v}%` : typeof v === 'number' ? 0 : v),
  (v) => (typeof v === 'boolean' ? !v : typeof v === 'string' ? JSON.stringify(v) : v),
  (v) => (typeof v === 'boolean' ? String(v) : v === null ? new JsonObject([]) : typeof v === 'string' ? Number(v) || 0 : v),
  // Text PostgreSQL cannot store, inside an otherwise valid value: the likeliest way past validation.
  (v) => (typeof v === 'string' ? `${v}\u0000` : v),
  (v) => (typeof v === 'string' ? `\u0000${v}` : v),
  (v) => (typeof v === 'string' ? `${v}\ud800` : v),
  (v) => (typeof v === 'string' ? `\udc00${v}` : v),
];

/** A near miss of a valid query value (the string tweaks of a body's values). */
export function tweakText(value: string, how: number): string {
  const tweaked = TWEAKS[how % TWEAKS.length](value);
  return typeof tweaked === 'string' ? tweaked : JSON.stringify(tweaked instanceof JsonObject ? {} : tweaked);
}

export function applyMutation(body: Json, m: Mutation): Json {
  const paths = nodePaths(body);
  const pick = <T>(candidates: T[]): T | undefined => (candidates.length === 0 ? undefined : candidates[m.at % candidates.length]);
  switch (m.kind) {
    case 'replace':
      return updateAt(body, pick(paths)!, () => m.value) ?? null;
    case 'wrap':
      return updateAt(body, pick(paths)!, (node) => [node]) ?? null;
    case 'tweak': {
      const leaves = paths.filter((p) => { const n = nodeAt(body, p); return !(n instanceof JsonObject || Array.isArray(n) || n instanceof RawJson); });
      const path = pick(leaves);
      return path === undefined ? body : (updateAt(body, path, TWEAKS[m.how % TWEAKS.length]) ?? null);
    }
    case 'remove': {
      const path = pick(paths.slice(1));
      return path === undefined ? body : (updateAt(body, path, () => undefined) ?? null);
    }
    case 'add': {
      const path = pick(paths.filter((p) => { const n = nodeAt(body, p); return n instanceof JsonObject || Array.isArray(n); }));
      if (path === undefined) return body;
      return (
        updateAt(body, path, (node) => {
          if (Array.isArray(node)) return [...node, m.value];
          const members = (node as JsonObject).members;
          const key = typeof m.key === 'string' ? m.key : (members[m.key.existing % Math.max(1, members.length)]?.[0] ?? '');
          return new JsonObject([...members, [key, m.value]]);
        }) ?? null
      );
    }
  }
}

/** Bodies that are not JSON at all, or not quite. */
const TEXT_BODIES = [
  '', ' ', '{', '}', '{"a":}', '{"a" 1}', '[1,]', '{,}', 'nul', 'tru', 'NaN', 'undefined', '"\\u12"', '"\\x41"', "{'a':1}", '\ufeff{}',
  '{}garbage', '{} {}', '\u0000', '"unterminated', '/* c */ {}', '1e400', '--1', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}',
  '{"a":"\\ud800"}', '{"a":"\\u0000"}',
];

/** Bytes that are not UTF-8 (latin1 characters stand for bytes). */
const BYTE_BODIES = ['\xff\xfe', '{"description":"\xff"}', '{"description":"\xed\xa0\x80"}', '{"a":"\xc0\xaf"}', '\xef\xbb\xbf{}', '{"note":"\x00"}'];

export type BodyPlan =
  | { kind: 'valid' }
  | { kind: 'mutated'; mutations: Mutation[] }
  | { kind: 'replaced'; value: Json }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: string }
  | { kind: 'none' }
  | { kind: 'oversized'; extraBytes: number }
  | { kind: 'at-limit'; shape: LimitShape }
  | { kind: 'over-values'; extraValues: number }
  | { kind: 'form'; plan: QueryPlan };

export const bodyPlan: fc.Arbitrary<BodyPlan> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'valid' as const }) },
  { weight: 140, arbitrary: fc.record({ kind: fc.constant('mutated' as const), mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }) }) },
  { weight: 30, arbitrary: fc.record({ kind: fc.constant('replaced' as const), value: hostileJson }) },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.constantFrom(...TEXT_BODIES) }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.constantFrom(...BYTE_BODIES) }) },
  { weight: 10, arbitrary: fc.constant({ kind: 'none' as const }) },
  // Rare: more bytes than the route's limit, exactly its limit in a costly shape, or more JSON values than it takes.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('oversized' as const), extraBytes: fc.integer({ min: 1, max: 100_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('at-limit' as const), shape: fc.constantFrom(...LIMIT_SHAPES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('over-values' as const), extraValues: fc.integer({ min: 1, max: 1_000 }) }) },
);

/** For routes that read no body: usually none, sometimes one anyway. */
export const strayBodyPlan: fc.Arbitrary<BodyPlan> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replaced' as const), value: hostileJson }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.constantFrom(...TEXT_BODIES) }) },
);

// ---------------------------------------------------------------------------------------------
// Query strings (and form bodies, which are the same key=value text)

/** A value percent-encoded when sent, or `raw` text sent verbatim (malformed escapes included). */
export type QueryValue = string | { raw: string };

const NUMERIC_TEXT = [
  '1e20', '-1e20', '1e400', '-1', '0', '-0', '1.5', '9'.repeat(30), '0x1f', 'NaN', 'Infinity', '-Infinity', '', ' ', '+1', '1e-7',
  '2147483647', '2147483648', '9223372036854775807', '9223372036854775808', '1,2', '1 2', '10001', '00001',
];
const RAW_QUERY_TEXT = ['%', '%zz', '%ff%fe', '%00', '%ed%a0%80', '%c0%af', '%2', '+', '%2B', '&', '=', '==', '[]', '%5B%5D', '\u00ff', '#x', ';'];

export const queryValue: fc.Arbitrary<QueryValue> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: fc.constantFrom(...NUMERIC_TEXT) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_QUERY_TEXT).map((raw) => ({ raw })) },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 6_000 }).map((n) => 'a'.repeat(n)) },
);

const queryKey: fc.Arbitrary<QueryValue> = fc.oneof(
  { weight: 3, arbitrary: hostileKey },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'limit', 'offset', 'entity_ids', 'entity_ids[]', 'individual_ids', 'individual_ids[]', 'status', 'type', 'connection_id', 'a[b]',
      'constructor[prototype][x]', '__proto__[x]', 'limit[]', 'offset[$gt]', 'start_date', 'end_date', 'categories[]', 'session', 'flow',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERY_TEXT).map((raw) => ({ raw })) },
);

/** One change to a valid query (or form); `at` picks one of its parameters. */
export type QueryEdit =
  | { kind: 'set'; at: number; value: QueryValue }
  | { kind: 'tweak'; at: number; how: number }
  | { kind: 'remove'; at: number }
  | { kind: 'repeat'; at: number; value: QueryValue }
  | { kind: 'add'; key: QueryValue; value: QueryValue };

export type QueryPlan =
  | { kind: 'valid' }
  | { kind: 'edited'; edits: QueryEdit[] }
  | { kind: 'raw'; text: string }
  | { kind: 'huge'; length: number };

const queryEdit: fc.Arbitrary<QueryEdit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: queryValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tweak' as const), at: fc.nat(), how: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), value: queryValue }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), key: queryKey, value: queryValue }) },
);

/** Routes that take a query get it spoiled often; the others mostly get none, so their bodies are reached. */
export function queryPlan(routeTakesQuery: boolean): fc.Arbitrary<QueryPlan> {
  return fc.oneof(
    { weight: routeTakesQuery ? 10 : 30, arbitrary: fc.constant({ kind: 'valid' as const }) },
    { weight: routeTakesQuery ? 20 : 6, arbitrary: fc.record({ kind: fc.constant('edited' as const), edits: fc.array(queryEdit, { minLength: 1, maxLength: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), text: fc.constantFrom(...RAW_QUERY_TEXT, '&&&', '?', 'a=1&&b', '=x', 'a==b') }) },
    // Past Node's 16 KiB limit on the request line and headers (431), or just under it.
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('huge' as const), length: fc.oneof(fc.integer({ min: 8_000, max: 16_000 }), fc.integer({ min: 17_000, max: 120_000 })) }) },
  );
}

/**
 * Percent-encodes any JavaScript string, lone surrogates included (as the three bytes a naive
 * encoder writes for them, which are not UTF-8), where encodeURIComponent would throw.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const next = text.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(text[i]);
    }
  }
  return out;
}

export const encodeQueryValue = (value: QueryValue): string => (typeof value === 'string' ? percentEncode(value) : value.raw);

// ---------------------------------------------------------------------------------------------
// Path ids and the path itself

export type IdPlan =
  | { kind: 'real'; pick: number }
  | { kind: 'upper'; pick: number }
  | { kind: 'uuid'; uuid: string }
  | { kind: 'text'; value: string }
  | { kind: 'raw'; value: string }
  | { kind: 'long'; length: number; unit: string };

const RAW_IDS = ['%ff%fe', '%00', '%', '%zz', '%2F', '..', '%2e%2e', '%ed%a0%80', '%c0%af', ';', '*', '%20', '%0a', 'a%2Fb', '%25', '\u00ff'];

export const idPlan: fc.Arbitrary<IdPlan> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('real' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('upper' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('uuid' as const), uuid: fc.uuid() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('text' as const), value: hostileString.filter((s) => s !== '') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: fc.constantFrom(...RAW_IDS) }) },
  // Fastify refuses parameters over 100 characters (414).
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('long' as const), length: fc.integer({ min: 90, max: 6_000 }), unit: fc.constantFrom('a', '0', '%ff', 'é') }) },
);

/** How the path around the ids is spelled. */
export type PathShape = 'plain' | 'trailing-slash' | 'double-slash' | 'upper-case' | 'dot-segment' | 'matrix' | 'fragment';

export const pathShape: fc.Arbitrary<PathShape> = fc.oneof(
  { weight: 30, arbitrary: fc.constant('plain' as const) },
  { weight: 1, arbitrary: fc.constantFrom('trailing-slash' as const, 'double-slash' as const, 'upper-case' as const, 'dot-segment' as const, 'matrix' as const, 'fragment' as const) },
);

// ---------------------------------------------------------------------------------------------
// Methods and headers

/** `route`: the route's own method; HEAD for GET routes; others on the same path. */
export type MethodPlan = { kind: 'route' } | { kind: 'head' } | { kind: 'other'; method: string };

export const methodPlan: fc.Arbitrary<MethodPlan> = fc.oneof(
  { weight: 24, arbitrary: fc.constant({ kind: 'route' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'head' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('other' as const),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'FOO', 'get', 'PROPFIND', 'M-SEARCH'),
    }),
  },
);

/**
 * Authorization: `right` is the route's own credential; `other` a valid credential of another
 * kind; `raw` a header value where {token} and {basic} stand for the right bearer token and
 * the right Basic credentials.
 */
export type AuthPlan = { kind: 'right' } | { kind: 'none' } | { kind: 'other' } | { kind: 'revoked' } | { kind: 'raw'; value: string };

const RAW_AUTH = [
  'Bearer', 'Bearer ', 'Bearer x', 'bearer {token}', 'BEARER {token}', 'Bearer  {token}', 'Bearer {token} ', 'Bearer {token}x', 'Bearer {token} {token}',
  'Bearer {basic}', 'Basic {token}', 'Basic', 'Basic ', 'Basic !!!', 'Basic {basic}', 'basic {basic}', 'Basic {basic}=', 'Basic {basic}x',
  `Basic ${Buffer.from('nocolon').toString('base64')}`, `Basic ${Buffer.from(':').toString('base64')}`,
  `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}`, `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0xed, 0xa0, 0x80]).toString('base64')}`,
  `Basic ${Buffer.from(`${'a'.repeat(300)}:${'b'.repeat(300)}`).toString('base64')}`, `Bearer ${'x'.repeat(5_000)}`, 'Digest username="x"',
  'Bearer \u00ff\u00fe', 'Bearer \u0001', 'Bearer %00', 'Negotiate', 'Bearer null', 'Bearer undefined',
];

export const authPlan: fc.Arbitrary<AuthPlan> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'right' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'other' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'revoked' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: fc.constantFrom(...RAW_AUTH) }) },
);

/** Header values: printable, latin1 bytes (obs-text), control characters (refused by the parser), long. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).filter((c) => c !== 0x0a && c !== 0x0d).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', 'a\u007fb', '%00', '\u00ff', '{{7*7}}', '../../', 'null') },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 9_000 }).map((n) => 'v'.repeat(n)) },
);

export type VersionPlan = { kind: 'right' } | { kind: 'none' } | { kind: 'value'; value: string };

export const versionPlan: fc.Arbitrary<VersionPlan> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'right' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('value' as const),
      value: fc.oneof(
        fc.constantFrom(
          '', ' ', '2020-09-17 ', ' 2020-09-17', '2020-9-17', '2021-02-30', '3020-01-01', '0000-00-00', '2020-09-17T00:00:00Z', 'yesterday',
          '2020-09-17, 2020-09-17', '2020-09-17\u0000', '\u00ff\u00fe', '99999-01-01', '-2020-09-17', '2020-09-17'.repeat(500),
        ),
        headerValue,
      ),
    }),
  },
);

export type ContentTypePlan = { kind: 'right' } | { kind: 'none' } | { kind: 'value'; value: string };

export const contentTypePlan: fc.Arbitrary<ContentTypePlan> = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'right' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('value' as const),
      value: fc.oneof(
        fc.constantFrom(
          'text/plain', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/JSON', 'Application/Json',
          'application/json;', 'application/json ; charset=utf-8', 'application/jsonx', 'application/vnd.api+json', 'application/*', '*/*',
          'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json, text/plain', '', ' ',
          'application/json; charset="utf-8"; x=\u00ff', 'application/octet-stream', `application/json; ${'x'.repeat(3_000)}`,
        ),
        headerValue,
      ),
    }),
  },
);

/** Headers added on top: request ids, idempotency keys, proxies' headers, a second version header, odd names, big ones. */
const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(
    fc.constantFrom(
      'x-request-id', 'idempotency-key', 'accept', 'accept-encoding', 'accept-language', 'x-forwarded-host', 'x-forwarded-proto',
      'x-forwarded-for', 'forwarded', 'service-api-version', 'finch-api-version', 'origin', 'referer', 'cookie', 'user-agent', 'expect', 'if-none-match', 'range',
    ),
    headerValue,
  ) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('x-fuzz', 'x-a.b', 'x_underscore', 'X-UPPER', 'x-\u00e9', 'x y', 'x\u0001y', 'x:y', ''), headerValue) },
  // Past Node's 16 KiB limit (431) or just under it.
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 40_000 }).map((n): [string, string] => ['x-big', 'b'.repeat(n)]) },
);

export interface HeaderPlan {
  auth: AuthPlan;
  version: VersionPlan;
  contentType: ContentTypePlan;
  extras: [string, string][];
}

export const headerPlan: fc.Arbitrary<HeaderPlan> = fc.record({
  auth: authPlan,
  version: versionPlan,
  contentType: contentTypePlan,
  extras: fc.oneof({ weight: 6, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 2, arbitrary: fc.array(extraHeader, { minLength: 1, maxLength: 3 }) }),
});

/** Which sandbox employer a bearer route acts for: Automated or Assisted providers take different paths. */
export type EmployerKind = 'automated' | 'assisted';

/** Everything about one request, before it meets a route and the context's real ids and credentials. */
export interface FuzzCase {
  employer: EmployerKind;
  method: MethodPlan;
  shape: PathShape;
  ids: IdPlan[];
  query: QueryPlan;
  body: BodyPlan;
  headers: HeaderPlan;
}

export function fuzzCase(paramCount: number, body: 'json' | 'form' | undefined, takesQuery: boolean): fc.Arbitrary<FuzzCase> {
  const bodies =
    body === 'json'
      ? bodyPlan
      : body === 'form'
        ? fc.oneof({ weight: 6, arbitrary: fc.record({ kind: fc.constant('form' as const), plan: queryPlan(true) }) }, { weight: 1, arbitrary: bodyPlan })
        : strayBodyPlan;
  return fc.record({
    employer: fc.oneof({ weight: 3, arbitrary: fc.constant('automated' as const) }, { weight: 1, arbitrary: fc.constant('assisted' as const) }),
    method: methodPlan,
    shape: pathShape,
    ids: fc.array(idPlan, { minLength: paramCount, maxLength: paramCount }),
    query: queryPlan(takesQuery),
    body: bodies,
    headers: headerPlan,
  });
}
