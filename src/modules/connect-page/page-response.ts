import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { Page, renderLayout } from './connect-page.layout';

/**
 * Sends a page with its own Content-Security-Policy, replacing the API-wide one: scripts and
 * styles only with this response's nonce, nothing loaded from elsewhere, no framing, and
 * forms may only go to this service (plus, on the consent step, to the redirect_uri the
 * answer redirects to: Chromium checks form-action on the redirect too).
 */
export function sendPage(reply: FastifyReply, page: Page): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(page.formTargets ?? [])].join(' ');
  void reply
    .status(page.status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      // Steps hold a signed flow token and, at the end, an authorization code.
      'cache-control': 'no-store',
      'content-security-policy':
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; ` +
        `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      // The embedded flow runs in a popup that reports back to window.opener, an application
      // on another origin; the API-wide `same-origin` would cut that link.
      'cross-origin-opener-policy': 'unsafe-none',
    })
    .send(renderLayout(page, nonce));
}

export function sendRedirect(reply: FastifyReply, location: string): void {
  void reply.status(303).headers({ location, 'cache-control': 'no-store' }).send();
}
