/**
 * Allowed origins: the web origins (`scheme://host[:port]`) an application's pages run on. The
 * embedded connect flow hands its result to `window.opener` with exactly one of them as the
 * postMessage target, so they are kept in the browser's own form (`location.origin`): lower-case
 * scheme and host, no default port, no trailing slash.
 */

export const MAX_ORIGIN_LENGTH = 300;

export const ORIGIN_FORM = 'scheme://host[:port] with http or https and no path, query or fragment, such as https://app.example.com';

/** The origin as the browser writes it, or why `value` is not an http(s) origin. */
export function parseOrigin(value: string): { origin: string } | { problem: string } {
  if (value.length > MAX_ORIGIN_LENGTH) return { problem: `is longer than ${MAX_ORIGIN_LENGTH} characters` };
  if (/\s/.test(value)) return { problem: 'must not contain spaces' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must use http or https' };
  if (url.username !== '' || url.password !== '') return { problem: 'must not have a user name or password' };
  // The URL parser drops an empty `?` or `#`, resolves `/.` and reads `\` as `/`, so the text
  // itself must be `scheme://host[:port]`, with at most one trailing slash.
  if (!/^https?:\/\/[^/?#\\]+\/?$/i.test(value)) return { problem: 'must not have a path, query or fragment' };
  return { origin: url.origin };
}

/** Every value as an origin, in order and without repeats; `problems` names each bad value. */
export function parseOrigins(values: string[]): { origins: string[]; problems: string[] } {
  const origins: string[] = [];
  const problems: string[] = [];
  for (const value of values) {
    const parsed = parseOrigin(value);
    if ('problem' in parsed) problems.push(`${value} ${parsed.problem}`);
    else if (!origins.includes(parsed.origin)) origins.push(parsed.origin);
  }
  return { origins, problems };
}

/**
 * The origins of redirect URIs: what an application gets when it names no origins. Its
 * redirect URIs already receive its codes, so posting one to the same origins grants nothing new.
 */
export function redirectUriOrigins(redirectUris: string[]): string[] {
  const origins: string[] = [];
  for (const uri of redirectUris) {
    let origin: string;
    try {
      origin = new URL(uri).origin;
    } catch {
      continue;
    }
    if (/^https?:\/\//.test(origin) && !origins.includes(origin)) origins.push(origin);
  }
  return origins;
}
