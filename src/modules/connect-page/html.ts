/**
 * A tiny HTML template helper: every interpolated value is escaped unless it is already Html
 * (built by this tag), so page code cannot forget to escape user or provider data.
 */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  return new Html(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]) : ''), ''));
}

/**
 * JSON for a `<script type="application/json">` block: `<` is escaped so the data cannot
 * close the script element, whatever it holds.
 */
export function jsonScriptData(data: unknown): Html {
  return new Html(JSON.stringify(data).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'));
}
