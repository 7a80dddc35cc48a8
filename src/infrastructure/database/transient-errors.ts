import { QueryFailedError } from 'typeorm';

/**
 * SQLSTATEs of a database that cannot be reached or is going away: a lost or refused connection
 * (class 08; PgBouncer's `server login has been failing` is 08P01), an operator's intervention
 * (57P01–57P03: shutdown, crash, cannot connect now).
 */
const UNAVAILABLE_CLASSES = ['08'];
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03']);
/**
 * And those of a database that answered, after which the same work may well succeed: a
 * transaction rolled back by the server (deadlock, serialization failure: class 40),
 * insufficient resources (class 53), a lock or statement timeout (55P03, 57014).
 */
const RETRYABLE_CLASSES = ['40', '53'];
const RETRYABLE_CODES = new Set(['55P03', '57014']);
/**
 * Of those, the ones where the database answered and refused or undid the work for want of a
 * turn, not for a fault in it: a serialization failure or deadlock (the transaction rolled back),
 * a lock not available or a statement canceled (a lock or statement timeout, an operator's
 * cancel), no connection slot left. Not 40003 (whether the statement completed is unknown) nor
 * the rest of class 53 (a full disk, no memory: the server is broken, not busy).
 */
const BUSY_CODES = new Set(['40001', '40P01', '55P03', '57014', '53300']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
/** The driver's own words for a connection lost, which carry no SQLSTATE. */
const CONNECTION_LOST = /Connection terminated|connection timeout|Client has encountered a connection error/i;

/** Whether a database error is one to retry rather than a fault in the work itself. */
export function isTransientDatabaseError(error: unknown): boolean {
  if (isDatabaseUnavailableError(error)) return true;
  const code = sqlStateOf(error);
  return code !== undefined && (RETRYABLE_CLASSES.includes(code.slice(0, 2)) || RETRYABLE_CODES.has(code));
}

/**
 * Whether the database refused or undid the work for want of a turn (BUSY_CODES): what the work
 * wrote in that transaction is gone, and the same work a moment later may well succeed.
 */
export function isDatabaseBusyError(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && BUSY_CODES.has(code);
}

/**
 * Whether the database could not be reached or is going away: no statement of the work itself
 * failed, so the same work is to be tried again as it was, once the database answers.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const code = sqlStateOf(error);
  if (code !== undefined) return UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code);
  return error instanceof Error && CONNECTION_LOST.test(error.message);
}

/** The SQLSTATE of a database error (a network failure's as 08000); undefined for anything else. */
export function sqlStateOf(error: unknown): string | undefined {
  const candidate = error instanceof QueryFailedError ? (error.driverError as { code?: unknown }) : (error as { code?: unknown } | undefined);
  const code = candidate?.code;
  if (typeof code !== 'string') return undefined;
  if (NETWORK_CODES.has(code)) return '08000';
  return /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
