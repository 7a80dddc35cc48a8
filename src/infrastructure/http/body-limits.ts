/**
 * What each route's request body may hold, in bytes (refused before the body is read, from its
 * Content-Length, or while it is read) and in JSON values (refused before it is parsed): a
 * parsed body takes several times its text in the heap, and hostile shapes (`[{},{},…]`) the
 * most per byte. Each bound fits the largest body its route legitimately takes, with room;
 * docs/decisions.md "Request bodies" gives the reasoning per route.
 */
export interface BodyLimit {
  /** Bytes of body text. */
  bytes: number;
  /** JSON values (objects, arrays, members and elements), counted before parsing. */
  values: number;
  /**
   * Heap its handler takes per JSON value of the body, beyond the parsed body, where that is the
   * larger cost (reading or writing a row per element). Per value rather than per byte: the
   * cost follows the elements, and the leanest element (an id alone) has the fewest values.
   */
  handlingHeapPerValue?: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;

/** Every route not named below: one object of the API (a benefit, a policy, a rule with its metadata). */
export const DEFAULT_BODY_LIMIT: BodyLimit = { bytes: 64 * KiB, values: 10_000 };

/** Credentials and a code, or a few form fields: a few hundred bytes. */
const CREDENTIALS: BodyLimit = { bytes: 8 * KiB, values: 200 };

/**
 * Routes whose bodies are larger or smaller than the default, by Fastify route template.
 * The bulk bounds follow DECISIONS.md "Limits" (10,000 elements per enrollment or batch).
 */
export const ROUTE_BODY_LIMITS: Readonly<Record<string, BodyLimit>> = {
  'POST /auth/token': CREDENTIALS,
  'POST /connect/provider': CREDENTIALS,
  'POST /connect/sign-in': CREDENTIALS,
  'POST /connect/consent': CREDENTIALS,
  // 10,000 elements of {individual_id, configuration}: about 250 bytes and 15 values each.
  // Handling: about 4 KB per person (the ledger, its changes and rows; bench/background-heap.ts
  // measured 25 to 40 MB for 10,000), charged at 3 values a person, the leanest element.
  'POST /employer/benefits/:benefit_id/individuals': { bytes: 4 * MiB, values: 250_000, handlingHeapPerValue: 1_400 },
  // 10,000 ids of 36 characters: one value a person.
  'DELETE /employer/benefits/:benefit_id/individuals': { bytes: 1 * MiB, values: 12_000, handlingHeapPerValue: 4 * KiB },
  // 10,000 {individual_id} requests (3 values each: the element, its object, its field), each
  // answered with a person's record; more than 10,000 must still reach validation's own message.
  'POST /employer/individual': { bytes: 1 * MiB, values: 40_000, handlingHeapPerValue: 420 },
  'POST /employer/employment': { bytes: 1 * MiB, values: 40_000, handlingHeapPerValue: 420 },
  // 1,000 events, each a person's record at most a few hundred bytes to 1 KiB, each applied
  // through the inbox and its saga before the answer.
  'POST /hris/events': { bytes: 2 * MiB, values: 100_000, handlingHeapPerValue: 170 },
  // One Gusto event or the verification handshake: a few hundred bytes.
  'POST /providers/gusto/webhooks': { bytes: 8 * KiB, values: 200 },
  // 1,000 new people with their contacts, each written with its employment.
  'POST /sandbox/directory': { bytes: 2 * MiB, values: 100_000, handlingHeapPerValue: 170 },
  // Up to 10,000 pay statements with their lines, each computed and written.
  'POST /sandbox/payment': { bytes: 4 * MiB, values: 250_000, handlingHeapPerValue: 70 },
  // 1,000 adjustments of about 160 bytes and 7 values each (its object, five members, the element);
  // more than 1,000 must still reach validation's own message.
  'POST /sandbox/payroll/adjustments': { bytes: 256 * KiB, values: 16_000 },
  // A provider request passed through: one provider object, not a batch.
  'POST /forward': { bytes: 256 * KiB, values: 20_000 },
};

/** The largest byte bound of any route: the HTTP server's own ceiling. */
export const LARGEST_BODY_BYTES = Math.max(DEFAULT_BODY_LIMIT.bytes, ...Object.values(ROUTE_BODY_LIMITS).map((limit) => limit.bytes));

export function bodyLimitOf(method: string, routeTemplate: string): BodyLimit {
  return ROUTE_BODY_LIMITS[`${method} ${routeTemplate}`] ?? DEFAULT_BODY_LIMIT;
}
