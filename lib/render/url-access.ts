/**
 * Applies a `url` document's access options (lib/render/url-access-options.ts) to its workspace
 * page, before the document is navigated: the user agent, cookies, and extra headers (basic_auth
 * among them) for the document's own origin.
 *
 * The origin is the scheme, host and port of the URL the caller gave, after validation. The headers
 * are the origin's credentials, and lent as a browser lends credentials: only to requests the origin
 * itself starts (see `startedByOrigin`), never to one another origin's frame, worker or page starts,
 * which could read the answer (a frame of site B fetching A with `credentials: 'omit'`, A answering
 * `Access-Control-Allow-Origin: *`) or act with A's credentials. They are added by the browser's
 * Fetch interception, in the browser process, so a page cannot read them, and only to requests whose
 * URL is on the origin, so a request to another origin never carries them. Chromium 153 does not
 * carry headers added this way over a redirect (the next hop is a new request, on the origin or
 * not, judged again): measured for 301, 302, 303, 307 and 308, for the page and for images,
 * frames, fetch and XHR, and kept true by test/integration/url-options.test.ts.
 *
 * basic_auth is such a header (`Authorization: Basic`), sent with the requests the rule admits and
 * no others. No HTTP authentication challenge is ever answered: DevTools' Fetch.authRequired is not
 * enabled, and Chromium keeps no credentials from a header it did not negotiate, so a 401 to any
 * other request stays a 401 (tested with the hostile frame).
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
 * document's host on any port, as every browser does with cookies, never to another host. The
 * browser's own cookie rules decide which requests carry them (credentials mode, SameSite).
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

/** A request header by name, whatever its case (DevTools gives them as the browser spelled them). */
function headerValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** What a paused request to the origin tells of who started it. */
export interface PausedRequest {
  /** The request's headers as the page made them (before ours are added). */
  readonly headers: Readonly<Record<string, string>>;
  /** DevTools' resource type: `Document` for a navigation, of the main frame or a frame in it. */
  readonly resourceType: string;
  /** Whether it is a request of the page's main frame (for a navigation: whether it navigates the top). */
  readonly mainFrame: boolean;
}

/**
 * Whether a request to the origin was started by the origin itself, read from what the request
 * carries. The two headers used are set by the browser and no page can set or forge them (they are
 * forbidden request headers, and a page may give a referrer only on its own origin); what
 * Chromium 153 shows of them at the Fetch domain's Request stage was measured with a frame of another
 * origin trying every kind of request (test/integration/url-options.test.ts keeps it true). Sec-Fetch-Site,
 * the browser's own verdict, would be the natural witness, but Chromium adds it after the Fetch domain
 * has seen the request, as it adds cookies; nor does a paused request say its credentials mode.
 *
 * - `Origin`, when present, names the origin that started the request: Chromium sends it with every
 *   CORS request from another origin (fetch and XHR in any credentials mode, fonts, module scripts,
 *   `crossorigin` elements, workers' fetches, and fetches from an about:blank, srcdoc or data: frame,
 *   as `null` for the last), and with every POST. Another origin, or `null`, and the request is
 *   not the origin's: this alone refuses every request whose answer CORS would let another origin read.
 * - The top-level navigation is the document's: its answer becomes the page, which no other
 *   origin's script can read (a frame is gone once the top navigates). As with SameSite=Lax
 *   cookies, a navigation posted from another origin is refused by the rule above.
 * - Anything else (subresources, frames' navigations, workers' requests) needs a `Referer` on the
 *   origin: Chromium sends the URL (or at least the origin) of the document, style sheet or worker
 *   that asked. A document of another origin, or one that withholds its referrer (`no-referrer`, an
 *   about:blank or data: frame) gets nothing: a page of the origin with a `no-referrer` policy
 *   loses the headers on its subresources too (its cookies, which the browser sends by its own
 *   rules, still go), a cost accepted for a rule that needs no guess.
 *
 * A request of the origin's own document made with `credentials: 'omit'` is not told apart: it
 * looks the same at the Fetch domain as one without (measured), and the origin's own scripts can
 * read its answers with credentials anyway.
 */
export function startedByOrigin(request: PausedRequest, origin: string): boolean {
  const from = headerValue(request.headers, 'Origin');
  if (from !== undefined && from !== origin) return false;
  if (request.resourceType === 'Document' && request.mainFrame) return true;
  const referer = headerValue(request.headers, 'Referer');
  return referer !== undefined && originOf(referer) === origin;
}

/** How long a request from a frame of another origin that is navigating waits for that navigation to commit. */
const PENDING_NAVIGATION_WAIT_MS = 1_000;

interface FrameState {
  /** The document last committed in it (as Page.frameNavigated told) is of another http(s) origin. */
  foreign: boolean;
  /** Settles when the frame's next document commits (or the frame goes), while a navigation of it is under way. */
  navigation?: { readonly committed: Promise<void>; readonly settle: () => void };
}

