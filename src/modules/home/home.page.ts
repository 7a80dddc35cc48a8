import { html } from '../connect-page/html';

export interface HomeLinks {
  docs: string;
  /** The sandbox application start-up created or updated, when there is one. */
  demo?: { link: string; clientId: string; signIn: string };
}

/** A small static page: what this service is, and where to go next. */
export function homePage({ docs, demo }: HomeLinks): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Benefits enrollment orchestration service</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 2rem auto; padding: 0 1rem; color: #1b1f24; }
  h1 { font-size: 1.4rem; }
  li { margin: .4rem 0; }
  code { background: #f2f4f7; padding: .1rem .3rem; border-radius: 3px; word-break: break-all; }
  .muted { color: #57606a; }
</style>
</head>
<body>
<main>
<h1>Benefits enrollment orchestration service</h1>
<p>The Unified HR &amp; Payroll API: payroll deductions (401(k), HSA, FSA, Section 125, commuter) driven into employers' payroll providers.</p>
<ul>
  <li><a href="${docs}">API docs</a> <span class="muted">— every operation, with "Try it out"</span></li>
  <li><a href="/ops">Ops dashboard</a> <span class="muted">— sagas, jobs, tasks, dead letters (ops credentials)</span></li>
  ${demo ? html`<li><a href="${demo.link}">Connect a sandbox employer</a> <span class="muted">— the demo application <code>${demo.clientId}</code>; sign in as ${demo.signIn}</span></li>` : ''}
  <li><a href="/providers">Provider catalogue</a></li>
  <li><a href="/health/ready">Readiness</a> · <a href="/metrics">Metrics</a></li>
</ul>
<p class="muted">Start with the quickstart in the repository, <code>docs/quickstart.md</code>: every step from here to a pay statement with a deduction on it.</p>
</main>
</body>
</html>
`.toString();
}
