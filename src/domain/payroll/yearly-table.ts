/**
 * The row of `year` in a table sorted by contiguous years. A year after the table uses the
 * latest row, a year before it the first: a pay run never fails for want of a year's figures.
 */
export function yearlyRowFor<Row extends { year: number }>(table: readonly Row[], year: number): Row {
  const first = table[0];
  const last = table[table.length - 1];
  if (year <= first.year) return first;
  if (year >= last.year) return last;
  const row = table.find((candidate) => candidate.year === year);
  if (!row) throw new Error(`yearly table has no row for ${year}`);
  return row;
}
