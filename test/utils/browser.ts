import { existsSync, mkdirSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Browser, chromium, ConsoleMessage, Page } from 'playwright-core';
import { describeWithPostgres } from '../setup/test-env';

/** The system Chromium (Debian package `chromium`), or CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ci = /^(1|true|yes)$/i.test(process.env.CI ?? '');

/**
 * `describe` when Chromium and PostgreSQL are there. Without Chromium the suite is skipped
 * with a printed reason locally, but runs (and fails at launch) under CI=true, where a
 * missing browser must not pass silently.
 */
export const describeWithBrowser: jest.Describe = (() => {
  if (existsSync(CHROMIUM_PATH) || ci) return describeWithPostgres;
  console.warn(`[test] SKIPPING browser suites: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  return describe.skip;
})();

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Console errors and uncaught exceptions of a page, to assert there are none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

/** Saves numbered screenshots under test-artifacts/browser/<suite>/. */
export function screenshotter(suite: string) {
  const dir = path.resolve(__dirname, '../../test-artifacts/browser', suite);
  mkdirSync(dir, { recursive: true });
  let n = 0;
  return async (page: Page, name: string) => {
    n += 1;
    await page.screenshot({ path: path.join(dir, `${String(n).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
}

export interface CallbackServer {
  url: string;
  /** Query strings of the requests received, in order (favicon requests excluded). */
  received: URLSearchParams[];
  /** Serves `html` at `pathname` (e.g. an opener page for the embedded flow). */
  page(pathname: string, html: string): void;
  close(): Promise<void>;
}

/** A local stand-in for the application: records what the connect flow redirects to it. */
export async function startCallbackServer(): Promise<CallbackServer> {
  const received: URLSearchParams[] = [];
  const pages = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/favicon.ico') {
      response.writeHead(204).end();
      return;
    }
    const html = pages.get(url.pathname);
    if (html !== undefined) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    received.push(url.searchParams);
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><html lang="en"><head><title>Callback</title><link rel="icon" href="data:,"></head><body><h1>Callback received</h1></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    page: (pathname, html) => pages.set(pathname, html),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Runs `act` (a click or key press that submits a form) and waits until the page it leads to
 * has loaded. Unlike waitForURL, this also waits when the new page has the same URL (a form
 * shown again with an error).
 */
export async function navigation(page: Page, act: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() }), act()]);
  await page.waitForLoadState('load');
}
