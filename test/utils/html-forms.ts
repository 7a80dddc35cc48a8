/**
 * Reading the connect page's HTML the way a browser would, without one: its forms, their fields
 * and buttons, and the text a person sees. Shared by the tests that walk the page over HTTP.
 */

export interface ParsedForm {
  method: string;
  action: string;
  /** Hidden and text inputs. */
  fields: [string, string][];
  checkboxes: { name: string; value: string; checked: boolean; disabled: boolean }[];
  buttons: { name: string; value: string; text: string; disabled: boolean }[];
}

export const unescapeHtml = (text: string) =>
  text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export function attributesOf(tag: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g)) attrs[m[1]] = unescapeHtml(m[2] ?? '');
  return attrs;
}

export function formsOf(html: string): ParsedForm[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, formTag, inner]) => {
    const form = attributesOf(formTag);
    const inputs = [...inner.matchAll(/<input\b([^>]*)>/g)].map(([, tag]) => attributesOf(tag));
    return {
      method: (form.method ?? 'get').toLowerCase(),
      action: form.action,
      fields: inputs.filter((i) => i.name && i.type !== 'checkbox' && i.type !== 'password').map((i): [string, string] => [i.name, i.value ?? '']),
      checkboxes: inputs
        .filter((i) => i.type === 'checkbox')
        .map((i) => ({ name: i.name, value: i.value, checked: 'checked' in i, disabled: 'disabled' in i })),
      buttons: [...inner.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].map(([, tag, text]) => {
        const a = attributesOf(tag);
        return { name: a.name, value: a.value, text: text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim(), disabled: 'disabled' in a };
      }),
    };
  });
}

/** What a person sees of the page: its text without markup, scripts or styles. */
export const visibleText = (html: string) =>
  unescapeHtml(html.replace(/<(script|style)\b[\s\S]*?<\/\1>/g, '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

/** The page's form posting to `action`; fails naming what the page shows instead. */
export function formTo(html: string, action: string): ParsedForm {
  const form = formsOf(html).find((f) => f.action === action);
  if (!form) throw new Error(`no form posting to ${action} in: ${visibleText(/<main[\s\S]*<\/main>/.exec(html)?.[0] ?? html).slice(0, 2000)}`);
  return form;
}
