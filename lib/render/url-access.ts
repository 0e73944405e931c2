/**
 * Applies a `url` document's access options (lib/render/url-access-options.ts) to its workspace
 * page, before the document is navigated: the user agent, cookies, and extra headers (basic_auth
 * among them) for the document's own origin.
 *
 * The origin is the scheme, host and port of the URL the caller gave, after validation. Headers go
 * to that origin only: the page, its subresources, and redirects that stay on it. They are added by
 * the browser's Fetch interception, in the browser process, to requests whose URL is on the origin,
 * so a page cannot read them and a request to another origin never carries them. Chromium 153 does
 * not carry headers added this way over a redirect (the next hop is a new request, on the origin or
 * not): measured for 301, 302, 303, 307 and 308, for the page and for images, frames, fetch and XHR,
 * and kept true by test/integration/url-options.test.ts.
 *
 * Interception is on only when there are headers to add, and only requests to the origin pause:
 * about 1.5 ms per such request on this 2-core machine, nothing for the others. It is the Fetch
 * domain on a DevTools session of its own rather than Puppeteer's request interception, which
 * pauses every request of every origin and answers each through Puppeteer's pairing of network
 * events (a request whose events never pair would wait forever); here each paused request is
 * continued exactly once, directly, and Puppeteer's own request events, which the render's request
 * tracker counts, are left as they were.
 *
 * Cookies are set in the document's own browser context (closed after it), host-only: sent to the
 * document's host on any port, as every browser does with cookies, never to another host.
 *
 * No secret (header values, cookie values, the password) is ever logged or put in an error message:
 * errors name the option, never its value.
 */
import type { CDPSession, Page, Protocol } from 'puppeteer-core';
import { DocumentError } from './errors.ts';
import type { UrlAccess, UrlCookie } from './url-access-options.ts';

/** What applying the options left for the navigation to check. */
export interface AppliedUrlAccess {
  /**
   * Set when the browser would not send the headers with a request to the origin: that request was
   * failed rather than sent without them, and the document fails with this error.
   */
  readonly refusal: DocumentError | undefined;
}

/** The headers sent to the document's origin: http_headers, and basic_auth as `Authorization: Basic`. */
export function originHeaders(access: UrlAccess): Record<string, string> {
  const headers: Record<string, string> = { ...access.headers };
  if (access.basicAuth) {
    // RFC 7617: base64 of user-id ":" password, in UTF-8.
    const credentials = Buffer.from(`${access.basicAuth.username}:${access.basicAuth.password}`, 'utf8').toString('base64');
    headers.Authorization = `Basic ${credentials}`;
  }
  return headers;
}

/**
 * A request's headers with the origin's added: each replaces a header of the same name (names
 * ignore case), the others are kept as the browser made them.
 */
export function withOriginHeaders(requestHeaders: Readonly<Record<string, string>>, added: Readonly<Record<string, string>>): Protocol.Fetch.HeaderEntry[] {
  const replaced = new Set(Object.keys(added).map((name) => name.toLowerCase()));
  return [
    ...Object.entries(requestHeaders)
      .filter(([name]) => !replaced.has(name.toLowerCase()))
      .map(([name, value]) => ({ name, value })),
    ...Object.entries(added).map(([name, value]) => ({ name, value })),
  ];
}

/**
 * The cookies as DevTools sets them: with the document's URL and no domain, which makes each a
 * host-only cookie of the document's host. `secure` defaults to whether the document is https.
 */
export function cookieParams(cookies: readonly UrlCookie[], documentUrl: string): Protocol.Network.CookieParam[] {
  const url = new URL(documentUrl);
  const https = url.protocol === 'https:';
  return cookies.map((cookie, index) => {
    const secure = cookie.secure ?? https;
    if (secure && !https) {
      throw new DocumentError('INVALID_OPTIONS', `cookies[${index}] is secure but url is http: a browser sends secure cookies over https only`);
    }
    return { name: cookie.name, value: cookie.value, url: url.origin + cookie.path, path: cookie.path, secure, httpOnly: cookie.httpOnly };
  });
}

/** The Fetch pattern of every URL on an origin (`*` and `?` cannot occur in a serialized origin). */
function originPattern(origin: string): string {
  return `${origin}/*`;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Errors DevTools gives when the paused request no longer exists: cancelled by window.stop() or a
 * new navigation, or its page closed. Nothing is left to continue then.
 */
function requestIsGone(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Invalid InterceptionId|Target closed|Session closed|detached|Connection closed/i.test(message);
}

/**
 * Applies the options to a fresh workspace page whose document is `documentUrl` (already checked by
 * the egress guard's rules). Throws INVALID_OPTIONS for what only the URL can refuse (a secure
 * cookie for an http page); what the options alone decide was refused by validation.
 */
export async function applyUrlAccess(page: Page, documentUrl: string, access: UrlAccess): Promise<AppliedUrlAccess> {
  const applied: { refusal: DocumentError | undefined } = { refusal: undefined };
  const headers = originHeaders(access);
  const cookies = cookieParams(access.cookies, documentUrl);
  const needsSession = cookies.length > 0 || Object.keys(headers).length > 0;
  const session = needsSession ? await page.createCDPSession() : undefined;
  await Promise.all([
    access.userAgent !== undefined ? page.setUserAgent({ userAgent: access.userAgent }) : undefined,
    session && cookies.length > 0 ? setCookies(session, cookies) : undefined,
    session && Object.keys(headers).length > 0 ? interceptOrigin(page, session, new URL(documentUrl).origin, headers, applied) : undefined,
  ]);
  return applied;
}

async function setCookies(session: CDPSession, cookies: Protocol.Network.CookieParam[]): Promise<void> {
  await Promise.all(
    cookies.map(async (cookie, index) => {
      // The refusal names the cookie by its place, never by its value (nor keeps DevTools' words).
      const refused = () => new DocumentError('INVALID_OPTIONS', `cookies[${index}] was refused by the browser`);
      const result = await session.send('Network.setCookie', cookie).catch(() => {
        throw refused();
      });
      // Older Chromium answered a refusal with success: false rather than an error.
      if (result.success === false) throw refused();
    }),
  );
}

async function interceptOrigin(
  page: Page,
  session: CDPSession,
  origin: string,
  headers: Record<string, string>,
  applied: { refusal: DocumentError | undefined },
): Promise<void> {
  session.on('Fetch.requestPaused', (event: Protocol.Fetch.RequestPausedEvent) => {
    const { requestId } = event;
    // The pattern admits only the origin; a URL that is not on it goes on exactly as it was.
    const onOrigin = originOf(event.request.url) === origin;
    const continued = onOrigin
      ? session.send('Fetch.continueRequest', { requestId, headers: withOriginHeaders(event.request.headers, headers) })
      : session.send('Fetch.continueRequest', { requestId });
    continued.catch((error: unknown) => {
      if (requestIsGone(error)) return;
      // Still paused: it fails rather than wait forever, or go to the origin without the headers.
      if (onOrigin) applied.refusal ??= new DocumentError('INVALID_OPTIONS', 'http_headers could not be sent: the browser refused them');
      session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
    });
  });
  await Promise.all([
    session.send('Fetch.enable', { patterns: [{ urlPattern: originPattern(origin), requestStage: 'Request' }] }),
    // A service worker's own fetches are outside the page's interception: the page's requests
    // bypass service workers, so that each one to the origin carries the headers.
    page.setBypassServiceWorker(true),
  ]);
}
