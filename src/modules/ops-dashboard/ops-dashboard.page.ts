import type { DashboardAssets } from './dashboard-assets';

/**
 * The dashboard's HTML: a static shell without data. The script fills it from /ops/api with
 * the credentials typed into the sign-in form. Paths are relative to /ops, so the page also
 * works behind a proxy that mounts the service under a prefix.
 */
export function dashboardPage(assets: DashboardAssets): string {
  const js = `ops/assets/dashboard.js?v=${assets['dashboard.js'].version}`;
  const css = `ops/assets/dashboard.css?v=${assets['dashboard.css'].version}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Ops dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${css}">
<script src="${js}" defer></script>
</head>
<body>
<a class="skip-link" href="#main" id="skip-link">Skip to content</a>
<header class="topbar">
  <div class="topbar-row">
    <p class="brand">Ops dashboard</p>
    <div class="session" id="session" hidden>
      <span class="refresh-time" id="refresh-time"></span>
      <span class="session-group">
        <button type="button" id="refresh-toggle" aria-pressed="false">Pause live refresh</button>
        <button type="button" id="refresh-now">Refresh now</button>
      </span>
      <span class="session-group account">
        <span class="signed-in-as" id="signed-in-as"></span>
        <button type="button" id="sign-out">Sign out</button>
      </span>
    </div>
  </div>
  <nav id="nav" aria-label="Sections" hidden>
    <ul>
      <li><a href="#/overview" data-section="overview">Overview</a></li>
      <li><a href="#/sagas" data-section="sagas">Sagas</a></li>
      <li><a href="#/jobs" data-section="jobs">Jobs</a></li>
      <li><a href="#/tasks?status=open" data-section="tasks">Tasks</a></li>
      <li><a href="#/dead-letters?status=open" data-section="dead-letters">Dead letters</a></li>
      <li><a href="#/discrepancies" data-section="discrepancies">Discrepancies</a></li>
      <li><a href="#/connections" data-section="connections">Connections</a></li>
      <li><a href="#/webhooks?status=failed" data-section="webhooks">Webhooks</a></li>
      <li><a href="#/policies" data-section="policies">Policies</a></li>
      <li><a href="#/audit" data-section="audit">Audit log</a></li>
    </ul>
  </nav>
</header>
<div class="messages">
  <p id="status" class="status" role="status" aria-live="polite"></p>
  <p id="refresh-status" class="refresh-status" aria-live="polite"></p>
  <div id="error" class="error" role="alert"></div>
</div>
<main id="main" tabindex="-1">
  <noscript><p>The ops dashboard needs JavaScript.</p></noscript>
  <section id="sign-in" class="sign-in" hidden aria-labelledby="sign-in-title">
    <h1 id="sign-in-title" tabindex="-1">Sign in</h1>
    <p>Use the ops credentials (<code>OPS_USERNAME</code> / <code>OPS_PASSWORD</code>).</p>
    <form id="sign-in-form" novalidate>
      <p id="sign-in-error" class="form-error" role="alert"></p>
      <div class="field">
        <label for="ops-username">Username</label>
        <input id="ops-username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required>
      </div>
      <div class="field">
        <label for="ops-password">Password</label>
        <input id="ops-password" name="password" type="password" autocomplete="current-password" required>
      </div>
      <button type="submit" class="primary">Sign in</button>
    </form>
  </section>
  <div id="view" hidden></div>
</main>
</body>
</html>
`;
}