/**
 * Which frames hold a document of another origin, from the page's own DevTools events: a request
 * such a frame starts is never the origin's, whatever its Referer says. That covers what the
 * Referer alone cannot: a style sheet of the origin used by another origin's page sends the style
 * sheet's URL as the Referer of the images and imports it asks for.
 *
 * A frame is known foreign from the commit of its document until the commit of the next one.
 * While it navigates, the next document may already be asking (its requests can reach the Fetch
 * domain before its commit event does), so a request from a foreign frame that is navigating waits
 * for that commit, PENDING_NAVIGATION_WAIT_MS at most, and is judged by the document then in the
 * frame. Documents without an origin of their own in the event (about:blank, srcdoc, data:) are
 * left to the headers' rule, which refuses all but a srcdoc document of the origin (whose Referer
 * is its parent's URL).
 */
export class FrameDocuments {
  readonly #origin: string;
  readonly #frames = new Map<string, FrameState>();
  #mainFrameId: string | undefined;

  constructor(origin: string) {
    this.#origin = origin;
  }

  #state(frameId: string): FrameState {
    let state = this.#frames.get(frameId);
    if (!state) this.#frames.set(frameId, (state = { foreign: false }));
    return state;
  }

  /** The page's main frame, as Page.getFrameTree gives it before the document is navigated. */
  mainFrame(frameId: string): void {
    this.#mainFrameId ??= frameId;
  }

  isMainFrame(frameId: string): boolean {
    return frameId === this.#mainFrameId;
  }

  /** Page.frameStartedNavigating. */
  startedNavigating(event: Protocol.Page.FrameStartedNavigatingEvent): void {
    if (!['differentDocument', 'historyDifferentDocument', 'reload', 'reloadBypassingCache', 'restore', 'restoreWithPost'].includes(event.navigationType)) return;
    const state = this.#state(event.frameId);
    if (state.navigation) return;
    let settle!: () => void;
    const committed = new Promise<void>((resolve) => (settle = resolve));
    state.navigation = { committed, settle };
  }

  /** Page.frameNavigated: a document committed in the frame. */
  navigated({ frame }: Protocol.Page.FrameNavigatedEvent): void {
    if (frame.parentId === undefined) this.#mainFrameId = frame.id;
    const state = this.#state(frame.id);
    const origin = frame.securityOrigin;
    state.foreign = /^https?:\/\/[^/]/.test(origin) && origin !== this.#origin;
    state.navigation?.settle();
    state.navigation = undefined;
  }

  /** Page.frameDetached. */
  detached({ frameId }: Protocol.Page.FrameDetachedEvent): void {
    this.#frames.get(frameId)?.navigation?.settle();
    this.#frames.delete(frameId);
  }

  /** Whether a request the frame started now may have been started by a document of another origin. */
  async holdsForeignDocument(frameId: string): Promise<boolean> {
    const state = this.#frames.get(frameId);
    if (!state?.foreign) return false;
    if (!state.navigation) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([state.navigation.committed, new Promise<void>((resolve) => (timer = setTimeout(resolve, PENDING_NAVIGATION_WAIT_MS)))]);
    clearTimeout(timer);
    const now = this.#frames.get(frameId);
    // Gone meanwhile: whoever asked is gone with it.
    return !now || now.foreign;
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
    access.userAgent !== undefined ? page.createCDPSession().then((own) => userAgentForWorkers(own, access.userAgent!)) : undefined,
    session && cookies.length > 0 ? setCookies(session, cookies) : undefined,
    session && Object.keys(headers).length > 0 ? interceptOrigin(page, session, new URL(documentUrl).origin, headers, applied) : undefined,
  ]);
  return applied;
}

/** The workers whose requests page.setUserAgent does not reach: they are targets of their own. */
const WORKER_TARGETS: Protocol.Target.TargetFilter = [{ type: 'service_worker' }, { type: 'worker' }, { exclude: true }];

/**
 * Gives `userAgent` to every worker DevTools counts as the page's own (its service workers and
 * dedicated workers, and the workers they start in turn) before it runs: page.setUserAgent covers
 * the page's requests, but a worker is a target of its own. The sessions stay open with the workers
 * (an override lasts as long as its session); they go with the document's browser context.
 *
 * Dedicated workers: Puppeteer gives them the page's user agent itself, on a session of its own,
 * before resuming them; this session's override, sent before its own Runtime.runIfWaitingForDebugger,
 * is the same.
 *
 * Service workers: the header is set in the browser process, by the Fetch domain on the worker's
 * session, for every request the worker makes (its own script's among them) and every redirect
 * hop. The worker's Network.setUserAgentOverride alone was a race, lost about once in 80 documents
 * on a loaded machine (5 of 400 with both cores busy, 0 of 400 with this): Chromium holds a new
 * service worker's script fetch until every session auto-attached under the page resumes it, and
 * answers the worker's Network commands only once it runs; then the worker starts paused, and the
 * first Runtime.runIfWaitingForDebugger of any session lets its script run. Puppeteer attaches to
 * service workers too (from the browser and from the page, earlier than this session) and resumes
 * them at once, so a command of its reached the worker first, and the worker's first fetch could
 * go before this session's override was read. Fetch.enable is answered by the browser while the
 * worker is still held, and this session resumes the worker only after that answer.
 *
 * Not covered (measured with Chromium 153): a shared worker, which is no page's own target
 * (DevTools reports it only at the browser level), so its requests still say Chromium's default;
 * and a service worker's `navigator.userAgent`, which says Chromium's default whatever its session
 * is told (Network or Emulation.setUserAgentOverride): it is not what its requests send.
 */
