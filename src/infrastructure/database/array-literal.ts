/**
 * The PostgreSQL array literal of an array of strings, numbers and booleans (null as NULL), or
 * undefined when it holds anything else (nested arrays, objects, dates, buffers), which
 * node-postgres then formats itself.
 *
 * Why: node-postgres builds the literal by concatenation and runs two regular expressions on
 * every element. The set-wise statements send arrays of hundreds of elements per column, and on
 * the HRIS-event path that formatting was the largest single source of what the service
 * allocated (bench/README.md). This gives the text node-postgres gives, element for element
 * (`true`, `42`, a string in double quotes), joined once; only a string holding a backslash or
 * a double quote is escaped.
 */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (typeof value === 'string') parts[i] = quoted(value);
    else if (typeof value === 'number' || typeof value === 'boolean') parts[i] = quoted(String(value));
    else return undefined;
  }
  return `{${parts.join(',')}}`;
}

/** An array element in double quotes, its backslashes and double quotes escaped. */
function quoted(text: string): string {
  if (text.includes('"') || text.includes('\\')) return `"${text.replace(/[\\"]/g, '\\$&')}"`;
  return `"${text}"`;
}
