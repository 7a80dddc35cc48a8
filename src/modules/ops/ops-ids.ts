import { invalidRequest } from '../../domain/shared/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id of the ops API: a UUID, or 400 naming the parameter (before any lookup). */
export function requireUuid(name: string, value: string): string {
  if (!UUID.test(value)) throw invalidRequest(`${name} must be a UUID, got ${JSON.stringify(value.slice(0, 100))}`);
  return value;
}

/** The page an ops listing answers with: `{ paging: { count, offset }, data }`, as /ops/api/tasks does. */
export const pageOf = <T>(count: number, offset: number, data: T[]) => ({ paging: { count, offset }, data });

/** Whole seconds from `from` to `now`, never negative. */
export const secondsSince = (from: Date, now: Date) => Math.max(0, Math.floor((now.getTime() - from.getTime()) / 1000));
