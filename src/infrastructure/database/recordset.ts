/**
 * Rows for `jsonb_to_recordset($n::jsonb) AS u(column type, …)`: a whole set as one JSON text.
 * For large sets it beats one array parameter per column, for which node-postgres quotes and
 * escapes every element (a JSON value twice, once as JSON and once as an array element), and
 * JSON columns travel as themselves. Dates become ISO instants, `undefined` fields NULL.
 */
export const recordset = (rows: readonly Record<string, unknown>[]): string => JSON.stringify(rows);
