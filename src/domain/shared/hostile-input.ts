/**
 * The rules every input passes before any handler reads it, whatever its route or transport:
 * a bounded nesting depth, text PostgreSQL can store, and no keys that name an object's
 * machinery. One place, so a new route or message type cannot miss them.
 */

/**
 * Deepest nesting of objects and arrays accepted. Real payloads need a handful of levels;
 * recursive code (validation, copying, JSON) runs out of stack in the thousands.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Keys no payload of this API has, which would reach an object's prototype or constructor when
 * copied onto it; refused as unknown fields instead of being silently dropped.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

// U+0000 or any surrogate: the cheap test that clears nearly every string at once.
// eslint-disable-next-line no-control-regex -- finding U+0000 is the point
const SUSPECT = /[\u0000\ud800-\udfff]/;
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether PostgreSQL can store the text: not U+0000 (text and jsonb refuse it) and no unpaired
 * UTF-16 surrogate (it has no UTF-8 form; jsonb refuses `\ud800`).
 */
export function isStorableText(text: string): boolean {
  if (!SUSPECT.test(text)) return true;
  return !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);
}

/** The text with each U+0000 and unpaired surrogate replaced by U+FFFD, so that it can be stored. */
export function toStorableText(text: string): string {
  if (isStorableText(text)) return text;
  // eslint-disable-next-line no-control-regex -- replacing U+0000 is the point
  return text.replace(/\u0000/g, '\ufffd').replace(new RegExp(UNPAIRED_SURROGATE.source, 'g'), '\ufffd');
}

/**
 * The text cut to at most `max` UTF-16 units, ending in `…` when cut. Never between the two
 * halves of a surrogate pair: half an emoji has no UTF-8 form and jsonb refuses it.
 */
export function cutShort(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

export const UNSTORABLE_TEXT_PROBLEM = 'text must not contain U+0000 or an unpaired UTF-16 surrogate';

/**
 * Whether JSON text nests deeper than `limit`, counted without parsing it (brackets inside
 * strings skipped), so that a hostile body is refused before any recursive code sees it.
 */
export function jsonNestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  return jsonBeyondBounds(text, { depth: limit, values: Infinity }) === 'depth';
}

/**
 * Which bound JSON text goes beyond, read without parsing it: `depth` (nesting of objects and
 * arrays) or `values` (objects and arrays, and the members and elements in them). A parsed
 * value takes several times its text in memory, the most for many small values (`[{},{},…]`),
 * so both are refused before anything is built from the text. Reads a string or its UTF-8
 * bytes (every character it looks for is ASCII, and no byte of a multi-byte character is).
 * Brackets and commas inside strings are skipped; text that is not JSON fails later, at parsing.
 */
export function jsonBeyondBounds(text: string | Uint8Array, bounds: { depth: number; values: number }): 'depth' | 'values' | undefined {
  return measureJson(text, bounds).beyond;
}

/** As jsonBeyondBounds, with the values counted (up to the point where a bound was passed). */
export function measureJson(text: string | Uint8Array, bounds: { depth: number; values: number }): { beyond?: 'depth' | 'values'; values: number } {
  const codeAt = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i];
  let depth = 0;
  let values = 0;
  let inString = false;
  // Just after `{` or `[`: the next non-blank character opens a first member unless it closes.
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = codeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (opened && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
      opened = false;
      if (c !== 0x7d /* } */ && c !== 0x5d /* ] */ && ++values > bounds.values) return { beyond: 'values', values };
    }
    if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > bounds.depth) return { beyond: 'depth', values };
      if (++values > bounds.values) return { beyond: 'values', values };
      opened = true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x2c /* , */) {
      if (++values > bounds.values) return { beyond: 'values', values };
    }
  }
  return { values };
}

/**
 * The first problem of a parsed JSON value, named by its path (`requests[0].note: …`), or
 * undefined. Iterative, so depth alone cannot exhaust the stack; `jsonNestsDeeperThan`
 * bounds the depth first wherever text is parsed.
 */
export function hostileValueProblem(value: unknown, root = ''): string | undefined {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return `${path || 'body'}: ${UNSTORABLE_TEXT_PROBLEM}`;
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= MAX_JSON_DEPTH) return `${path || 'body'}: nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const keyPath = path === '' ? key : `${path}.${key}`;
      if (RESERVED_KEYS.has(key)) return `${keyPath}: unknown field`;
      if (!isStorableText(key)) return `${path || 'body'}: a field name's ${UNSTORABLE_TEXT_PROBLEM}`;
      pending.push({ value: (current as Record<string, unknown>)[key], path: keyPath, depth: depth + 1 });
    }
  }
  return undefined;
}