async function userAgentForWorkers(session: CDPSession, userAgent: string): Promise<void> {
  session.on('Target.attachedToTarget', (event: Protocol.Target.AttachedToTargetEvent) => {
    const worker = session.connection()?.session(event.sessionId);
    if (!worker) return;
    const serviceWorker = event.targetInfo.type === 'service_worker';
    if (serviceWorker) worker.on('Fetch.requestPaused', (paused: Protocol.Fetch.RequestPausedEvent) => withUserAgent(worker, paused, userAgent));
    // Answered by the browser while the worker is held (before its script is even fetched); a
    // failure (a worker gone meanwhile) still lets the worker run, as it would without an override.
    const intercepting = serviceWorker ? worker.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] }).catch(() => undefined) : undefined;
    // The Network commands are answered only once the worker runs: they go with the rest, and
    // DevTools delivers a session's commands in order, so this session's override comes before its
    // own Runtime.runIfWaitingForDebugger.
    Promise.all([
      worker.send('Network.enable'),
      worker.send('Network.setUserAgentOverride', { userAgent }),
      userAgentForWorkers(worker, userAgent),
      Promise.resolve(intercepting).then(() => worker.send('Runtime.runIfWaitingForDebugger')),
    ]).catch(() => undefined); // a worker gone meanwhile
  });
  await session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true, filter: WORKER_TARGETS });
}

/**
 * Sends a service worker's paused request on with `userAgent` as its User-Agent (its own script's
 * request shows none yet at this stage: the network stack would add Chromium's default). A request
 * DevTools will not send on so is failed rather than sent with another user agent.
 */
function withUserAgent(worker: CDPSession, paused: Protocol.Fetch.RequestPausedEvent, userAgent: string): void {
  const { requestId } = paused;
  worker.send('Fetch.continueRequest', { requestId, headers: withOriginHeaders(paused.request.headers, { 'User-Agent': userAgent }) }).catch((error: unknown) => {
    if (requestIsGone(error)) return;
    worker.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
  });
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
  const frames = new FrameDocuments(origin);
  session.on('Page.frameStartedNavigating', (event: Protocol.Page.FrameStartedNavigatingEvent) => frames.startedNavigating(event));
  session.on('Page.frameNavigated', (event: Protocol.Page.FrameNavigatedEvent) => frames.navigated(event));
  session.on('Page.frameDetached', (event: Protocol.Page.FrameDetachedEvent) => frames.detached(event));
  session.on('Fetch.requestPaused', (event: Protocol.Fetch.RequestPausedEvent) => {
    const { requestId } = event;
    void (async () => {
      // The pattern admits only the origin; a URL that is not on it goes on exactly as it was, and so
      // does a request the origin did not start.
      const lend =
        originOf(event.request.url) === origin &&
        startedByOrigin({ headers: event.request.headers, resourceType: event.resourceType, mainFrame: frames.isMainFrame(event.frameId) }, origin) &&
        // A navigation's frame holds the document it is leaving, which says nothing of who asked.
        (event.resourceType === 'Document' || !(await frames.holdsForeignDocument(event.frameId)));
      try {
        await (lend
          ? session.send('Fetch.continueRequest', { requestId, headers: withOriginHeaders(event.request.headers, headers) })
          : session.send('Fetch.continueRequest', { requestId }));
      } catch (error) {
        if (requestIsGone(error)) return;
        // Still paused: it fails rather than wait forever, or go to the origin without the headers.
        if (lend) applied.refusal ??= new DocumentError('INVALID_OPTIONS', 'http_headers could not be sent: the browser refused them');
        session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
      }
    })();
  });
  const [{ frameTree }] = await Promise.all([
    session.send('Page.getFrameTree'),
    session.send('Page.enable'),
    session.send('Fetch.enable', { patterns: [{ urlPattern: originPattern(origin), requestStage: 'Request' }] }),
    // A service worker's own fetches are outside the page's interception: the page's requests
    // bypass service workers, so that each one to the origin carries the headers.
    page.setBypassServiceWorker(true),
  ]);
  frames.mainFrame(frameTree.frame.id);
}
