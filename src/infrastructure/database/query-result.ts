/*
 * TypeORM's postgres driver answers `query()` with `[rows, rowCount]` when the statement is an
 * UPDATE or a DELETE (RETURNING or not), and with the rows alone for anything else (SELECT,
 * INSERT … RETURNING, a WITH whose outer statement is a SELECT). These read either answer.
 */

/** `[rows, count]`: the answer to an UPDATE or a DELETE. */
function isCountedAnswer(result: unknown): result is [unknown[], number] {
  return Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number';
}

/** Rows an UPDATE or DELETE changed; 0 for any other answer. */
export function affectedCount(result: unknown): number {
  return isCountedAnswer(result) ? result[1] : 0;
}

/** The rows a statement's RETURNING (or SELECT) gave back, whichever shape the driver answered in. */
export function returnedRows<T>(result: unknown): T[] {
  if (isCountedAnswer(result)) return result[0] as T[];
  return Array.isArray(result) ? (result as T[]) : [];
}
