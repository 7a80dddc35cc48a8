import { SANDBOX_CREDENTIALS } from '../../domain/connections/sandbox-login';
import { Page } from './connect-page.layout';
import { html, Html, jsonScriptData } from './html';

/** Human labels of the spec's product table (unified-api.md, "What the service does"). */
export const PRODUCT_LABELS: Record<string, { name: string; grants: string }> = {
  company: { name: 'Company', grants: 'Read basic company data' },
  directory: { name: 'Directory', grants: 'Read company directory and organization structure' },
  individual: { name: 'Individuals', grants: 'Read individual data, excluding income and employment data' },
  employment: { name: 'Employment', grants: 'Read individual employment and income data' },
  payment: { name: 'Payments', grants: 'Read payroll and contractor related payments by the company' },
  pay_statement: { name: 'Pay statements', grants: 'Read detailed pay statements for each individual' },
  benefits: { name: 'Benefits', grants: 'Create and manage deductions and contributions and enrollment' },
};

export interface ProviderOption {
  id: string;
  name: string;
  assisted: boolean;
  /** Brand colour, `#rrggbb`. */
  color: string;
  /** Whether it matches the search the page was loaded with (`?q=`). */
  matches: boolean;
  /** Why it is listed but cannot be chosen here (e.g. "Not configured"); undefined: selectable. */
  unavailable?: string;
}

/** Where the page's links and forms point, and what every step shows about the request. */
export interface FlowContext {
  applicationName: string;
  /** `flow` hidden field: signed state of the flow so far. */
  flowToken: string;
  /** `/connect?session=…&state=…&origin=…`: starts the link over. */
  restartUrl: string;
  /** The steps this session goes through (the provider step is skipped for some). */
  steps: Step[];
}

export type Step = 'provider' | 'sign-in' | 'review';

const STEP_LABELS: Record<Step, string> = { provider: 'Provider', 'sign-in': 'Sign in', review: 'Review' };

function progress(steps: Step[], current: Step): Html {
  const index = steps.indexOf(current);
  return html`<ol class="steps" aria-label="Progress">${steps.map(
    (step, i) =>
      html`<li${i < index ? html` class="done"` : ''}${i === index ? html` aria-current="step"` : ''}>${STEP_LABELS[step]}${
        i < index ? html`<span class="visually-hidden"> (done)</span>` : ''
      }</li>`,
  )}</ol>
<p class="visually-hidden">Step ${index + 1} of ${steps.length}</p>`;
}

export function providerStep(
  context: FlowContext,
  input: { providers: ProviderOption[]; query: string; hidden: Record<string, string | null> },
): Page {
  const shown = input.providers.filter((p) => p.matches).length;
  return {
    status: 200,
    title: 'Choose your provider',
    body: html`${progress(context.steps, 'provider')}
<h1>Connect ${context.applicationName} to your payroll</h1>
<p class="muted">${context.applicationName} wants access to your HR and payroll data. Choose the provider your company uses.</p>
<form class="search-form" method="get" action="/connect" role="search">
  ${Object.entries(input.hidden).map(([name, value]) => (value === null ? '' : html`<input type="hidden" name="${name}" value="${value}">`))}
  <label for="provider-search">Search providers</label>
  <div class="search">
    <input id="provider-search" type="search" name="q" value="${input.query}" autocomplete="off" spellcheck="false"
      aria-controls="provider-list" aria-describedby="provider-count">
    <button class="secondary no-js" type="submit">Search</button>
  </div>
</form>
<p id="provider-count" class="small muted" role="status" aria-live="polite">${countText(shown, input.providers.length)}</p>
<form method="post" action="/connect/provider">
  <input type="hidden" name="flow" value="${context.flowToken}">
  <ul class="providers" id="provider-list" aria-label="Providers">
    ${input.providers.map(
      (p, i) => html`<li data-id="${p.id}" data-name="${p.name.toLowerCase()}"${p.matches ? '' : html` hidden`}>
      <button class="provider" type="submit" name="provider" value="${p.id}"${p.unavailable ? html` disabled` : ''}>
        <span class="logo logo-${i}" aria-hidden="true">${p.name.charAt(0).toUpperCase()}</span>
        <span class="name">${p.name}</span>${p.assisted ? html`<span class="tag">Assisted</span>` : ''}${
          p.unavailable ? html`<span class="tag">${p.unavailable}</span>` : ''
        }
      </button>
    </li>`,
    )}
  </ul>
  <p id="no-providers" class="muted"${shown === 0 ? '' : html` hidden`}>No provider matches your search. Try another name.</p>
</form>`,
    script: PROVIDER_SEARCH_SCRIPT,
    styles: logoStyles(input.providers),
  };
}

