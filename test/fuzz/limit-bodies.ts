import type { BodyLimit } from '../../src/infrastructure/http/body-limits';
import { bodyLimitOf } from '../../src/infrastructure/http/body-limits';

/**
 * Bodies at and beyond a route's limits (src/infrastructure/http/body-limits.ts), in the shapes
 * that cost a parser the most memory per byte: many small values, and one long string.
 */
export const LIMIT_SHAPES = ['{}', '0', 'null', '"a"', '[]', '{"a":1}', 'string'] as const;
export type LimitShape = (typeof LIMIT_SHAPES)[number];

export const limitOf = (route: { method: string; path: string }): BodyLimit => bodyLimitOf(route.method, route.path);

/**
 * A JSON array of `shape` (or one string) exactly `bytes` long (trailing blanks fill the rest),
 * holding at most `maxElements` elements when given.
 */
export function bodyOfShape(shape: LimitShape, bytes: number, maxElements = Infinity): Buffer {
  if (shape === 'string') return pad(`{"a":"${'x'.repeat(Math.max(0, bytes - 8))}"}`, bytes);
  const per = shape.length + 1;
  const count = Math.max(0, Math.min(maxElements, Math.floor((bytes - 2) / per)));
  return pad(`[${Array(count).fill(shape).join(',')}]`, bytes);
}

/** The worst body within both bounds: as many empty objects as the value bound lets through, then blanks to the byte bound. */
export function largestHostileBody(limit: BodyLimit): Buffer {
  // `[` counts 1 value, each `{}` element 2 (the element and the object).
  return bodyOfShape('{}', limit.bytes, Math.floor((limit.values - 1) / 2));
}

/** Just over the value bound, well within the byte bound when the route's bytes allow it. */
export function bodyOverValues(limit: BodyLimit, extraValues = 1): Buffer | undefined {
  const elements = Math.ceil(limit.values / 2) + extraValues;
  if (2 + elements * 3 > limit.bytes) return undefined;
  return Buffer.from(`[${Array(elements).fill('{}').join(',')}]`);
}

function pad(text: string, bytes: number): Buffer {
  return Buffer.from(text.length >= bytes ? text : text + ' '.repeat(bytes - text.length));
}
