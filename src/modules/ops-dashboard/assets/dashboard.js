/*
 * Ops dashboard: plain JavaScript, no framework, no build step. Every datum comes from
 * /ops/api with the ops credentials the sign-in form took, except the public provider catalogue
 * (/providers); data reaches the page as text only (textContent, text nodes and attribute
 * values), never as HTML. Times are UTC throughout, the header's clock included.
 */
(() => {
  'use strict';

  const API = 'ops/api';
  const SIGN_IN_CHECK = 'ops/session';
  const PROVIDERS = 'providers';
  // Reads that mention individuals ask the ops API to name them too.
  const WITH_NAMES = '?include=individual_names';
  const REFRESH_MS = 5000;
  const PAGE_SIZE = 25;
  const STORAGE_KEY = 'ops-dashboard.credentials';
  // The device token a sign-in hands out: kept across visits (unlike the credentials), it keeps
  // this browser signing in while a guesser elsewhere has used up the username's tries.
  const DEVICE_KEY = 'ops-dashboard.device';
  const DEVICE_HEADER = 'ops-device-token';

  // The ops API's own rules, checked here first so a typo is a message on the form, not a 400.
  const DURATION = /^([1-9][0-9]{0,4})([smhd])$/;
  const UNIT_MS = { s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const NAME = /^[a-z][a-z0-9_.]{0,63}$/;

  const SAGA_TYPES = ['enrollment', 'new_hire', 'contribution_change', 'termination', 'assisted_fulfilment'];
  const SAGA_STATES = ['started', 'waiting', 'completed', 'failed'];
  const JOB_STATUSES = ['pending', 'in_progress', 'complete', 'error', 'reauth_error', 'permissions_error'];
  const JOB_KINDS = ['automated', 'manual', 'internal'];
  const JOB_TYPES = [
    'assisted_apply',
    'benefit_create',
    'benefit_enroll',
    'benefit_enrollment_group',
    'benefit_register',
    'benefit_unenroll',
    'benefit_update',
    'data_sync_all',
  ];
  const TASK_STATUSES = ['open', 'completed', 'failed', 'cancelled'];
  const TASK_TYPES = ['benefit_create', 'benefit_register', 'benefit_update', 'benefit_enroll', 'benefit_unenroll'];
  const DUE_STATES = ['on_time', 'due_today', 'overdue'];
  const DEAD_LETTER_STATUSES = ['open', 'replayed', 'discarded'];
  const DISCREPANCY_KINDS = ['missing', 'amount_mismatch', 'unexpected', 'match_mismatch', 'over_limit', 'configuration_drift'];
  const DISCREPANCY_STATUSES = ['open', 'acknowledged', 'resolved'];
  const CONNECTION_STATUSES = ['connected', 'reauth', 'disconnected'];
  const DELIVERY_STATUSES = ['failed', 'pending', 'delivered'];
  // Webhook deliveries are numbered (a bigint), not UUIDs.
  const DELIVERY_ID = /^\d{1,18}$/;
  const AGE_BUCKETS = [
    ['under_1m', 'Under 1 min'],
    ['1m_to_15m', '1–15 min'],
    ['15m_to_1h', '15 min – 1 h'],
    ['1h_to_24h', '1–24 h'],
    ['over_24h', 'Over 24 h'],
  ];

  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------------------------------
  // DOM helpers: elements from data, text only.

  /** An element: props set attributes (on* add listeners, text sets textContent); children are nodes or text. */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = String(value);
      else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
      else if (value === true) el.setAttribute(key, '');
      else el.setAttribute(key, String(value));
    }
    appendAll(el, children);
    return el;
  }

  function appendAll(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
  }

  /** Replaces an element's content with nodes built from data. */
  function fill(el, ...children) {
    el.replaceChildren();
    appendAll(el, children);
  }

  const link = (href, text, props) => h('a', { href, ...props }, text);
  // The tail: the ids of busy rows are time-ordered (UUID version 7), so their first characters
  // are the same for every row of the same minute; the last ones are random.
  const shortId = (id) => (typeof id === 'string' && id.length > 8 ? `…${id.slice(-8)}` : String(id ?? '—'));
  const dash = (value) => (value === null || value === undefined || value === '' ? '—' : String(value));
  const words = (value) => String(value).replace(/_/g, ' ');

  /** A hash route with its query, e.g. #/sagas?state=failed. */
  function hrefOf(path, query) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query || {})) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
    const qs = params.toString();
    return `#${path}${qs ? `?${qs}` : ''}`;
  }

  const idLink = (path, id, props) => link(`#${path}/${encodeURIComponent(id)}`, shortId(id), { title: id, class: 'mono', ...props });

  /** A class name from a data value: letters, digits and underscores only. */
  const badgeClass = (value) => `badge badge-${String(value).toLowerCase().replace(/[^a-z0-9_]/g, '')}`;
  const badge = (value) => (value === null || value === undefined ? '—' : h('span', { class: badgeClass(value) }, words(value)));

  function utc(iso) {
    if (!iso) return '—';
    const text = String(iso).replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
    return h('time', { datetime: iso, title: iso }, text);
  }

  /** A time of day in UTC, 24-hour (14:05:09 UTC), like every other time on the page. */
  function utcClock(date) {
    const iso = date.toISOString();
    return [h('time', { datetime: iso }, iso.slice(11, 19)), ' UTC'];
  }

  /**
   * A person: their name where the service knows it (names, from the API's individual_names),
   * with the id beside it, whole and selectable in one click, or shortened in lists (the whole
   * id in its title); the id alone where no name is known.
   */
  function person(id, names, { short = false } = {}) {
    const text = short ? shortId(id) : String(id);
    const name = names && typeof id === 'string' ? names[id.toLowerCase()] : undefined;
    if (typeof name !== 'string' || name === '') return h('span', { class: 'mono', title: short ? id : undefined }, text);
    return h(
      'span',
      { class: 'person' },
      h('span', { class: 'person-name' }, name),
      ' ',
      h('span', { class: `person-id mono${short ? '' : ' whole'}`, title: short ? id : undefined }, text),
    );
  }

  /** People as a list, the first `max` of them with a count of the rest. */
  function people(ids, names, max = 20) {
    if (ids.length === 0) return null;
    return h(
      'ul',
      { class: 'people' },
      ids.slice(0, max).map((id) => h('li', null, person(id, names))),
      ids.length > max ? h('li', { class: 'muted' }, `and ${ids.length - max} more`) : null,
    );
  }

  /**
   * The individual ids a payload or job params hold (individual_id values, individual_ids
   * lists, at any depth), each once: the rule the ops API names them by.
   */
  function individualIdsIn(value) {
    const found = new Set();
    const add = (id) => {
      if (typeof id === 'string' && UUID.test(id)) found.add(id.toLowerCase());
    };
    let level = [value];
    for (let depth = 0; depth <= 8 && level.length > 0; depth++) {
      const next = [];
      for (const node of level) {
        if (Array.isArray(node)) next.push(...node.filter((item) => item !== null && typeof item === 'object'));
        else if (node !== null && typeof node === 'object') {
          for (const [key, child] of Object.entries(node)) {
            if (key === 'individual_id') add(child);
            else if (key === 'individual_ids' && Array.isArray(child)) child.forEach(add);
            else if (child !== null && typeof child === 'object') next.push(child);
          }
        }
      }
      level = next;
    }
    return [...found];
  }

  function duration(seconds) {
    const s = Math.max(0, Math.floor(Number(seconds) || 0));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min`;
    const hours = Math.floor(m / 60);
    if (hours < 24) return `${hours} h ${m % 60} min`;
    return `${Math.floor(hours / 24)} d ${hours % 24} h`;
  }

  /** "key: value, key: value" for a step's detail or an audit entry's detail. */
  function compact(detail) {
    if (detail === null || detail === undefined) return '';
    if (typeof detail !== 'object') return String(detail);
    return Object.entries(detail)
      .map(([key, value]) => `${key}: ${value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
      .join(', ');
  }

  /** compact, with the individual it names shown as a person. */
  function compactWithPeople(detail, names) {
    if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return compact(detail);
    return Object.entries(detail).map(([key, value], i) => [
      i ? ', ' : '',
      key === 'individual_id' && typeof value === 'string' ? [`${key}: `, person(value, names)] : compact({ [key]: value }),
    ]);
  }

  const jsonBlock = (value, label) => h('pre', { class: 'json', tabindex: '0', 'aria-label': label }, JSON.stringify(value, null, 2));

  function facts(pairs) {
    const dl = h('dl', { class: 'facts' });
    for (const [term, value] of pairs) {
      if (value === undefined) continue;
      dl.append(h('dt', null, term), h('dd', null, value === null || value === '' ? '—' : value));
    }
    return dl;
  }

  function table(caption, columns, rows, rowProps) {
    if (rows.length === 0) return h('div', { class: 'table-wrap' }, h('p', { class: 'empty' }, `No ${caption.toLowerCase()} match.`));
    return h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        null,
        h('caption', { class: 'visually-hidden' }, caption),
        h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : undefined }, c.header)))),
        h(
          'tbody',
          null,
          rows.map((row) =>
            h(
              'tr',
              rowProps ? rowProps(row) : null,
              columns.map((c) => h('td', { class: [c.num ? 'num' : '', c.cellClass || ''].join(' ').trim() || undefined }, c.cell(row))),
            ),
          ),
        ),
      ),
    );
  }

  function pager(path, query, paging, shown) {
    const offset = paging.offset;
    const count = paging.count;
    const first = count === 0 ? 0 : offset + 1;
    const last = offset + shown;
    const nav = h('nav', { class: 'pager', 'aria-label': 'Pages' });
    nav.append(h('span', null, count === 0 ? 'Nothing to show' : `Showing ${first}–${last} of ${count}`));
    nav.append(
      offset > 0
        ? link(hrefOf(path, { ...query, offset: Math.max(0, offset - PAGE_SIZE) || undefined }), '← Previous page', { 'data-focus-key': 'page-prev' })
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Previous page'),
    );
    nav.append(
      last < count
        ? link(hrefOf(path, { ...query, offset: offset + PAGE_SIZE }), 'Next page →', { 'data-focus-key': 'page-next' })
        : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Next page →'),
    );
    return nav;
  }

  // ---------------------------------------------------------------------------------------
  // Messages

  let statusTimer = 0;
  function announce(text) {
    // Cleared first so the same words said twice are announced twice; gone again after a while.
    $('status').textContent = '';
    window.clearTimeout(statusTimer);
    window.setTimeout(() => {
      $('status').textContent = text;
      statusTimer = window.setTimeout(() => {
        if ($('status').textContent === text) $('status').textContent = '';
      }, 15000);
    }, 30);
  }

  function showError(text) {
    $('error').textContent = text || '';
  }

  function setRefreshStatus(text) {
    if ($('refresh-status').textContent !== text) $('refresh-status').textContent = text;
  }

  // ---------------------------------------------------------------------------------------
  // Credentials and the API

  const session = { basic: null, username: null };

  class ApiError extends Error {
    constructor(status, message, body) {
      super(message);
      this.status = status;
      this.body = body;
    }
  }

  /** Thrown when the API refuses the credentials: the page is back on the sign-in form. */
  class SignedOut extends Error {}

  function basicOf(username, password) {
    const bytes = new TextEncoder().encode(`${username}:${password}`);
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary);
  }

  /** A random Idempotency-Key (crypto.randomUUID needs a secure context; getRandomValues does not). */
  function idempotencyKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return `ops-dashboard-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  }

  async function readJson(response) {
    const text = await response.text();
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  function deviceToken() {
    try {
      return window.localStorage.getItem(DEVICE_KEY);
    } catch {
      return null;
    }
  }

  /** Keeps the (renewed) device token an accepted sign-in answered with. */
  function keepDeviceToken(response) {
    const token = response.headers.get(DEVICE_HEADER);
    if (!token) return;
    try {
      window.localStorage.setItem(DEVICE_KEY, token);
    } catch {
      // Storage may be off (private mode): this browser then counts as a new device each time.
    }
  }

  /** Headers every request with the credentials carries: them, and the device token when there is one. */
  function signedHeaders(basic) {
    const headers = { accept: 'application/json', authorization: `Basic ${basic}` };
    const device = deviceToken();
    if (device) headers[DEVICE_HEADER] = device;
    return headers;
  }

  async function api(path, { method = 'GET', body } = {}) {
    if (!session.basic) throw new SignedOut('Not signed in');
    const headers = signedHeaders(session.basic);
    if (method !== 'GET') {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = idempotencyKey();
    }
    let response;
    try {
      // credentials: 'omit' keeps the browser's own Basic-auth prompt out of the way on a 401.
      response = await fetch(`${API}${path}`, {
        method,
        headers,
        body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (error) {
      throw new ApiError(0, `The service did not answer (${error.message}).`);
    }
    const data = await readJson(response);
    if (response.ok) keepDeviceToken(response);
    if (response.status === 401) {
      signOut('The service no longer accepts these credentials. Sign in again.');
      throw new SignedOut('Signed out');
    }
    if (!response.ok) {
      const message = data && typeof data.message === 'string' ? data.message : `The service answered ${response.status}.`;
      throw new ApiError(response.status, message, data);
    }
    return data;
  }

  const query = (params) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
    const text = search.toString();
    return text ? `?${text}` : '';
  };

  /**
   * The provider catalogue (GET /providers: public, the connect page reads it too) as [id,
   * display name] pairs, fetched once; a failed fetch is tried again on the next call.
   */
  const catalogue = { providers: [], names: new Map(), loading: null };

  function loadProviders() {
    catalogue.loading ??= fetch(PROVIDERS, { headers: { accept: 'application/json' }, credentials: 'omit' })
      .then(async (response) => {
        const list = await readJson(response);
        if (!response.ok || !Array.isArray(list)) throw new ApiError(response.status, `The provider catalogue did not load (${response.status}).`);
        catalogue.providers = list.filter((p) => p && typeof p.id === 'string').map((p) => [p.id, typeof p.display_name === 'string' ? p.display_name : p.id]);
        catalogue.names = new Map(catalogue.providers);
      })
      .catch((error) => {
        catalogue.loading = null;
        throw error;
      });
    return catalogue.loading;
  }

  /** Views that show providers wait for the catalogue, but never fail for want of it (ids then). */
  const withProviders = () => loadProviders().catch(() => undefined);

  /** A provider's display name with its id beside it, or the id alone if the catalogue does not list it. */
  function provider(id, { short = false } = {}) {
    const name = catalogue.names.get(id);
    if (!name) return h('span', { class: 'mono' }, id);
    return short ? h('span', { title: id }, name) : [name, ' ', h('span', { class: 'mono muted' }, `(${id})`)];
  }

  async function checkCredentials(basic) {
    const response = await fetch(SIGN_IN_CHECK, {
      method: 'POST',
      headers: signedHeaders(basic),
      credentials: 'omit',
      cache: 'no-store',
    });
    const data = await readJson(response);
    if (response.ok) keepDeviceToken(response);
    if (!response.ok || !data) throw new ApiError(response.status, (data && data.message) || `The service answered ${response.status}.`);
    return data;
  }

  function remember(basic, username) {
    session.basic = basic;
    session.username = username;
    try {
      sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ basic, username }));
    } catch {
      // Storage may be off (private mode): the credentials then last until the page is left.
    }
  }

  function forget() {
    session.basic = null;
    session.username = null;
    try {
      sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      // nothing stored
    }
  }

  function showSignIn(message) {
    current = null;
    $('nav').hidden = true;
    $('session').hidden = true;
    $('view').hidden = true;
    fill($('view'));
    $('sign-in').hidden = false;
    $('sign-in-error').textContent = message || '';
    setRefreshStatus('');
    showError('');
    document.title = 'Sign in · Ops dashboard';
    const user = $('ops-username');
    if (message && user.value) $('ops-password').focus();
    else user.focus();
  }

  function signOut(message) {
    forget();
    showSignIn(message);
  }

  function enterApp() {
    $('sign-in').hidden = true;
    $('ops-password').value = '';
    $('nav').hidden = false;
    $('session').hidden = false;
    $('view').hidden = false;
    $('signed-in-as').textContent = `Signed in as ${session.username}`;
    route({ focus: true });
  }

  async function onSignIn(event) {
    event.preventDefault();
    const username = $('ops-username').value.trim();
    const password = $('ops-password').value;
    if (!username || !password) {
      $('sign-in-error').textContent = 'Enter the ops username and password.';
      (username ? $('ops-password') : $('ops-username')).focus();
      return;
    }
    const button = event.target.querySelector('button[type=submit]');
    button.disabled = true;
    $('sign-in-error').textContent = '';
    try {
      const basic = basicOf(username, password);
      const answer = await checkCredentials(basic);
      if (!answer.signed_in) {
        $('sign-in-error').textContent = `Sign-in failed: ${answer.message || 'the username or password is not right.'}`;
        $('ops-password').select();
        $('ops-password').focus();
        return;
      }
      remember(basic, answer.username || username);
      enterApp();
    } catch (error) {
      $('sign-in-error').textContent = `Sign-in failed: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Dialog asking for a note (optional or required). Resolves to the note, or null if cancelled.
  // `initial` fills the field (a note to edit); `field: false` asks only to confirm (resolves to '').

  function askNote({ title, text, label, required, confirmLabel, danger, initial, field = true }) {
    return new Promise((resolve) => {
      const opener = document.activeElement;
      const openerKey = opener && opener.getAttribute ? opener.getAttribute('data-focus-key') : null;
      const error = h('p', { class: 'field-error', id: 'dialog-note-error' });
      const input = h('input', {
        type: 'text',
        id: 'dialog-note',
        name: 'note',
        maxlength: '2000',
        autocomplete: 'off',
        required: required || undefined,
        'aria-describedby': 'dialog-note-error',
      });
      if (initial) input.value = initial;
      const cancel = h('button', { type: 'button' }, 'Cancel');
      const form = h(
        'form',
        { novalidate: true },
        h('h2', { id: 'dialog-title' }, title),
        text ? h('p', null, text) : null,
        field ? h('div', { class: 'field' }, h('label', { for: 'dialog-note' }, label), input, error) : null,
        h('div', { class: 'actions' }, cancel, h('button', { type: 'submit', class: danger ? 'danger' : 'primary' }, confirmLabel)),
      );
      const dialog = h('dialog', { 'aria-labelledby': 'dialog-title' }, form);
      let done = false;
      const finish = (value) => {
        if (done) return;
        done = true;
        // Back to the opener only if focus is still in the dialog or was lost with it: a late
        // 'close' event must not take focus from where the user has since moved it.
        const active = document.activeElement;
        const focusLost = !active || active === document.body || dialog.contains(active);
        if (dialog.open) dialog.close();
        dialog.remove();
        if (focusLost) {
          // A reload that was already on its way may have replaced the button: focus its successor.
          const back = opener && opener.isConnected ? opener : openerKey ? $('view').querySelector(`[data-focus-key="${CSS.escape(openerKey)}"]`) : null;
          if (back && typeof back.focus === 'function') back.focus();
        }
        resolve(value);
      };
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        const value = field ? input.value.trim() : '';
        if (field && required && !value) {
          error.textContent = `${label} is required.`;
          input.setAttribute('aria-invalid', 'true');
          input.focus();
          return;
        }
        finish(value);
      });
      cancel.addEventListener('click', () => finish(null));
      // Escape: closed here and now, not when the browser's 'close' event comes later.
      dialog.addEventListener('cancel', (event) => {
        event.preventDefault();
        finish(null);
      });
      dialog.addEventListener('close', () => finish(null));
      document.body.append(dialog);
      dialog.showModal();
      // Without a field, Cancel has focus: Enter alone changes nothing.
      if (field) input.focus();
      else cancel.focus();
    });
  }

  /** Runs an action from a button: disabled while it runs, errors shown, then the view reloads. */
  async function runAction(button, action) {
    showError('');
    const key = button ? button.getAttribute('data-focus-key') : null;
    if (button) button.disabled = true;
    try {
      await action();
    } catch (error) {
      if (!(error instanceof SignedOut)) showError(error.message);
    } finally {
      if (button && button.isConnected) button.disabled = false;
    }
    if (!current) return;
    await refreshView({ force: true });
    // Disabling the button dropped focus: back to it if it is still there, else to the title.
    if (!document.activeElement || document.activeElement === document.body) {
      const again = key ? $('view').querySelector(`[data-focus-key="${CSS.escape(key)}"]`) : null;
      const target = again || $('view-title');
      if (target) target.focus();
    }
  }

  // ---------------------------------------------------------------------------------------
  // Filter forms

  /**
   * A select filter's choices as [value, label] pairs (options are values, pairs, or a function
   * giving either), with `value` among them: a value the choices lack (an address typed by hand,
   * a provider no longer listed) stays a choice of its own, so the form shows the list's filter.
   */
  function choicesOf(f, value) {
    const options = typeof f.options === 'function' ? f.options() : f.options;
    const choices = options.map((o) => (Array.isArray(o) ? o : [o, words(o)]));
    if (value && !choices.some(([v]) => v === value)) choices.push([value, value]);
    return choices;
  }

  /** Fills a select with "Any" and the filter's choices, `value` selected. */
  function fillSelect(select, f, value) {
    const choices = choicesOf(f, value);
    fill(select, h('option', { value: '' }, f.any || 'Any'), choices.map(([v, label]) => h('option', { value: v }, label)));
    select.value = value || '';
    select.dataset.choices = JSON.stringify(choices);
  }

  /**
   * A filter form for a list: each filter is a select (options) or a text field (check returns
   * an error message or null). Submitting moves to the route with the new query (offset reset);
   * the query names in `keep` are set elsewhere on the view (tabs) and carried over, Clear included.
   */
  function filterForm(path, filters, values, extraCheck, keep = []) {
    const kept = () => Object.fromEntries(keep.map((name) => [name, values.get(name) || undefined]));
    const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filters', novalidate: true });
    const inputs = {};
    const errors = {};
    for (const f of filters) {
      const id = `filter-${f.name}`;
      const errorId = `${id}-error`;
      const hintId = f.hint ? `${id}-hint` : null;
      let input;
      if (f.options) {
        input = h('select', { id, name: f.name });
        fillSelect(input, f, values.get(f.name) || '');
      } else {
        input = h('input', {
          id,
          name: f.name,
          type: 'text',
          class: f.size === 'id' ? 'id-input' : f.size === 'medium' ? 'medium-input' : 'short-input',
          placeholder: f.placeholder,
          autocomplete: 'off',
          spellcheck: 'false',
          'aria-describedby': [hintId, errorId].filter(Boolean).join(' '),
        });
      }
      input.value = values.get(f.name) || '';
      inputs[f.name] = input;
      errors[f.name] = h('p', { class: 'field-error', id: errorId });
      form.append(h('div', { class: 'field' }, h('label', { for: id }, f.label), input, hintId ? h('span', { class: 'hint', id: hintId }, f.hint) : null, errors[f.name]));
    }
    form.append(
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', 'data-focus-key': 'filter-apply' }, 'Apply filters'),
        h('button', { type: 'button', 'data-focus-key': 'filter-clear', onclick: () => navigate(hrefOf(path, kept())) }, 'Clear'),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const next = kept();
      let firstBad = null;
      for (const f of filters) {
        const value = inputs[f.name].value.trim();
        const problem = value && f.check ? f.check(value) : null;
        errors[f.name].textContent = problem || '';
        if (problem) {
          inputs[f.name].setAttribute('aria-invalid', 'true');
          firstBad = firstBad || inputs[f.name];
        } else {
          inputs[f.name].removeAttribute('aria-invalid');
        }
        if (value) next[f.name] = value;
      }
      if (!firstBad && extraCheck) {
        const problem = extraCheck(next);
        if (problem) {
          errors[problem.field].textContent = problem.message;
          inputs[problem.field].setAttribute('aria-invalid', 'true');
          firstBad = inputs[problem.field];
        }
      }
      if (firstBad) {
        firstBad.focus();
        return;
      }
      navigate(hrefOf(path, next));
    });
    /** Back/forward: the fields show the route's query again. */
    form.syncFrom = (params) => {
      values = params;
      for (const f of filters) {
        if (f.options) fillSelect(inputs[f.name], f, params.get(f.name) || '');
        else inputs[f.name].value = params.get(f.name) || '';
        inputs[f.name].removeAttribute('aria-invalid');
        errors[f.name].textContent = '';
      }
    };
    /** Choices that arrived later (the provider catalogue): the selects take them, keeping what is chosen. */
    form.refreshChoices = () => {
      for (const f of filters) {
        if (typeof f.options !== 'function') continue;
        const select = inputs[f.name];
        // Rebuilt only when they changed, so live refresh leaves a select someone is using alone.
        if (JSON.stringify(choicesOf(f, select.value)) !== select.dataset.choices) fillSelect(select, f, select.value);
      }
    };
    return form;
  }

  const uuidCheck = (label) => (value) => (UUID.test(value) ? null : `${label} must be a UUID, e.g. 0f3a6c1e-…`);
  const durationCheck = (value) => (DURATION.test(value) ? null : 'Use a duration like 90s, 15m, 2h or 3d.');
  const nameCheck = (example) => (value) => (NAME.test(value) ? null : `Use a lower-case name such as ${example}.`);
  const durationMs = (text) => {
    const match = DURATION.exec(text);
    return match ? Number(match[1]) * UNIT_MS[match[2]] : undefined;
  };

  // ---------------------------------------------------------------------------------------
  // Views. Each is { title, section, mount(container, route) → controller }, where the
  // controller loads its data (load), renders it (render), and may take a new query (update).

  function heading(text, crumbs) {
    return [
      crumbs ? h('p', { class: 'breadcrumbs' }, crumbs) : null,
      h('h1', { tabindex: '-1', id: 'view-title' }, text),
    ];
  }

  /** A paged, filtered list of one ops API collection. */
  function listView(spec) {
    return {
      title: spec.title,
      section: spec.section,
      mount(container, routeInfo) {
        let params = routeInfo.query;
        const form = filterForm(spec.path, spec.filters, params, spec.extraCheck);
        const extra = h('div');
        const results = h('div', { 'aria-live': 'off' });
        fill(container, heading(spec.title), spec.intro ? h('p', { class: 'muted' }, spec.intro) : null, spec.quickLinks ? spec.quickLinks() : null, form, extra, results);
        const controller = {
          update(next) {
            params = next.query;
            form.syncFrom(params);
          },
          async load() {
            if (spec.beforeLoad) {
              await spec.beforeLoad();
              form.refreshChoices();
            }
            const q = {};
            for (const f of spec.filters) if (params.get(f.name)) q[f.name] = params.get(f.name);
            const offset = Number(params.get('offset')) || 0;
            return api(`${spec.endpoint}${query({ ...q, ...spec.query, limit: PAGE_SIZE, offset })}`);
          },
          render(page) {
            const q = {};
            for (const f of spec.filters) if (params.get(f.name)) q[f.name] = params.get(f.name);
            if (spec.toolbar) fill(extra, spec.toolbar(page, controller));
            fill(results, table(spec.title, spec.columns(controller), page.data, spec.rowProps && ((row) => spec.rowProps(row, controller))), pager(spec.path, q, page.paging, page.data.length));
          },
          announceLoaded(page) {
            announce(`${spec.title}: ${page.paging.count} found.`);
          },
        };
        if (spec.setup) spec.setup(controller);
        return controller;
      },
    };
  }

  /** A view of one item by id (saga, job, task, dead letter, connection; a webhook delivery by its number). */
  function detailView(spec) {
    return {
      title: spec.title,
      section: spec.section,
      mount(container, routeInfo) {
        const id = routeInfo.id;
        const body = h('div');
        fill(container, heading(`${spec.title} ${shortId(id)}`, [link(`#${spec.backPath}`, spec.backLabel), ' / ', h('span', { class: 'mono' }, id)]), body);
        if (!(spec.idPattern || UUID).test(id)) {
          fill(body, h('p', { class: 'error' }, `“${id}” is not a ${spec.title.toLowerCase()} id (${spec.idKind || 'a UUID'}).`));
          return null;
        }
        const controller = {
          async load() {
            if (spec.beforeLoad) await spec.beforeLoad();
            let item;
            try {
              item = await api(`${spec.endpoint}/${encodeURIComponent(id)}${spec.suffix || ''}`);
            } catch (error) {
              if (error instanceof ApiError && error.status === 404) return { notFound: error.message };
              throw error;
            }
            return spec.enrich ? spec.enrich(item) : item;
          },
          render(item) {
            if (item.notFound) fill(body, h('p', { class: 'error' }, item.notFound));
            else fill(body, spec.render(item, controller));
          },
        };
        return controller;
      },
    };
  }

  // --- Overview

  function card(value, label, href, tone) {
    const content = [h('span', { class: 'value' }, String(value)), h('span', { class: 'label' }, label)];
    return h('li', { class: `card${tone ? ` ${tone}` : ''}` }, href ? link(href, content) : content);
  }

  function eventsChart(perMinute) {
    const max = Math.max(1, ...perMinute.flatMap((m) => [m.received, m.emitted]));
    const chart = h('div', { class: 'chart', 'aria-hidden': 'true' });
    for (const m of perMinute) {
      const received = h('span', { class: 'bar received', title: `${m.minute}: ${m.received} received` });
      const emitted = h('span', { class: 'bar emitted', title: `${m.minute}: ${m.emitted} emitted` });
      // CSSOM properties, not style attributes: allowed by the page's style-src 'self'.
      received.style.height = `${(m.received / max) * 100}%`;
      emitted.style.height = `${(m.emitted / max) * 100}%`;
      chart.append(h('span', { class: 'chart-minute' }, received, emitted));
    }
    return chart;
  }

  /** Live payroll discrepancies: open and acknowledged, then by kind (both statuses). */
  function discrepanciesPanel(d) {
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'ov-discrepancies' },
      h('h2', { id: 'ov-discrepancies' }, 'Payroll discrepancies'),
      h(
        'ul',
        { class: 'cards', 'aria-label': 'Live discrepancies' },
        card(d.open, 'open discrepancies', hrefOf('/discrepancies', { status: 'open' }), d.open > 0 ? 'warn' : null),
        card(d.acknowledged, 'acknowledged', hrefOf('/discrepancies', { status: 'acknowledged' })),
      ),
      h('h3', { class: 'visually-hidden' }, 'Live discrepancies by kind'),
      table(
        'Live discrepancies by kind',
        [
          { header: 'Kind', cell: ([kind]) => link(hrefOf('/discrepancies', { kind }), words(kind)) },
          { header: 'Open and acknowledged', num: true, cell: ([, n]) => String(n) },
        ],
        DISCREPANCY_KINDS.map((kind) => [kind, (d.by_kind && d.by_kind[kind]) ?? 0]),
      ),
    );
  }

  const overviewView = {
    title: 'Overview',
    section: 'overview',
    mount(container) {
      const body = h('div');
      fill(container, heading('Overview'), body);
      return {
        load: () => api('/overview?minutes=15'),
        render(o) {
          const states = o.sagas.by_state;
          const sagaCards = h(
            'ul',
            { class: 'cards', 'aria-label': 'Sagas by state' },
            card(o.sagas.total, 'All sagas', '#/sagas'),
            SAGA_STATES.map((s) => card(states[s] ?? 0, words(s), hrefOf('/sagas', { state: s }), s === 'failed' && states[s] > 0 ? 'alert' : null)),
          );
          const byType = table(
            'Sagas by type and state',
            [
              { header: 'Type', cell: (t) => link(hrefOf('/sagas', { type: t }), words(t)) },
              ...SAGA_STATES.map((s) => ({
                header: words(s),
                num: true,
                cell: (t) => {
                  const n = o.sagas.by_type[t] ? o.sagas.by_type[t][s] ?? 0 : 0;
                  return n > 0 ? link(hrefOf('/sagas', { type: t, state: s }), String(n)) : '0';
                },
              })),
            ],
            Object.keys(o.sagas.by_type),
          );
          const events = o.events;
          const perMinuteTable = h(
            'table',
            { class: 'visually-hidden' },
            h('caption', null, 'Events per minute'),
            h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Minute (UTC)'), h('th', { scope: 'col' }, 'Received'), h('th', { scope: 'col' }, 'Emitted'))),
            h('tbody', null, events.per_minute.map((m) => h('tr', null, h('td', null, m.minute.slice(11, 16)), h('td', null, String(m.received)), h('td', null, String(m.emitted))))),
          );
          const pending = o.jobs.pending;
          const jobsTable = table(
            'Pending jobs by age',
            [
              { header: 'Waiting since creation', cell: (b) => b[1] },
              { header: 'Jobs', num: true, cell: (b) => String(pending.by_age[b[0]] ?? 0) },
            ],
            AGE_BUCKETS,
          );
          fill(
            body,
            h('div', { class: 'grid' },
              h('section', { class: 'panel', 'aria-labelledby': 'ov-sagas' }, h('h2', { id: 'ov-sagas' }, 'Sagas'), sagaCards, h('h3', { class: 'visually-hidden' }, 'By type'), byType),
              h(
                'section',
                { class: 'panel', 'aria-labelledby': 'ov-events' },
                h('h2', { id: 'ov-events' }, `Events per minute (last ${events.window_minutes} min)`),
                h('ul', { class: 'cards' }, card(events.received_total, 'received', null), card(events.emitted_total, 'emitted', null)),
                eventsChart(events.per_minute),
                h('p', { class: 'legend', 'aria-hidden': 'true' }, h('span', null, h('span', { class: 'swatch received' }), 'received'), h('span', null, h('span', { class: 'swatch emitted' }), 'emitted'), h('span', null, `oldest ${events.per_minute.length ? events.per_minute[0].minute.slice(11, 16) : ''} → now (UTC)`)),
                perMinuteTable,
              ),
            ),
            h('div', { class: 'grid' },
              h(
                'section',
                { class: 'panel', 'aria-labelledby': 'ov-jobs' },
                h('h2', { id: 'ov-jobs' }, 'Jobs'),
                h(
                  'ul',
                  { class: 'cards' },
                  card(pending.total, 'pending', hrefOf('/jobs', { status: 'pending' }), pending.by_age.over_24h > 0 ? 'warn' : null),
                  card(pending.due, 'due now', hrefOf('/jobs', { status: 'pending' })),
                  card(pending.scheduled_later, 'scheduled later', hrefOf('/jobs', { status: 'pending' })),
                  card(o.jobs.in_progress, 'in progress', hrefOf('/jobs', { status: 'in_progress' })),
                  card(o.jobs.error, 'failed', hrefOf('/jobs', { status: 'error' }), o.jobs.error > 0 ? 'alert' : null),
                ),
                h('h3', { class: 'visually-hidden' }, 'Pending jobs by age'),
                jobsTable,
              ),
              h(
                'section',
                { class: 'panel', 'aria-labelledby': 'ov-tasks' },
                h('h2', { id: 'ov-tasks' }, 'Ops tasks and dead letters'),
                h(
                  'ul',
                  { class: 'cards' },
                  card(o.tasks.open, 'open tasks', hrefOf('/tasks', { status: 'open' })),
                  card(o.tasks.on_time, 'on time', hrefOf('/tasks', { sla: 'on_time' })),
                  card(o.tasks.due_today, 'due today', hrefOf('/tasks', { sla: 'due_today' }), o.tasks.due_today > 0 ? 'warn' : null),
                  card(o.tasks.overdue, 'overdue', hrefOf('/tasks', { sla: 'overdue' }), o.tasks.overdue > 0 ? 'alert' : null),
                  card(o.dead_letters.open, 'open dead letters', hrefOf('/dead-letters', { status: 'open' }), o.dead_letters.open > 0 ? 'alert' : null),
                ),
              ),
            ),
            o.discrepancies ? discrepanciesPanel(o.discrepancies) : null,
            h('p', { class: 'muted' }, 'As of ', utc(o.generated_at), ' (service clock).'),
          );
        },
      };
    },
  };

  // --- Sagas

  const sagasView = listView({
    title: 'Sagas',
    section: 'sagas',
    path: '/sagas',
    endpoint: '/sagas',
    query: { include: 'individual_names' },
    intro: 'Newest first. Each saga follows one request or HRIS event to its end.',
    filters: [
      { name: 'type', label: 'Type', options: SAGA_TYPES },
      { name: 'state', label: 'State', options: SAGA_STATES },
      { name: 'connection_id', label: 'Connection id', size: 'id', check: uuidCheck('Connection id') },
      { name: 'older_than', label: 'Started more than … ago', placeholder: '2h', hint: 'e.g. 90s, 15m, 2h, 3d', check: durationCheck },
      { name: 'newer_than', label: 'Started less than … ago', placeholder: '3d', hint: 'e.g. 90s, 15m, 2h, 3d', check: durationCheck },
    ],
    extraCheck(values) {
      if (values.older_than && values.newer_than && durationMs(values.newer_than) <= durationMs(values.older_than)) {
        return { field: 'newer_than', message: '“Less than” must be longer ago than “more than”, or nothing matches.' };
      }
      return null;
    },
    columns: () => [
      { header: 'Saga', cell: (s) => idLink('/sagas', s.saga_id, { 'data-focus-key': `saga:${s.saga_id}` }) },
      { header: 'Type', cell: (s) => words(s.type) },
      { header: 'Individual', cell: (s) => (s.individual_id ? person(s.individual_id, s.individual_names, { short: true }) : '—') },
      { header: 'State', cell: (s) => badge(s.state) },
      { header: 'Outcome', cell: (s) => dash(s.outcome && words(s.outcome)) },
      { header: 'Last step', cell: (s) => (s.last_step ? [words(s.last_step.name), ' ', h('span', { class: 'muted' }, utc(s.last_step.at))] : '—') },
      { header: 'Steps', num: true, cell: (s) => String(s.step_count) },
      { header: 'Age', cell: (s) => duration(s.age_seconds) },
      { header: 'Connection', cell: (s) => idLink('/connections', s.connection_id) },
      { header: 'Error', cellClass: 'reason', cell: (s) => dash(s.last_error) },
    ],
  });

  const STEP_TONE = { failed: 'bad', job_error: 'bad', error: 'bad', completed: 'good', job_complete: 'good' };

  const sagaDetail = detailView({
    title: 'Saga',
    section: 'sagas',
    backPath: '/sagas',
    backLabel: 'Sagas',
    endpoint: '/sagas',
    suffix: WITH_NAMES,
    render: (s) => [
      h(
        'div',
        { class: 'grid' },
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'saga-summary' },
          h('h2', { id: 'saga-summary' }, 'Summary'),
          facts([
            ['Type', words(s.type)],
            ['Individual', s.individual_id ? h('span', { id: 'saga-individual' }, person(s.individual_id, s.individual_names)) : undefined],
            ['State', badge(s.state)],
            ['Outcome', s.outcome && words(s.outcome)],
            ['Connection', link(`#/connections/${encodeURIComponent(s.connection_id)}`, s.connection_id, { class: 'mono' })],
            ['Entity', s.entity_id && h('span', { class: 'mono' }, s.entity_id)],
            ['Source event', s.source_event_id && h('span', { class: 'mono', id: 'saga-source-event' }, s.source_event_id)],
            ['Attempts', String(s.attempts)],
            ['Last error', s.last_error],
            ['Started', [utc(s.created_at), ` (${duration(s.age_seconds)} ago)`]],
            ['Updated', utc(s.updated_at)],
          ]),
        ),
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'saga-timeline' },
          h('h2', { id: 'saga-timeline' }, `Timeline (${s.steps.length} steps)`),
          s.steps.length === 0
            ? h('p', { class: 'muted' }, 'No steps recorded.')
            : h(
                'ol',
                { class: 'timeline', id: 'timeline' },
                s.steps.map((step) =>
                  h(
                    'li',
                    { class: STEP_TONE[step.name] || undefined },
                    h('span', { class: 'step-time' }, utc(step.at)),
                    h('span', { class: 'step-name' }, words(step.name)),
                    step.detail ? h('span', { class: 'step-detail' }, compactWithPeople(step.detail, s.individual_names)) : null,
                  ),
                ),
              ),
        ),
      ),
      h('h2', null, `Jobs (${s.jobs.length})`),
      table('Jobs of this saga', [
        { header: 'Job', cell: (j) => idLink('/jobs', j.job_id) },
        { header: 'Type', cell: (j) => words(j.type) },
        { header: 'Kind', cell: (j) => j.kind },
        { header: 'Status now', cell: (j) => badge(j.status) },
        { header: 'Status the saga saw', cell: (j) => badge(j.saga_status) },
        { header: 'Error', cellClass: 'reason', cell: (j) => dash(j.error) },
        { header: 'Created', cell: (j) => utc(j.created_at) },
        { header: 'Ended', cell: (j) => utc(j.completed_at) },
      ], s.jobs),
    ],
  });

  // --- Jobs

  function retryButton(job) {
    if (!job.retriable) return null;
    const button = h('button', { type: 'button', class: 'small', 'data-focus-key': `retry:${job.job_id}`, 'aria-label': `Retry job ${shortId(job.job_id)}` }, 'Retry');
    button.addEventListener('click', () =>
      runAction(button, async () => {
        await api(`/jobs/${encodeURIComponent(job.job_id)}/retry`, { method: 'POST' });
        announce(`Job ${shortId(job.job_id)} will run again.`);
      }),
    );
    return button;
  }

  const jobsView = listView({
    title: 'Jobs',
    section: 'jobs',
    path: '/jobs',
    endpoint: '/jobs',
    quickLinks: () =>
      h(
        'ul',
        { class: 'quick-links', 'aria-label': 'Common views' },
        h('li', null, link(hrefOf('/jobs', { status: 'pending' }), 'Pending, longest waiting first')),
        h('li', null, link(hrefOf('/jobs', { status: 'in_progress' }), 'In progress')),
        h('li', null, link(hrefOf('/jobs', { status: 'error' }), 'Failed')),
        h('li', null, link(hrefOf('/jobs', { kind: 'manual', status: 'pending' }), 'Manual jobs waiting on ops')),
      ),
    filters: [
      { name: 'status', label: 'Status', options: JOB_STATUSES },
      { name: 'kind', label: 'Kind', options: JOB_KINDS },
      { name: 'type', label: 'Type', options: JOB_TYPES },
      { name: 'connection_id', label: 'Connection id', size: 'id', check: uuidCheck('Connection id') },
    ],
    columns: () => [
      { header: 'Job', cell: (j) => idLink('/jobs', j.job_id, { 'data-focus-key': `job:${j.job_id}` }) },
      { header: 'Type', cell: (j) => words(j.type) },
      { header: 'Kind', cell: (j) => j.kind },
      { header: 'Status', cell: (j) => badge(j.status) },
      { header: 'Age', cell: (j) => duration(j.age_seconds) },
      { header: 'Attempts', num: true, cell: (j) => String(j.attempts) },
      { header: 'Individuals failed', num: true, cell: (j) => (j.individual_error_count === undefined ? '—' : String(j.individual_error_count)) },
      { header: 'Error', cellClass: 'reason', cell: (j) => dash(j.error) },
      { header: 'Connection', cell: (j) => idLink('/connections', j.connection_id) },
      { header: 'Actions', cell: (j) => retryButton(j) || '—' },
    ],
  });

  const jobDetail = detailView({
    title: 'Job',
    section: 'jobs',
    backPath: '/jobs',
    backLabel: 'Jobs',
    endpoint: '/jobs',
    suffix: WITH_NAMES,
    render: (j) => [
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'job-summary' },
        h('h2', { id: 'job-summary' }, 'Summary'),
        facts([
          ['Status', h('span', { id: 'job-status' }, badge(j.status))],
          ['Type', words(j.type)],
          ['Kind', j.kind],
          ['Connection', link(`#/connections/${encodeURIComponent(j.connection_id)}`, j.connection_id, { class: 'mono' })],
          ['Entity', j.entity_id && h('span', { class: 'mono' }, j.entity_id)],
          ['Individuals', people(individualIdsIn(j.params), j.individual_names) || undefined],
          ['Attempts', String(j.attempts)],
          ['Error', j.error],
          ['Created', [utc(j.created_at), ` (${duration(j.age_seconds)} ago)`]],
          ['Scheduled', utc(j.scheduled_at)],
          ['Started', utc(j.started_at)],
          ['Ended', utc(j.completed_at)],
          ['Client URL', j.job_url && h('span', { class: 'mono' }, j.job_url)],
        ]),
        h('p', { class: 'actions' }, retryButton(j), link(hrefOf('/audit', { target_type: 'job', target_id: j.job_id }), 'Audit trail of this job')),
      ),
      j.body
        ? [
            h('h2', null, `Individuals (${j.body.length}, ${j.individual_errors.length} failed)`),
            table('Individual errors', [
              { header: 'Individual', cell: (r) => person(r.individual_id, j.individual_names) },
              { header: 'Code', num: true, cell: (r) => String(r.code) },
              { header: 'Message', cellClass: 'reason', cell: (r) => dash(r.message) },
            ], j.individual_errors),
          ]
        : null,
      h('h2', null, 'Parameters'),
      jsonBlock(j.params, 'Parameters'),
      h('h2', null, 'Result'),
      jsonBlock(j.result, 'Result'),
    ],
  });

  // --- Tasks

  function taskSummary(t) {
    const p = t.payload || {};
    switch (t.type) {
      case 'benefit_create':
      case 'benefit_register':
        return `${p.type ?? 'benefit'} “${p.description ?? ''}”`;
      case 'benefit_update':
        return `description → “${p.description ?? ''}”`;
      case 'benefit_enroll': {
        const n = Array.isArray(p.groups) ? p.groups.reduce((sum, g) => sum + (Array.isArray(g.items) ? g.items.length : 0), 0) : 0;
        return `${n} individual${n === 1 ? '' : 's'} into benefit ${shortId(p.benefit_id)}`;
      }
      case 'benefit_unenroll': {
        const n = Array.isArray(p.individual_ids) ? p.individual_ids.length : 0;
        return `${n} individual${n === 1 ? '' : 's'} out of benefit ${shortId(p.benefit_id)}`;
      }
      default:
        return compact(p);
    }
  }

  function taskActions(t) {
    if (t.status !== 'open') return [t.resolved_by ? `by ${t.resolved_by}` : '', t.note ? ` — ${t.note}` : ''].join('') || '—';
    const label = `${words(t.type)} task ${shortId(t.task_id)}`;
    const complete = h('button', { type: 'button', class: 'small primary', 'data-focus-key': `complete:${t.task_id}`, 'aria-label': `Complete ${label}` }, 'Complete…');
    const failButton = h('button', { type: 'button', class: 'small danger', 'data-focus-key': `fail:${t.task_id}`, 'aria-label': `Fail ${label}` }, 'Fail…');
    complete.addEventListener('click', async () => {
      const note = await askNote({
        title: `Complete ${label}`,
        text: `Done at the provider: ${taskSummary(t)}. The change is applied and its manual job completes.`,
        label: 'Note (optional)',
        required: false,
        confirmLabel: 'Complete task',
      });
      if (note === null) return;
      await runAction(complete, async () => {
        await api(`/tasks/${encodeURIComponent(t.task_id)}/complete`, { method: 'POST', body: note ? { note } : {} });
        announce(`Task ${shortId(t.task_id)} completed; its job ${shortId(t.job_id)} is being applied.`);
      });
    });
    failButton.addEventListener('click', async () => {
      const note = await askNote({
        title: `Fail ${label}`,
        text: 'The work cannot be done. The manual job ends in error with this note.',
        label: 'Why it cannot be done',
        required: true,
        confirmLabel: 'Fail task',
        danger: true,
      });
      if (note === null) return;
      await runAction(failButton, async () => {
        await api(`/tasks/${encodeURIComponent(t.task_id)}/fail`, { method: 'POST', body: { note } });
        announce(`Task ${shortId(t.task_id)} failed.`);
      });
    });
    return h('span', { class: 'actions' }, complete, failButton);
  }

  const tasksView = listView({
    title: 'Ops tasks',
    section: 'tasks',
    path: '/tasks',
    endpoint: '/tasks',
    intro: 'Work for Assisted providers’ staff, soonest due first. Completing a task applies its change and completes its manual job.',
    filters: [
      { name: 'status', label: 'Status', options: TASK_STATUSES },
      { name: 'sla', label: 'SLA', options: DUE_STATES },
      { name: 'type', label: 'Type', options: TASK_TYPES },
      { name: 'connection_id', label: 'Connection id', size: 'id', check: uuidCheck('Connection id') },
    ],
    columns: () => [
      { header: 'Task', cell: (t) => idLink('/tasks', t.task_id, { 'data-focus-key': `task:${t.task_id}` }) },
      { header: 'Type', cell: (t) => words(t.type) },
      { header: 'What', cellClass: 'reason', cell: (t) => taskSummary(t) },
      { header: 'Due', cell: (t) => t.due_date },
      { header: 'SLA', cell: (t) => badge(t.due_state) },
      { header: 'Status', cell: (t) => badge(t.status) },
      { header: 'Manual job', cell: (t) => idLink('/jobs', t.job_id, { 'data-focus-key': `task-job:${t.task_id}` }) },
      { header: 'Connection', cell: (t) => idLink('/connections', t.connection_id) },
      { header: 'Actions', cell: (t) => taskActions(t) },
    ],
  });

  const taskDetail = detailView({
    title: 'Task',
    section: 'tasks',
    backPath: '/tasks?status=open',
    backLabel: 'Ops tasks',
    endpoint: '/tasks',
    // A task's read has no names; its manual job, which holds the same individuals, has them.
    async enrich(t) {
      if (individualIdsIn(t.payload).length === 0) return t;
      try {
        const job = await api(`/jobs/${encodeURIComponent(t.job_id)}${WITH_NAMES}`);
        return { ...t, individual_names: job.individual_names || {} };
      } catch (error) {
        if (error instanceof SignedOut) throw error;
        return t;
      }
    },
    render: (t) => [
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'task-summary' },
        h('h2', { id: 'task-summary' }, 'Summary'),
        facts([
          ['Type', words(t.type)],
          ['What', taskSummary(t)],
          ['Individuals', people(individualIdsIn(t.payload), t.individual_names) || undefined],
          ['Status', badge(t.status)],
          ['Due', [t.due_date, ' ', badge(t.due_state)]],
          ['Manual job', link(`#/jobs/${encodeURIComponent(t.job_id)}`, t.job_id, { class: 'mono' })],
          ['Connection', link(`#/connections/${encodeURIComponent(t.connection_id)}`, t.connection_id, { class: 'mono' })],
          ['Entity', h('span', { class: 'mono' }, t.entity_id)],
          ['Created', utc(t.created_at)],
          ['Resolved by', t.resolved_by],
          ['Resolved', utc(t.resolved_at)],
          ['Note', t.note],
        ]),
        h('p', { class: 'actions' }, t.status === 'open' ? taskActions(t) : null, link(hrefOf('/audit', { target_type: 'task', target_id: t.task_id }), 'Audit trail of this task')),
      ),
      h('h2', null, 'Payload'),
      jsonBlock(t.payload, 'Payload'),
    ],
  });

  // --- Dead letters

  function replayResults(responses) {
    const replayed = responses.filter((r) => r.code === 200).length;
    const items = responses.map((r) =>
      h('li', null, h('span', { class: 'mono' }, shortId(r.dead_letter_id)), ': ', r.code === 200 ? 'replayed' : `${r.code} ${r.body && r.body.service_code ? r.body.service_code : ''} — ${r.body && r.body.message ? r.body.message : ''}`),
    );
    const summary = `${replayed} of ${responses.length} replayed.`;
    return { replayed, summary, node: h('div', { class: 'results', id: 'replay-results' }, h('strong', null, `Replay: ${summary}`), h('ul', null, items)) };
  }

  async function replay(ids, button, after) {
    const note = await askNote({
      title: ids.length === 1 ? `Replay dead letter ${shortId(ids[0])}` : `Replay ${ids.length} dead letters`,
      text: 'Each message is applied again through its consumer, once its cause is fixed. One that is still refused stays open.',
      label: 'Note (optional: what was fixed)',
      required: false,
      confirmLabel: 'Replay',
    });
    if (note === null) return;
    await runAction(button, async () => {
      const answer = await api('/dead-letters/replay', { method: 'POST', body: note ? { ids, note } : { ids } });
      const results = replayResults(answer.responses);
      after(results, answer.responses);
      announce(`Replay: ${results.summary}`);
    });
  }

  async function discard(dl, button) {
    const note = await askNote({
      title: `Discard dead letter ${shortId(dl.dead_letter_id)}`,
      text: 'The message is dropped for good; it can no longer be replayed.',
      label: 'Why it is discarded',
      required: true,
      confirmLabel: 'Discard',
      danger: true,
    });
    if (note === null) return;
    await runAction(button, async () => {
      await api(`/dead-letters/${encodeURIComponent(dl.dead_letter_id)}/discard`, { method: 'POST', body: { note } });
      announce(`Dead letter ${shortId(dl.dead_letter_id)} discarded.`);
    });
  }

  function deadLetterButtons(dl, after) {
    if (dl.status !== 'open') return dl.resolved_by ? `${dl.status} by ${dl.resolved_by}` : '—';
    const replayButton = h('button', { type: 'button', class: 'small primary', 'data-focus-key': `replay:${dl.dead_letter_id}`, 'aria-label': `Replay dead letter ${shortId(dl.dead_letter_id)}` }, 'Replay…');
    const discardButton = h('button', { type: 'button', class: 'small danger', 'data-focus-key': `discard:${dl.dead_letter_id}`, 'aria-label': `Discard dead letter ${shortId(dl.dead_letter_id)}` }, 'Discard…');
    replayButton.addEventListener('click', () => replay([dl.dead_letter_id], replayButton, after));
    discardButton.addEventListener('click', () => discard(dl, discardButton));
    return h('span', { class: 'actions' }, replayButton, discardButton);
  }

  const deadLettersView = listView({
    title: 'Dead letters',
    section: 'dead-letters',
    path: '/dead-letters',
    endpoint: '/dead-letters',
    intro: 'Messages a consumer refused, newest first. Replay once the cause is fixed, or discard with a reason.',
    filters: [
      { name: 'status', label: 'Status', options: DEAD_LETTER_STATUSES },
      { name: 'topic', label: 'Topic', size: 'medium', placeholder: 'hris.events' },
      { name: 'consumer', label: 'Consumer', size: 'medium', placeholder: 'hris-sagas' },
    ],
    setup(controller) {
      controller.selected = new Set();
      controller.lastResults = null;
      controller.onReplayed = (results, responses) => {
        for (const r of responses) if (r.code === 200) controller.selected.delete(r.dead_letter_id);
        controller.lastResults = results.node;
      };
    },
    toolbar(page, controller) {
      const open = page.data.filter((d) => d.status === 'open').map((d) => d.dead_letter_id);
      for (const id of [...controller.selected]) if (!open.includes(id)) controller.selected.delete(id);
      const count = controller.selected.size;
      const replaySelected = h('button', { type: 'button', class: 'primary', disabled: count === 0, 'data-focus-key': 'replay-selected' }, `Replay selected (${count})`);
      replaySelected.addEventListener('click', () => replay([...controller.selected], replaySelected, controller.onReplayed));
      const allSelected = open.length > 0 && open.every((id) => controller.selected.has(id));
      const selectAll = h('button', { type: 'button', disabled: open.length === 0, 'data-focus-key': 'select-all' }, allSelected ? 'Clear selection' : 'Select all open on this page');
      selectAll.addEventListener('click', () => {
        if (allSelected) controller.selected.clear();
        else for (const id of open) controller.selected.add(id);
        refreshView({ force: true, rerenderOnly: true });
      });
      return [
        controller.lastResults,
        h('div', { class: 'toolbar' }, replaySelected, selectAll, h('span', { class: 'muted' }, open.length ? `${open.length} open on this page` : 'None open on this page')),
      ];
    },
    rowProps: (d, controller) => (controller.selected.has(d.dead_letter_id) ? { class: 'selected' } : null),
    columns: (controller) => [
      {
        header: h('span', { class: 'visually-hidden' }, 'Select'),
        cell: (d) => {
          if (d.status !== 'open') return '';
          const box = h('input', {
            type: 'checkbox',
            'aria-label': `Select dead letter ${shortId(d.dead_letter_id)}`,
            'data-focus-key': `select:${d.dead_letter_id}`,
            checked: controller.selected.has(d.dead_letter_id),
          });
          box.addEventListener('change', () => {
            if (box.checked) controller.selected.add(d.dead_letter_id);
            else controller.selected.delete(d.dead_letter_id);
            refreshView({ force: true, rerenderOnly: true });
          });
          return box;
        },
      },
      { header: 'Dead letter', cell: (d) => idLink('/dead-letters', d.dead_letter_id, { 'data-focus-key': `dl:${d.dead_letter_id}` }) },
      { header: 'Status', cell: (d) => badge(d.status) },
      { header: 'Reason', cellClass: 'reason', cell: (d) => d.reason },
      { header: 'Consumer', cell: (d) => d.consumer },
      { header: 'Topic', cell: (d) => d.topic },
      { header: 'Message id', cellClass: 'wrap-anywhere', cell: (d) => h('span', { class: 'mono' }, dash(d.message_id)) },
      { header: 'Received', cell: (d) => utc(d.created_at) },
      { header: 'Actions', cell: (d) => deadLetterButtons(d, controller.onReplayed) },
    ],
  });

  const deadLetterDetail = detailView({
    title: 'Dead letter',
    section: 'dead-letters',
    backPath: '/dead-letters?status=open',
    backLabel: 'Dead letters',
    endpoint: '/dead-letters',
    suffix: WITH_NAMES,
    render: (d, controller) => [
      controller.lastResults || null,
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'dl-summary' },
        h('h2', { id: 'dl-summary' }, 'Summary'),
        facts([
          ['Status', h('span', { id: 'dead-letter-status' }, badge(d.status))],
          ['Reason', d.reason],
          ['Consumer', d.consumer],
          ['Topic', d.topic],
          ['Individuals', people(individualIdsIn(d.payload_json), d.individual_names) || undefined],
          ['Partition / offset', d.partition === null ? null : `${d.partition} / ${d.offset}`],
          ['Key', d.message_key && h('span', { class: 'mono' }, d.message_key)],
          ['Message id', d.message_id && h('span', { class: 'mono', id: 'dead-letter-message-id' }, d.message_id)],
          ['Received', utc(d.created_at)],
          ['Resolved by', d.resolved_by],
          ['Resolved', utc(d.resolved_at)],
          ['Note', d.note],
        ]),
        h(
          'p',
          { class: 'actions' },
          deadLetterButtons(d, (results) => {
            controller.lastResults = results.node;
          }),
          link(hrefOf('/audit', { target_type: 'dead_letter', target_id: d.dead_letter_id }), 'Audit trail of this dead letter'),
        ),
      ),
      h('h2', null, 'Payload'),
      d.payload_json !== null && d.payload_json !== undefined ? jsonBlock(d.payload_json, 'Payload') : h('pre', { class: 'json', tabindex: '0', 'aria-label': 'Payload' }, d.payload),
      h('h2', null, 'Headers'),
      jsonBlock(d.headers, 'Headers'),
    ],
  });

  // --- Discrepancies (payroll deductions that differ from what the service enrolled)

  /** Integer cents as dollars: 4615 → $46.15. */
  const dollars = (cents) => (typeof cents === 'number' ? `${cents < 0 ? '−' : ''}$${(Math.abs(cents) / 100).toFixed(2)}` : '—');

  /** What was expected or observed: employee and employer amounts, a configuration, or the value as it is. */
  function amounts(value) {
    if (value === null || value === undefined) return '—';
    if (typeof value !== 'object' || Array.isArray(value)) return compact(value);
    if ('employee_deduction' in value || 'company_contribution' in value) return configurationSummary(value);
    const parts = [];
    if (typeof value.employee === 'number') parts.push(`employee ${dollars(value.employee)}`);
    if (typeof value.employer === 'number') parts.push(`employer ${dollars(value.employer)}`);
    return parts.length ? parts.join(', ') : compact(value) || '—';
  }

  /** A pay statement: its pay date and payment id; none for a discrepancy a read of the provider found. */
  const statement = (paymentId, payDate) => (paymentId || payDate ? [dash(payDate), paymentId ? [' ', h('span', { class: 'mono muted', title: paymentId }, shortId(paymentId))] : null] : '—');

  /** Acknowledge (a note is required; an acknowledged one's note is edited) and Re-apply, for one not resolved. */
  function discrepancyActions(d) {
    if (d.status === 'resolved') return d.resolution ? `resolved: ${words(d.resolution)}` : '—';
    const id = d.discrepancy_id;
    const label = `${words(d.kind)} discrepancy ${shortId(id)}`;
    const acknowledged = d.status === 'acknowledged';
    const ack = h(
      'button',
      { type: 'button', class: 'small primary', 'data-focus-key': `ack:${id}`, 'aria-label': `${acknowledged ? 'Edit the note of' : 'Acknowledge'} ${label}` },
      acknowledged ? 'Edit note…' : 'Acknowledge…',
    );
    const reapply = h('button', { type: 'button', class: 'small', 'data-focus-key': `reapply:${id}`, 'aria-label': `Re-apply the configuration of ${label}` }, 'Re-apply…');
    ack.addEventListener('click', async () => {
      const note = await askNote({
        title: `${acknowledged ? 'Edit the note of' : 'Acknowledge'} ${label}`,
        text: 'Ops have seen it. It stays listed, as acknowledged, until a later pay statement or read agrees.',
        label: 'Note',
        required: true,
        confirmLabel: acknowledged ? 'Save note' : 'Acknowledge',
        initial: d.note || '',
      });
      if (note === null) return;
      await runAction(ack, async () => {
        await api(`/discrepancies/${encodeURIComponent(id)}/acknowledge`, { method: 'POST', body: { note } });
        announce(`Discrepancy ${shortId(id)} acknowledged.`);
      });
    });
    reapply.addEventListener('click', async () => {
      const go = await askNote({
        title: `Re-apply the configuration of ${label}`,
        text:
          'Opens an enrollment job that sends the service’s enrollment in force today to the provider again, from today; ' +
          'with none in force, it ends the enrollment at the provider from today. The discrepancy stays listed until a later pay statement or read agrees.',
        confirmLabel: 'Re-apply',
        field: false,
      });
      if (go === null) return;
      await runAction(reapply, async () => {
        const answer = await api(`/discrepancies/${encodeURIComponent(id)}/reapply`, { method: 'POST' });
        announce(`Discrepancy ${shortId(id)}: re-applied by job ${shortId(answer.job_id)}.`);
      });
    });
    return h('span', { class: 'actions' }, ack, reapply);
  }

  const discrepanciesView = listView({
    title: 'Discrepancies',
    section: 'discrepancies',
    path: '/discrepancies',
    endpoint: '/discrepancies',
    query: { include: 'individual_names' },
    intro: 'Payroll deductions that differ from what the service enrolled, newest first; open and acknowledged unless a status is chosen.',
    quickLinks: () =>
      h(
        'ul',
        { class: 'quick-links', 'aria-label': 'Common views' },
        h('li', null, link(hrefOf('/discrepancies', { status: 'open' }), 'Open, not yet seen')),
        h('li', null, link(hrefOf('/discrepancies', { status: 'acknowledged' }), 'Acknowledged')),
        h('li', null, link(hrefOf('/discrepancies', { status: 'resolved' }), 'Resolved')),
      ),
    filters: [
      { name: 'status', label: 'Status', options: [...DISCREPANCY_STATUSES, [DISCREPANCY_STATUSES.join(','), 'any status']], any: 'Live (open, acknowledged)' },
      { name: 'kind', label: 'Kind', options: DISCREPANCY_KINDS },
      { name: 'connection_id', label: 'Connection id', size: 'id', check: uuidCheck('Connection id') },
      { name: 'benefit_id', label: 'Benefit id', size: 'id', check: uuidCheck('Benefit id') },
      { name: 'individual_id', label: 'Individual id', size: 'id', check: uuidCheck('Individual id') },
    ],
    columns: () => [
      { header: 'Discrepancy', cell: (d) => idLink('/discrepancies', d.discrepancy_id, { 'data-focus-key': `discrepancy:${d.discrepancy_id}` }) },
      { header: 'Kind', cell: (d) => words(d.kind) },
      { header: 'Status', cell: (d) => badge(d.status) },
      { header: 'Individual', cell: (d) => person(d.individual_id, d.individual_names, { short: true }) },
      { header: 'Benefit', cell: (d) => h('span', { class: 'mono', title: d.benefit_id }, shortId(d.benefit_id)) },
      { header: 'Expected', cellClass: 'reason', cell: (d) => amounts(d.expected) },
      { header: 'Observed', cellClass: 'reason', cell: (d) => amounts(d.observed) },
      { header: 'Times', num: true, cell: (d) => String(d.occurrences) },
      { header: 'Last statement', cell: (d) => statement(d.last_payment_id, d.last_pay_date) },
      { header: 'Opened', cell: (d) => utc(d.opened_at) },
      { header: 'Connection', cell: (d) => idLink('/connections', d.connection_id) },
      { header: 'Actions', cell: (d) => discrepancyActions(d) },
    ],
  });

  const discrepancyDetail = detailView({
    title: 'Discrepancy',
    section: 'discrepancies',
    backPath: '/discrepancies',
    backLabel: 'Discrepancies',
    endpoint: '/discrepancies',
    suffix: WITH_NAMES,
    render: (d) => [
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'discrepancy-summary' },
        h('h2', { id: 'discrepancy-summary' }, 'Summary'),
        facts([
          ['Status', h('span', { id: 'discrepancy-status' }, badge(d.status))],
          ['Kind', words(d.kind)],
          ['Individual', h('span', { id: 'discrepancy-individual' }, person(d.individual_id, d.individual_names))],
          ['Benefit', h('span', { class: 'mono' }, d.benefit_id)],
          ['Expected', amounts(d.expected)],
          ['Observed', amounts(d.observed)],
          ['Occurrences', String(d.occurrences)],
          ['First statement', statement(d.first_payment_id, d.first_pay_date)],
          ['Last statement', statement(d.last_payment_id, d.last_pay_date)],
          ['Connection', link(`#/connections/${encodeURIComponent(d.connection_id)}`, d.connection_id, { class: 'mono' })],
          ['Entity', h('span', { class: 'mono' }, d.entity_id)],
          ['Opened', utc(d.opened_at)],
          ['Updated', utc(d.updated_at)],
          ['Acknowledged', d.acknowledged_at ? [utc(d.acknowledged_at), d.acknowledged_by ? ` by ${d.acknowledged_by}` : ''] : null],
          ['Note', d.note === null ? null : h('span', { id: 'discrepancy-note' }, d.note)],
          ['Re-apply job', d.reapply_job_id ? link(`#/jobs/${encodeURIComponent(d.reapply_job_id)}`, d.reapply_job_id, { class: 'mono', id: 'discrepancy-reapply-job' }) : null],
          ['Resolved', d.resolved_at ? [utc(d.resolved_at), d.resolution ? ` (${words(d.resolution)})` : ''] : null],
        ]),
        h(
          'p',
          { class: 'actions' },
          d.status === 'resolved' ? null : discrepancyActions(d),
          link(hrefOf('/audit', { target_type: 'discrepancy', target_id: d.discrepancy_id }), 'Audit trail of this discrepancy'),
        ),
      ),
      h('h2', null, `Statements (${d.recent_results.length}, newest pay date first)`),
      d.recent_results.length === 0
        ? h('p', { class: 'muted' }, 'No statement recorded with it.')
        : table('Statements', [
            { header: 'Pay date', cell: (r) => r.pay_date },
            { header: 'Payment', cell: (r) => h('span', { class: 'mono', title: r.payment_id }, shortId(r.payment_id)) },
            { header: 'Result', cell: (r) => words(r.result) },
            { header: 'Employee expected', num: true, cell: (r) => dollars(r.expected_employee) },
            { header: 'Employee observed', num: true, cell: (r) => dollars(r.observed_employee) },
            { header: 'Employer expected', num: true, cell: (r) => dollars(r.expected_employer) },
            { header: 'Employer observed', num: true, cell: (r) => dollars(r.observed_employer) },
            { header: 'Run', cell: (r) => (r.regular ? 'regular' : 'off-cycle') },
            { header: 'Reconciled', cell: (r) => utc(r.reconciled_at) },
          ], d.recent_results),
      h('h2', null, 'Expected'),
      jsonBlock(d.expected, 'Expected'),
      h('h2', null, 'Observed'),
      jsonBlock(d.observed, 'Observed'),
    ],
  });

  // --- Connections

  const connectionsView = listView({
    title: 'Connections',
    section: 'connections',
    path: '/connections',
    endpoint: '/connections',
    beforeLoad: withProviders,
    filters: [
      { name: 'status', label: 'Status', options: CONNECTION_STATUSES },
      { name: 'provider_id', label: 'Provider', options: () => catalogue.providers, any: 'Any provider' },
    ],
    columns: () => [
      { header: 'Connection', cell: (c) => idLink('/connections', c.connection_id, { 'data-focus-key': `conn:${c.connection_id}` }) },
      { header: 'Customer', cell: (c) => [dash(c.customer_name), c.customer_id ? h('span', { class: 'muted' }, ` (${c.customer_id})`) : null] },
      { header: 'Provider', cell: (c) => [provider(c.provider_id, { short: true }), c.sandbox ? h('span', { class: 'muted' }, ' · sandbox') : null] },
      { header: 'Status', cell: (c) => badge(c.status) },
      { header: 'Entities', cell: (c) => c.entities.map((e, i) => [i ? ', ' : '', e.name, e.status !== 'active' ? ` (${e.status})` : '']) },
      { header: 'Last sync', cell: (c) => (c.last_sync ? [badge(c.last_sync.status), ' ', h('span', { class: 'muted' }, utc(c.last_sync.completed_at || c.last_sync.created_at))] : '—') },
      { header: 'Created', cell: (c) => utc(c.created_at) },
    ],
  });

  const connectionDetail = detailView({
    title: 'Connection',
    section: 'connections',
    backPath: '/connections',
    backLabel: 'Connections',
    endpoint: '/connections',
    beforeLoad: withProviders,
    render: (c) => {
      const id = c.connection_id;
      return [
        h(
          'div',
          { class: 'grid' },
          h(
            'section',
            { class: 'panel', 'aria-labelledby': 'conn-summary' },
            h('h2', { id: 'conn-summary' }, 'Summary'),
            facts([
              ['Customer', [dash(c.customer_name), c.customer_id ? ` (${c.customer_id})` : '']],
              ['Provider', [provider(c.provider_id), ` · ${c.authentication_type}${c.sandbox ? ', sandbox' : ''}${c.manual ? ', manual' : ''}`]],
              ['Status', badge(c.status)],
              ['Products', c.products.join(', ')],
              ['Created', utc(c.created_at)],
              ['Updated', utc(c.updated_at)],
              ['Disconnected', c.disconnected_at ? utc(c.disconnected_at) : null],
            ]),
          ),
          h(
            'section',
            { class: 'panel', 'aria-labelledby': 'conn-work' },
            h('h2', { id: 'conn-work' }, 'Work'),
            h(
              'ul',
              { class: 'cards' },
              card(c.counts.unfinished_jobs, 'unfinished jobs', hrefOf('/jobs', { connection_id: id, status: 'pending' })),
              card(c.counts.failed_jobs, 'failed jobs', hrefOf('/jobs', { connection_id: id, status: 'error' }), c.counts.failed_jobs > 0 ? 'alert' : null),
              card(c.counts.open_tasks, 'open tasks', hrefOf('/tasks', { connection_id: id, status: 'open' })),
              card(c.counts.active_sagas, 'active sagas', hrefOf('/sagas', { connection_id: id })),
            ),
          ),
        ),
        h('h2', null, 'Entities'),
        table('Entities', [
          { header: 'Entity', cell: (e) => h('span', { class: 'mono' }, e.entity_id) },
          { header: 'Name', cell: (e) => e.name },
          { header: 'Status', cell: (e) => badge(e.status) },
          { header: 'Data synced', cell: (e) => utc(e.last_synced_at) },
        ], c.entities),
        h('h2', null, 'Recent data syncs'),
        table('Data syncs', [
          { header: 'Job', cell: (s) => idLink('/jobs', s.job_id) },
          { header: 'Status', cell: (s) => badge(s.status) },
          { header: 'Created', cell: (s) => utc(s.created_at) },
          { header: 'Started', cell: (s) => utc(s.started_at) },
          { header: 'Ended', cell: (s) => utc(s.completed_at) },
          { header: 'Error', cellClass: 'reason', cell: (s) => dash(s.error) },
        ], c.recent_syncs),
      ];
    },
  });

  // --- Webhooks

  const endpointLabel = (e) => `${e.application_name} — ${e.url}`;
  const endpointsById = (list) => new Map(list.map((e) => [e.id, e]));

  /** The banner of a disabled endpoint: what, whose, since when and why, above everything else. */
  function disabledNotice(e) {
    return h(
      'li',
      { class: 'notice' },
      h('strong', null, 'Endpoint '),
      h('span', { class: 'mono' }, e.url),
      ' of ',
      h('strong', null, e.application_name),
      ' disabled',
      e.disabled_at ? [' ', utc(e.disabled_at)] : null,
      ': ',
      // The service writes a reason when it disables one itself; an application that turns its own off gives none.
      e.disabled_reason || 'turned off by its application.',
      ' ',
      link(hrefOf('/webhooks', { endpoint_id: e.id }), 'Its deliveries'),
    );
  }

  function disabledNotices(list) {
    const disabled = list.filter((e) => !e.enabled);
    return disabled.length ? h('ul', { class: 'notices', 'aria-label': 'Disabled webhook endpoints' }, disabled.map(disabledNotice)) : null;
  }

  /** Enabled or disabled, and a warning while an enabled endpoint keeps failing. */
  function endpointState(e) {
    if (!e.enabled) return badge('disabled');
    return [
      badge('enabled'),
      e.failing_since ? [' ', h('span', { class: 'badge badge-failing', title: `Every delivery has failed since ${e.failing_since}` }, '⚠ failing')] : null,
    ];
  }

  /** A count that opens the endpoint's deliveries of that status. */
  const countLink = (e, status) =>
    e[status] > 0 ? link(hrefOf('/webhooks', { status, endpoint_id: e.id }), String(e[status]), { 'aria-label': `${words(status)} deliveries to ${e.url}: ${e[status]}` }) : '0';

  function endpointsTable(list) {
    return table('Webhook endpoints', [
      { header: 'Application', cell: (e) => h('span', { title: e.application_id }, e.application_name) },
      {
        header: 'URL',
        cellClass: 'url',
        cell: (e) => [
          link(hrefOf('/webhooks', { endpoint_id: e.id }), e.url, { class: 'mono', title: `Deliveries to ${e.url}`, 'data-focus-key': `endpoint:${e.id}` }),
          e.description ? h('span', { class: 'endpoint-description' }, e.description) : null,
        ],
      },
      { header: 'State', cell: endpointState },
      { header: 'Pending', num: true, cell: (e) => countLink(e, 'pending') },
      { header: 'Failed', num: true, cell: (e) => countLink(e, 'failed') },
      { header: 'Delivered', num: true, cell: (e) => countLink(e, 'delivered') },
      { header: 'Last delivered', cell: (e) => utc(e.last_delivered_at) },
      { header: 'Failing since', cell: (e) => utc(e.failing_since) },
    ], list, (e) => ({ 'data-endpoint-id': e.id }));
  }

  /** Resend of a finished delivery; `after` gets the delivery as the service now holds it (pending). */
  function resendButton(d, after) {
    if (d.status !== 'delivered' && d.status !== 'failed') return null;
    const button = h('button', { type: 'button', class: 'small', 'data-focus-key': `resend:${d.id}`, 'aria-label': `Resend delivery ${d.id}` }, 'Resend');
    button.addEventListener('click', () =>
      runAction(button, async () => {
        const answer = await api(`/webhooks/deliveries/${encodeURIComponent(d.id)}/resend`, { method: 'POST' });
        if (after) after(answer);
        announce(`Delivery ${d.id} will be sent again.`);
      }),
    );
    return button;
  }

  /** What the receiver said last: its status code, or that it did not answer (and why). */
  const lastAnswer = (d) => (d.last_status_code !== null ? String(d.last_status_code) : d.last_error ? 'no answer' : '—');

  const STATUS_TABS = [['', 'All'], ...DELIVERY_STATUSES.map((s) => [s, s[0].toUpperCase() + s.slice(1)])];

  /** All / Failed / Pending / Delivered, each with its count (of the chosen endpoint, or of all). */
  function statusTabs(params, list) {
    const endpointId = params.get('endpoint_id') || undefined;
    const status = params.get('status') || '';
    const counted = endpointId ? list.filter((e) => e.id === endpointId) : list;
    const total = (s) => counted.reduce((sum, e) => sum + (s ? e[s] : e.pending + e.failed + e.delivered), 0);
    return h(
      'nav',
      { class: 'tabs', 'aria-label': 'Deliveries by status' },
      h(
        'ul',
        null,
        STATUS_TABS.map(([s, label]) =>
          h('li', null, link(hrefOf('/webhooks', { status: s, endpoint_id: endpointId }), [label, ' ', h('span', { class: 'count' }, String(total(s)))], { 'aria-current': s === status ? 'page' : undefined, 'data-focus-key': `tab:${s}` })),
        ),
      ),
    );
  }

  const webhooksView = {
    title: 'Webhooks',
    section: 'webhooks',
    mount(container, routeInfo) {
      let params = routeInfo.query;
      let endpoints = [];
      const form = filterForm(
        '/webhooks',
        [{ name: 'endpoint_id', label: 'Endpoint', options: () => endpoints.map((e) => [e.id, endpointLabel(e)]), any: 'Any endpoint' }],
        params,
        null,
        ['status'],
      );
      const notices = h('div');
      const endpointsPart = h('div');
      const tabs = h('div');
      const results = h('div', { 'aria-live': 'off' });
      fill(
        container,
        heading('Webhooks'),
        h('p', { class: 'muted' }, 'Every application’s endpoints, then their deliveries, newest first. A failed delivery is no longer retried: Resend sends it again, with the same event id.'),
        notices,
        h('h2', { id: 'wh-endpoints' }, 'Endpoints'),
        endpointsPart,
        h('h2', { id: 'wh-deliveries' }, 'Deliveries'),
        tabs,
        form,
        results,
      );
      const controller = {
        update(next) {
          params = next.query;
          form.syncFrom(params);
        },
        async load() {
          const offset = Number(params.get('offset')) || 0;
          const q = { status: params.get('status'), endpoint_id: params.get('endpoint_id'), limit: PAGE_SIZE, offset };
          const [list, page] = await Promise.all([api('/webhooks/endpoints'), api(`/webhooks/deliveries${query(q)}`)]);
          return { endpoints: list.data, page };
        },
        render({ endpoints: list, page }) {
          endpoints = list;
          form.refreshChoices();
          const byId = endpointsById(list);
          fill(notices, disabledNotices(list));
          fill(endpointsPart, endpointsTable(list));
          fill(tabs, statusTabs(params, list));
          const q = { status: params.get('status'), endpoint_id: params.get('endpoint_id') };
          fill(
            results,
            table('Webhook deliveries', [
              { header: 'Delivery', cell: (d) => link(`#/webhooks/${encodeURIComponent(d.id)}`, d.id, { class: 'mono', 'data-focus-key': `delivery:${d.id}` }) },
              { header: 'Event type', cell: (d) => d.event_type },
              { header: 'Status', cell: (d) => badge(d.status) },
              { header: 'Attempts', num: true, cell: (d) => String(d.attempts) },
              { header: 'Last answer', cell: lastAnswer },
              { header: 'Error', cellClass: 'reason', cell: (d) => dash(d.last_error) },
              { header: 'Next attempt', cell: (d) => utc(d.next_attempt_at) },
              {
                header: 'Endpoint',
                cellClass: 'url',
                cell: (d) => {
                  const e = byId.get(d.endpoint_id);
                  return e ? [h('span', null, e.application_name), ' ', h('span', { class: 'mono muted' }, e.url)] : h('span', { class: 'mono', title: d.endpoint_id }, shortId(d.endpoint_id));
                },
              },
              { header: 'Connection', cell: (d) => idLink('/connections', d.connection_id) },
              { header: 'Created', cell: (d) => utc(d.created_at) },
              { header: 'Ended', cell: (d) => utc(d.completed_at) },
              { header: 'Actions', cell: (d) => resendButton(d) || '—' },
            ], page.data),
            pager('/webhooks', q, page.paging, page.data.length),
          );
        },
        announceLoaded({ page }) {
          announce(`Webhook deliveries: ${page.paging.count} found.`);
        },
      };
      return controller;
    },
  };

  /** The body as sent, indented to read; as it is if it is not JSON. */
  function prettyBody(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return String(text ?? '');
    }
  }

  const deliveryDetail = detailView({
    title: 'Webhook delivery',
    section: 'webhooks',
    backPath: '/webhooks?status=failed',
    backLabel: 'Webhooks',
    endpoint: '/webhooks/deliveries',
    idPattern: DELIVERY_ID,
    idKind: 'a number',
    // The delivery names its endpoint by id; the endpoints list has its URL, application and state.
    async enrich(d) {
      try {
        const list = await api('/webhooks/endpoints');
        return { ...d, endpoint: list.data.find((e) => e.id === d.endpoint_id) || null };
      } catch (error) {
        if (error instanceof SignedOut) throw error;
        return { ...d, endpoint: null };
      }
    },
    render: (d, controller) => {
      const e = d.endpoint;
      // Resend answers with the delivery now pending: shown at once, before the reload that follows.
      const showResent = (answer) => controller.render({ ...answer, endpoint: e });
      const attempts = [...d.recent_attempts].reverse();
      return [
        e && !e.enabled ? h('ul', { class: 'notices', 'aria-label': 'Disabled webhook endpoints' }, disabledNotice(e)) : null,
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'delivery-summary' },
          h('h2', { id: 'delivery-summary' }, 'Summary'),
          facts([
            ['Status', h('span', { id: 'delivery-status' }, badge(d.status))],
            ['Event type', d.event_type],
            ['Event id', h('span', { class: 'mono', id: 'delivery-event-id' }, d.event_id)],
            [
              'Endpoint',
              e
                ? [link(hrefOf('/webhooks', { endpoint_id: e.id }), e.url, { class: 'mono' }), ` of ${e.application_name} `, endpointState(e)]
                : h('span', { class: 'mono' }, d.endpoint_id),
            ],
            ['Connection', link(`#/connections/${encodeURIComponent(d.connection_id)}`, d.connection_id, { class: 'mono' })],
            ['Attempts', String(d.attempts)],
            ['Next attempt', utc(d.next_attempt_at)],
            ['Last answer', lastAnswer(d)],
            ['Last error', d.last_error],
            ['Created', utc(d.created_at)],
            ['Ended', utc(d.completed_at)],
          ]),
          h('p', { class: 'actions' }, resendButton(d, showResent), link(hrefOf('/audit', { target_type: 'webhook_delivery', target_id: d.id }), 'Audit trail of this delivery')),
        ),
        h('h2', null, `Attempts (${d.recent_attempts.length}, newest first)`),
        attempts.length === 0
          ? h('p', { class: 'muted' }, 'Not attempted yet.')
          : table('Attempts', [
              { header: 'When', cell: (a) => utc(a.attempted_at) },
              { header: 'Status code', cell: (a) => (a.status_code === null ? h('span', { class: 'badge badge-failed' }, 'no answer') : String(a.status_code)) },
              { header: 'Latency (ms)', num: true, cell: (a) => String(a.latency_ms) },
              { header: 'Error', cellClass: 'reason', cell: (a) => dash(a.error) },
              { header: 'Response excerpt', cellClass: 'excerpt', cell: (a) => (a.response_excerpt ? h('span', { class: 'mono' }, a.response_excerpt) : '—') },
            ], attempts),
        h('h2', null, 'Body'),
        h('pre', { class: 'json', id: 'delivery-body', tabindex: '0', 'aria-label': 'Body' }, prettyBody(d.body)),
      ];
    },
  });

  // --- Policies (read only)

  function configurationSummary(configuration) {
    if (!configuration || typeof configuration !== 'object') return '—';
    const amount = (a) => (a && typeof a === 'object' ? (a.type === 'percent' ? `${a.amount / 100}%` : `$${(a.amount / 100).toFixed(2)}`) : null);
    const parts = [];
    if (configuration.employee_deduction) parts.push(`employee ${amount(configuration.employee_deduction)}`);
    if (configuration.company_contribution) parts.push(`company ${amount(configuration.company_contribution)}`);
    return parts.length ? parts.join(', ') : compact(configuration);
  }

  const policiesView = listView({
    title: 'Policies',
    section: 'policies',
    path: '/policies',
    endpoint: '/policies',
    intro: 'Auto-enrollment policies for new hires, oldest first (read only here).',
    filters: [
      { name: 'connection_id', label: 'Connection id', size: 'id', check: uuidCheck('Connection id') },
      { name: 'entity_id', label: 'Entity id', size: 'id', check: uuidCheck('Entity id') },
      { name: 'active', label: 'Active', options: ['true', 'false'] },
    ],
    columns: () => [
      { header: 'Policy', cell: (p) => h('span', { class: 'mono', title: p.policy_id }, shortId(p.policy_id)) },
      { header: 'Benefit', cell: (p) => [words(p.benefit_type), ' ', h('span', { class: 'mono muted', title: p.benefit_id }, shortId(p.benefit_id))] },
      { header: 'Configuration', cell: (p) => configurationSummary(p.configuration) },
      { header: 'Waiting period', num: true, cell: (p) => `${p.waiting_period_days} d` },
      { header: 'Escalation', cell: (p) => (p.escalation ? `+${p.escalation.increase} a year up to ${p.escalation.cap}` : '—') },
      { header: 'Active', cell: (p) => badge(p.active ? 'active' : 'inactive') },
      { header: 'Connection', cell: (p) => idLink('/connections', p.connection_id) },
      { header: 'Entity', cell: (p) => h('span', { class: 'mono', title: p.entity_id }, shortId(p.entity_id)) },
      { header: 'Created by', cell: (p) => p.created_by },
      { header: 'Updated', cell: (p) => utc(p.updated_at) },
    ],
  });

  // --- Audit

  const AUDIT_TARGETS = {
    job: '/jobs',
    task: '/tasks',
    dead_letter: '/dead-letters',
    saga: '/sagas',
    connection: '/connections',
    webhook_delivery: '/webhooks',
    discrepancy: '/discrepancies',
  };
  const AUDIT_IDS = { webhook_delivery: DELIVERY_ID };
  const auditTarget = (a) => {
    const path = AUDIT_TARGETS[a.target_type];
    return path && (AUDIT_IDS[a.target_type] || UUID).test(a.target_id) ? idLink(path, a.target_id) : h('span', { class: 'mono' }, a.target_id);
  };

  const auditView = listView({
    title: 'Audit log',
    section: 'audit',
    path: '/audit',
    endpoint: '/audit',
    intro: 'Who did what through the ops API, newest first.',
    filters: [
      { name: 'action', label: 'Action', size: 'medium', placeholder: 'task.complete', check: nameCheck('task.complete') },
      { name: 'target_type', label: 'Target type', size: 'medium', placeholder: 'dead_letter', check: nameCheck('job or dead_letter') },
      { name: 'target_id', label: 'Target id', size: 'id' },
      { name: 'actor', label: 'Actor', placeholder: 'ops' },
    ],
    columns: () => [
      { header: 'When', cell: (a) => utc(a.at) },
      { header: 'Actor', cell: (a) => a.actor },
      { header: 'Action', cell: (a) => a.action },
      {
        header: 'Target',
        cell: (a) => [words(a.target_type), ' ', auditTarget(a)],
      },
      { header: 'Detail', cellClass: 'reason', cell: (a) => compact(a.detail) || '—' },
    ],
  });

  const notFoundView = {
    title: 'Not found',
    section: null,
    mount(container, routeInfo) {
      fill(container, heading('Not found'), h('p', null, `There is no view at “${routeInfo.raw}”. `, link('#/overview', 'Go to the overview')));
      return null;
    },
  };

  const ROUTES = {
    overview: { list: overviewView },
    sagas: { list: sagasView, detail: sagaDetail },
    jobs: { list: jobsView, detail: jobDetail },
    tasks: { list: tasksView, detail: taskDetail },
    'dead-letters': { list: deadLettersView, detail: deadLetterDetail },
    discrepancies: { list: discrepanciesView, detail: discrepancyDetail },
    connections: { list: connectionsView, detail: connectionDetail },
    webhooks: { list: webhooksView, detail: deliveryDetail },
    policies: { list: policiesView },
    audit: { list: auditView },
  };

  // ---------------------------------------------------------------------------------------
  // Routing, loading and live refresh

  /** The view on screen: its key (view + id), controller and the JSON last rendered. */
  let current = null;
  let generation = 0;
  let paused = false;
  let loading = false;

  function parseRoute() {
    const raw = location.hash.replace(/^#/, '') || '/overview';
    const [pathPart, queryPart = ''] = raw.split('?');
    const segments = pathPart.split('/').filter(Boolean).map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    const entry = ROUTES[segments[0] || 'overview'];
    let view = notFoundView;
    if (entry && segments.length === 1) view = entry.list;
    else if (entry && entry.detail && segments.length === 2) view = entry.detail;
    return { raw, view, id: segments[1], key: `${view.title}:${segments[1] || ''}`, query: new URLSearchParams(queryPart) };
  }

  function navigate(href) {
    if (location.hash === href) refreshView({ force: true });
    else location.hash = href;
  }

  /** Keeps keyboard focus on the same control (by its data-focus-key) when a view re-renders. */
  function preservingFocus(render) {
    const active = document.activeElement;
    const key = active && active.getAttribute ? active.getAttribute('data-focus-key') : null;
    render();
    if (key && document.activeElement !== active) {
      const again = $('view').querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
      // The control went away (a task resolved, a dead letter replayed): land on the view's title.
      const fallback = $('view-title');
      if (again) again.focus();
      else if (fallback) fallback.focus();
    }
  }

  function route({ focus }) {
    if (!session.basic) return;
    const next = parseRoute();
    showError('');
    for (const a of document.querySelectorAll('#nav a')) {
      if (a.dataset.section === next.view.section) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (current && current.key === next.key && current.controller && current.controller.update) {
      // Same list, new filters or page: keep the form (and focus) and load again.
      current.controller.update(next);
      current.lastJson = null;
      refreshView({ force: true, announceResult: true });
      return;
    }
    generation += 1;
    $('status').textContent = '';
    const container = $('view');
    const controller = next.view.mount(container, next);
    current = { key: next.key, controller, lastJson: null };
    document.title = `${next.view.title} · Ops dashboard`;
    if (focus) {
      const title = $('view-title');
      if (title) title.focus();
    }
    if (controller) refreshView({ force: true });
  }

  async function refreshView({ force = false, announceResult = false, rerenderOnly = false } = {}) {
    if (!current || !current.controller) return;
    const view = current;
    const mine = generation;
    if (rerenderOnly && view.lastData !== undefined) {
      preservingFocus(() => view.controller.render(view.lastData));
      return;
    }
    loading = true;
    try {
      const data = await view.controller.load();
      if (mine !== generation || view !== current) return;
      const json = JSON.stringify(data);
      setRefreshStatus(paused ? 'Live refresh is paused.' : '');
      fill($('refresh-time'), 'Updated ', utcClock(new Date()));
      if (!force && json === view.lastJson) return;
      view.lastJson = json;
      view.lastData = data;
      preservingFocus(() => view.controller.render(data));
      if (announceResult && view.controller.announceLoaded) view.controller.announceLoaded(data);
    } catch (error) {
      if (error instanceof SignedOut || mine !== generation) return;
      if (force) showError(`Could not load this view: ${error.message}`);
      else setRefreshStatus(`Live refresh failed: ${error.message} Retrying every ${REFRESH_MS / 1000} s.`);
    } finally {
      loading = false;
    }
  }

  function tick() {
    if (!session.basic || paused || document.hidden || loading) return;
    // A dialog open means someone is typing a note: the rows behind it stay as they are.
    if (document.querySelector('dialog[open]')) return;
    refreshView();
  }

  function setPaused(value) {
    paused = value;
    const toggle = $('refresh-toggle');
    toggle.setAttribute('aria-pressed', String(paused));
    toggle.textContent = paused ? 'Resume live refresh' : 'Pause live refresh';
    setRefreshStatus(paused ? 'Live refresh is paused.' : '');
    if (!paused) refreshView();
  }

  // ---------------------------------------------------------------------------------------
  // Start

  async function start() {
    $('sign-in-form').addEventListener('submit', onSignIn);
    $('sign-out').addEventListener('click', () => {
      signOut('');
      announce('Signed out.');
    });
    $('refresh-toggle').addEventListener('click', () => setPaused(!paused));
    $('refresh-now').addEventListener('click', () => refreshView({ force: true }));
    $('skip-link').addEventListener('click', (event) => {
      event.preventDefault();
      const title = $('view-title');
      if (title && !$('view').hidden) title.focus();
      else $('main').focus();
    });
    window.addEventListener('hashchange', () => route({ focus: true }));
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) tick();
    });
    window.setInterval(tick, REFRESH_MS);

    let stored = null;
    try {
      stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || 'null');
    } catch {
      stored = null;
    }
    if (stored && typeof stored.basic === 'string') {
      try {
        const answer = await checkCredentials(stored.basic);
        if (answer.signed_in) {
          remember(stored.basic, answer.username || stored.username);
          enterApp();
          return;
        }
        forget();
        showSignIn('The saved credentials are no longer accepted. Sign in again.');
        return;
      } catch {
        forget();
      }
    }
    showSignIn('');
  }

  start();
})();