/** Brand-coloured initials, with black or white text, whichever contrasts more. */
function logoStyles(providers: ProviderOption[]): string {
  return providers
    .map((p, i) => {
      if (!/^#[0-9a-f]{6}$/i.test(p.color)) return '';
      const [r, g, b] = [1, 3, 5].map((at) => {
        const c = parseInt(p.color.slice(at, at + 2), 16) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      return `.logo-${i} { background: ${p.color}; color: ${luminance > 0.179 ? '#000' : '#fff'}; }`;
    })
    .join('\n');
}

function countText(shown: number, total: number): string {
  if (shown === total) return `${total} provider${total === 1 ? '' : 's'}`;
  return `${shown} of ${total} providers match`;
}

/**
 * Filters the provider list as the user types (the catalogue's own match, as for `?q=`), and
 * focuses the first match on Enter instead of reloading the page.
 */
const PROVIDER_SEARCH_SCRIPT = `
(function () {
  var input = document.getElementById('provider-search');
  if (!input) return;
  document.documentElement.classList.add('js');
  var items = Array.prototype.slice.call(document.querySelectorAll('#provider-list li'));
  var count = document.getElementById('provider-count');
  var none = document.getElementById('no-providers');
  function apply() {
    var query = input.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (item) {
      var match = query === '' || item.getAttribute('data-id').indexOf(query) !== -1 ||
        item.getAttribute('data-name').indexOf(query) !== -1;
      item.hidden = !match;
      if (match) shown++;
    });
    count.textContent = shown === items.length
      ? items.length + (items.length === 1 ? ' provider' : ' providers')
      : shown + ' of ' + items.length + ' providers match';
    none.hidden = shown !== 0;
  }
  input.addEventListener('input', apply);
  input.form.addEventListener('submit', function (event) {
    event.preventDefault();
    apply();
    var first = items.filter(function (item) { return !item.hidden; })[0];
    if (first) first.querySelector('button').focus();
  });
  apply();
})();
`;

export function signInStep(
  context: FlowContext,
  input: { providerName: string; username?: string; error?: string; canChangeProvider: boolean },
): Page {
  const invalid = input.error !== undefined;
  return {
    // A form shown again with its error is a normal answer (200): a 4xx would make the browser
    // log a failed load in the console for what is just a mistyped password.
    status: 200,
    title: `Sign in to ${input.providerName}`,
    body: html`${progress(context.steps, 'sign-in')}
<h1>Sign in to ${input.providerName}</h1>
<p class="muted">Use the administrator login of your ${input.providerName} account. ${context.applicationName} gets an access grant, never your password.</p>
<div class="hint" role="note">
  <strong>Sandbox test credentials</strong>
  <ul>${SANDBOX_CREDENTIALS.map(
    (c) => html`<li><code>${c.username}</code> / <code>${c.password}</code>: ${c.entities === 1 ? 'one entity' : `${c.entities} entities`}</li>`,
  )}</ul>
</div>
${invalid ? html`<div class="alert" role="alert" id="sign-in-error"><strong>Sign-in failed.</strong> ${input.error}</div>` : ''}
<form method="post" action="/connect/sign-in">
  <input type="hidden" name="flow" value="${context.flowToken}">
  <label for="username">Username</label>
  <input id="username" type="text" name="username" value="${input.username ?? ''}" autocomplete="username" autocapitalize="none"
    spellcheck="false" required${invalid ? html` aria-invalid="true" aria-describedby="sign-in-error"` : html` autofocus`}>
  <label for="password">Password</label>
  <input id="password" type="password" name="password" autocomplete="current-password" required${
    invalid ? html` aria-invalid="true" aria-describedby="sign-in-error" autofocus` : ''
  }>
  <div class="actions"><button type="submit">Sign in</button></div>
</form>
${input.canChangeProvider ? html`<p class="small"><a href="${context.restartUrl}">Choose a different provider</a></p>` : ''}`,
  };
}

export interface EntityChoice {
  name: string;
  /** Already part of the connection (reauthentication): shown, kept, not selectable. */
  existing?: 'active' | 'disconnected';
  checked: boolean;
}

export function reviewStep(
  context: FlowContext,
  input: {
    providerName: string;
    products: string[];
    /** Requested products the provider does not offer through this sign-in method. */
    unavailableProducts: string[];
    entities: EntityChoice[];
    reauthentication: boolean;
    /** Host the browser returns to, when the flow redirects. */
    returnHost: string | null;
    /** Host of the opener's registered origin the answer is posted to, in the embedded flow. */
    openerHost: string | null;
    error?: string;
    formTargets: string[];
  },
): Page {
  const selectable = input.entities.filter((e) => !e.existing);
  const invalid = input.error !== undefined;
  return {
    status: 200,
    title: 'Review access',
    formTargets: input.formTargets,
    body: html`${progress(context.steps, 'review')}
<h1>Allow ${context.applicationName} to access your ${input.providerName} data?</h1>
<p class="muted">${input.reauthentication ? 'You are reconnecting an existing connection. ' : ''}${context.applicationName} is asking to:</p>
<ul class="products">${input.products.map((p) => {
      const label = PRODUCT_LABELS[p];
      return html`<li><strong>${label?.name ?? p}</strong>: ${label?.grants ?? p}</li>`;
    })}</ul>
${
  input.unavailableProducts.length > 0
    ? html`<p class="small muted">${input.providerName} does not offer ${input.unavailableProducts.map((p) => PRODUCT_LABELS[p]?.name ?? p).join(', ')} yet; ${context.applicationName} will not get that data until it does.</p>`
    : ''
}
${invalid ? html`<div class="alert" role="alert" id="review-error">${input.error}</div>` : ''}
<form method="post" action="/connect/consent">
  <input type="hidden" name="flow" value="${context.flowToken}">
  ${entitiesSection(input.entities, selectable.length, input.reauthentication, invalid)}
  <div class="actions">
    <button type="submit" name="decision" value="allow">Allow</button>
    <button class="secondary" type="submit" name="decision" value="deny" formnovalidate>Deny</button>
  </div>
</form>
${input.returnHost ? html`<p class="small muted">Either way, you will return to ${input.returnHost}.</p>` : ''}${
      input.openerHost ? html`<p class="small muted">Either way, the answer goes to ${input.openerHost}, the page that opened this window.</p>` : ''
    }`,
  };
}

function entitiesSection(entities: EntityChoice[], selectable: number, reauthentication: boolean, invalid: boolean): Html {
  if (!reauthentication && entities.length === 1) {
    return html`<p>Entity: <strong>${entities[0].name}</strong></p>`;
  }
  const describedBy = invalid ? html` aria-describedby="review-error"` : html` aria-describedby="entities-help"`;
  return html`<fieldset${describedBy}>
    <legend>${reauthentication ? 'Entities in this connection' : 'Entities to connect'}</legend>
    <p id="entities-help" class="small muted">${
      reauthentication
        ? selectable === 0
          ? 'No other entities were found in this account.'
          : 'Entities already connected stay connected. Tick any others you want to add.'
        : 'This account has several entities. Choose at least one.'
    }</p>
    ${entities.map((e, i) =>
      e.existing
        ? html`<label class="check"><input type="checkbox" checked disabled> ${e.name} <span class="tag">${
            e.existing === 'active' ? 'Already connected' : 'Disconnected'
          }</span></label>`
        : html`<label class="check" for="entity-${i}"><input id="entity-${i}" type="checkbox" name="entity" value="${e.name}"${
            e.checked ? html` checked` : ''
          }> ${e.name}${reauthentication ? html` <span class="tag">New</span>` : ''}</label>`,
    )}
  </fieldset>`;
}

/** Result of the embedded flow (no redirect_uri): handed to the opener window, shown otherwise. */
export type EmbeddedResult =
  | { type: 'connect:success'; code: string; state: string | null }
  | { type: 'connect:error'; error: 'access_denied'; error_description: string; state: string | null };

/** `origin`: the registered origin the result is posted to, exactly (never `*`). */
export function embeddedResultPage(applicationName: string, result: EmbeddedResult, origin: string): Page {
  const success = result.type === 'connect:success';
  return {
    status: 200,
    title: success ? 'Connected' : 'Access denied',
    body: html`<h1>${success ? 'You are connected' : 'Access denied'}</h1>
<p id="result-status" role="status">${
      success
        ? `${applicationName} can now access the data you allowed. You can close this window.`
        : `You did not allow ${applicationName} to access your data. You can close this window.`
    }</p>
${
  success
    ? html`<p class="small muted">If ${applicationName} asks you for an authorization code, copy this one (it works once, for 10 minutes):</p>
<code class="code" id="authorization-code">${result.code}</code>`
    : ''
}
<script type="application/json" id="connect-result">${jsonScriptData({
      message: result,
      targetOrigin: origin,
      notified: `${applicationName} has been told; you can close this window.`,
    })}</script>`,
    script: EMBEDDED_RESULT_SCRIPT,
  };
}

/**
 * Hands the result to the window that opened the flow, with the application's registered
 * origin as the target: the browser delivers it only if the opener is on that origin, so a
 * page elsewhere that opened the flow never sees the code.
 */
const EMBEDDED_RESULT_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('connect-result').textContent);
  var target = window.opener;
  if (!target || target === window) return;
  target.postMessage(data.message, data.targetOrigin);
  var status = document.getElementById('result-status');
  status.textContent = status.textContent.replace('You can close this window.', data.notified);
})();
`;

export function errorPage(status: number, message: string): Page {
  const heading =
    status === 404 ? 'This link does not work' : status === 410 ? 'This link can no longer be used' : status >= 500 ? 'Something went wrong' : 'We could not continue';
  const advice =
    status >= 500
      ? 'Please try again in a moment. If it keeps happening, contact the application that sent you here.'
      : 'Go back to the application that sent you here and start connecting again; it will give you a new link.';
  return {
    status,
    title: heading,
    body: html`<h1>${heading}</h1>
<div class="alert" role="alert"><p>${message}</p></div>
<p class="muted">${advice}</p>`,
  };
}
