import { Html, html } from './html';

/** A rendered step: the controller sends it with the status and the page's own CSP. */
export interface Page {
  status: number;
  title: string;
  body: Html;
  /** Extra page CSS (it goes into the nonce'd style element). */
  styles?: string;
  /** Inline script run at the end of the body (it gets the response's nonce). */
  script?: string;
  /** Origins a form on this page may end up at (after a redirect), besides this service. */
  formTargets?: string[];
}

export const STYLES = `
:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --card: #fff; --text: #1b1f24; --muted: #57606a; --border: #d0d7de;
  --accent: #0b57d0; --accent-text: #fff; --accent-soft: #e8f0fe; --danger: #b3261e; --danger-soft: #fdecea;
  --hint: #fff8e1; --hint-border: #e6c200; --focus: #0b57d0;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1115; --card: #181b21; --text: #e6e8eb; --muted: #a0a7b1; --border: #333a44;
    --accent: #8ab4f8; --accent-text: #0f1115; --accent-soft: #1f2a3d; --danger: #f2b8b5; --danger-soft: #3b1d1b;
    --hint: #2b2610; --hint-border: #8a7400; --focus: #8ab4f8;
  }
}
* { box-sizing: border-box; }
html { font-size: 100%; }
body {
  margin: 0; min-height: 100vh; background: var(--bg); color: var(--text);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  display: flex; flex-direction: column; align-items: center; padding: 1.5rem 1rem;
}
.brand { width: 100%; max-width: 30rem; display: flex; justify-content: space-between; align-items: center;
  margin-bottom: 1rem; color: var(--muted); font-size: .875rem; }
.brand strong { color: var(--text); }
.badge { border: 1px solid var(--hint-border); background: var(--hint); color: var(--text); border-radius: 999px;
  padding: .1rem .6rem; font-size: .75rem; font-weight: 600; }
main { width: 100%; max-width: 30rem; background: var(--card); border: 1px solid var(--border); border-radius: .75rem;
  padding: 1.5rem; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
h1 { font-size: 1.375rem; line-height: 1.3; margin: 0 0 .5rem; }
h2 { font-size: 1rem; margin: 1.25rem 0 .5rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
.small { font-size: .875rem; }
.steps { list-style: none; display: flex; gap: .5rem; padding: 0; margin: 0 0 1.25rem; font-size: .8125rem; color: var(--muted); }
.steps li { flex: 1; border-top: 3px solid var(--border); padding-top: .35rem; }
.steps li.done { border-color: var(--accent); }
.steps li[aria-current="step"] { border-color: var(--accent); color: var(--text); font-weight: 600; }
label { display: block; font-weight: 600; margin: 0 0 .25rem; }
input[type="text"], input[type="search"], input[type="password"] {
  width: 100%; font: inherit; padding: .6rem .75rem; border: 1px solid var(--border); border-radius: .5rem;
  background: var(--card); color: var(--text); margin-bottom: 1rem;
}
input[aria-invalid="true"] { border-color: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button, .button {
  font: inherit; font-weight: 600; border-radius: .5rem; padding: .65rem 1.1rem; cursor: pointer;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text); text-decoration: none; display: inline-block;
}
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.25rem; }
.actions button { flex: 1; }
form + p { margin-top: 1rem; }
.search { display: flex; gap: .5rem; align-items: flex-start; }
.search input { margin-bottom: .25rem; }
.js .search .no-js { display: none; }
.providers { list-style: none; padding: 0; margin: .5rem 0 0; max-height: 24rem; overflow-y: auto; }
.providers li + li { margin-top: .5rem; }
.provider {
  width: 100%; display: flex; align-items: center; gap: .75rem; text-align: left; padding: .6rem .75rem;
  background: var(--card); color: var(--text); border: 1px solid var(--border); font-weight: 500;
}
.provider:hover { border-color: var(--accent); background: var(--accent-soft); }
.provider:disabled, .provider:disabled:hover { cursor: not-allowed; color: var(--muted); border-color: var(--border); background: var(--card); }
.logo { flex: none; width: 2rem; height: 2rem; border-radius: .4rem; display: grid; place-items: center;
  background: var(--accent-soft); color: var(--accent); font-weight: 700; }
.provider .name { flex: 1; }
.tag { font-size: .75rem; color: var(--muted); border: 1px solid var(--border); border-radius: 999px; padding: 0 .5rem; }
.alert { border: 1px solid var(--danger); background: var(--danger-soft); border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1rem; }
.alert p { margin: 0; }
.hint { border: 1px solid var(--hint-border); background: var(--hint); border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1rem; font-size: .875rem; }
.hint ul { margin: .25rem 0 0; padding-left: 1.25rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em; }
.code { display: block; word-break: break-all; padding: .75rem; border: 1px dashed var(--border); border-radius: .5rem; margin-bottom: 1rem; }
.products { padding-left: 1.25rem; margin: 0 0 1rem; }
.products li { margin-bottom: .25rem; }
fieldset { border: 1px solid var(--border); border-radius: .5rem; padding: .75rem 1rem; margin: 1rem 0 0; }
legend { font-weight: 600; padding: 0 .25rem; }
.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .35rem 0; }
.check input { width: 1.1rem; height: 1.1rem; margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
footer { max-width: 30rem; margin-top: 1rem; color: var(--muted); font-size: .75rem; text-align: center; }
@media (max-width: 30rem) { main { padding: 1.1rem; } }
`;

export function renderLayout(page: Page, nonce: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${page.title} · Connect your payroll</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${new Html(STYLES)}${new Html(page.styles ?? '')}</style>
</head>
<body>
<header class="brand"><span><strong>Unified HR &amp; Payroll</strong> · Connect</span><span class="badge">Sandbox</span></header>
<main id="main">
${page.body}
</main>
<footer>Your credentials are sent to your provider only; the application never sees your password.</footer>
${page.script ? html`<script nonce="${nonce}">${new Html(page.script)}</script>` : ''}
</body>
</html>
`.value;
}
