import type { ContributionRecord } from './reconciliation-reads.repository';

/**
 * The recordkeeper's file of one payment: one line per person and benefit, amounts in cents.
 * RFC 4180: CRLF line ends, a field quoted when it holds a comma, a double quote, CR or LF, its
 * quotes doubled; a text that would start a spreadsheet formula gets a leading apostrophe. The
 * codebase has no CSV library, and writing fields is this much.
 *
 * `benefit_description` is beside `benefit_type` (the JSON answer's order): a plan's name is what a
 * recordkeeper matches on, and the one free-text column is the one quoting matters for.
 */
export const CONTRIBUTIONS_CSV_COLUMNS = [
  'pay_date',
  'payment_id',
  'individual_id',
  'benefit_id',
  'benefit_type',
  'benefit_description',
  'employee_pre_tax',
  'employee_roth',
  'employee_after_tax',
  'employer',
  'ytd_employee_pre_tax',
  'ytd_employee_roth',
  'ytd_employee_after_tax',
  'ytd_employer',
] as const;

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';
const CRLF = '\r\n';
const NEEDS_QUOTES = /[",\r\n]/;
/**
 * A text a spreadsheet would run as a formula (OWASP's CSV injection list). The description is
 * the platform's free text, and a recordkeeper opens this file in a spreadsheet: such a text is
 * written with a leading apostrophe, which spreadsheets show as text. Amounts are numbers and are
 * never touched, so a negative amount stays a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: null and undefined are empty; a text that would start a formula is kept as text. */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(fields: readonly (string | number | null | undefined)[]): string {
  return fields.map(csvField).join(',') + CRLF;
}

export const contributionsCsvHeader = (): string => csvLine(CONTRIBUTIONS_CSV_COLUMNS);

/** The lines of a batch of one payment's contributions, in CONTRIBUTIONS_CSV_COLUMNS order. */
export function contributionsCsvLines(payment: { paymentId: string; payDate: string }, batch: readonly ContributionRecord[]): string {
  let text = '';
  for (const c of batch) {
    text += csvLine([
      payment.payDate,
      payment.paymentId,
      c.individualId,
      c.benefitId,
      c.benefitType,
      c.benefitDescription,
      c.thisPayment.employeePreTax,
      c.thisPayment.employeeRoth,
      c.thisPayment.employeeAfterTax,
      c.thisPayment.employer,
      c.yearToDate.employeePreTax,
      c.yearToDate.employeeRoth,
      c.yearToDate.employeeAfterTax,
      c.yearToDate.employer,
    ]);
  }
  return text;
}

/**
 * Whether an `Accept` header asks for CSV rather than JSON: `text/csv` named with a weight above
 * 0 and above that of `application/json` (or `application/` any). A wildcard alone and a tie keep
 * JSON, the default.
 */
export function acceptsCsvOverJson(accept: string | string[] | undefined): boolean {
  if (accept === undefined) return false;
  let csv = 0;
  let json = 0;
  for (const range of (Array.isArray(accept) ? accept.join(',') : accept).split(',')) {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = weightOf(parameters);
    if (type === 'text/csv') csv = Math.max(csv, q);
    else if (type === 'application/json' || type === 'application/*') json = Math.max(json, q);
  }
  return csv > 0 && csv > json;
}

function weightOf(parameters: string[]): number {
  const q = parameters.find((p) => p.startsWith('q='));
  if (q === undefined) return 1;
  const value = Number(q.slice(2));
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : 0;
}
