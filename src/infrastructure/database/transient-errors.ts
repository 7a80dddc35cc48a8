import { QueryFailedError } from 'typeorm';

/**
 * SQLSTATE classes and codes after which the same work may well succeed: a transaction rolled
 * back by the server (deadlock, serialization failure: class 40), a lost or refused connection
 * (class 08), an operator's intervention (57P01–57P03: shutdown, crash, cannot connect now),
 * insufficient resources (class 53), a lock or statement timeout (55P03, 57014).
 */
const TRANSIENT_CLASSES = ['40', '08', '53'];
const TRANSIENT_CODES = new Set(['57P01', '57P02', '57P03', '55P03', '57014']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether a database error is one to retry rather than a fault in the work itself. */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined) return TRANSIENT_CLASSES.includes(code.slice(0, 2)) || TRANSIENT_CODES.has(code);
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

/**
 * Whether the database could not be reached or is going away (class 08, 57P01–57P03, a socket
 * error, a pooler that cannot log in): no statement of the work itself failed, so the same work
 * is to be tried again as it was, once the database answers.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined) return code.startsWith('08') || UNAVAILABLE_CODES.has(code);
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03']);

function sqlState(error: unknown): string | undefined {
  const candidate = error instanceof QueryFailedError ? (error.driverError as { code?: unknown }) : (error as { code?: unknown } | undefined);
  const code = candidate?.code;
  if (typeof code !== 'string') return undefined;
  if (NETWORK_CODES.has(code)) return '08000';
  return /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
