/**
 * Navigations of the main frame away from the document given: a meta refresh, a script setting
 * `location`, a form the document submits, a link it follows (or, for a `url` document, any of these
 * after its page was opened).
 *
 * The egress guard refuses the request as it refuses any other, but the browser then shows what
 * the refusal left (the guard's empty 403, or an error page for https) in place of the document,
 * and that printed blank and was charged. A navigation away that the guard refuses therefore fails
 * the document as a refused `url` does (URL_NOT_ALLOWED: a 400, nothing charged), and one to a site
 * that does not answer fails as an unreachable `url` does (URL_UNREACHABLE). One that is allowed
 * is followed, as Chrome would show it: the page the document navigated to is printed, once it has
 * loaded (see `settle`). One the browser drops (a 204 answer, a download, a navigation replaced by
 * another) leaves the document where it was.
 *
 * Known from Puppeteer's network events, which Chromium sends for a navigation when it starts (in
 * the browser, before the request reaches the guard) and when it is answered (before the answer
 * becomes the page): so a navigation that began before the PDF was made is known, and its outcome
 * waited for, before the PDF is handed out.
 */
import type { HTTPRequest, Page } from 'puppeteer-core';
import { REFUSAL_HEADER, UNREACHABLE } from '#lib/egress/guard.ts';
import { portOf } from '#lib/egress/destinations.ts';
import { DocumentError } from './errors.ts';

export interface NavigationsAway {
  /** Why the document fails, once a navigation away was refused or reached nothing. */
  readonly failure: DocumentError | undefined;
  /** How many navigations away have begun so far (redirects not counted). */
  readonly begun: number;
  /**
   * Waits, at most `ms`, for the navigations away begun so far to be answered, and with `loaded`
   * for the page one of them brought to finish loading; then throws the failure, if there is one.
   */
  settle(ms: number, options?: { readonly loaded?: boolean }): Promise<void>;
}

/** `host:port` of a URL as the egress guard records what it refused. */
function destinationOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${portOf(parsed)}`;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Watches the main frame of `page` from now on. With `opening`, the first navigation of the main
 * frame (and its redirects) is the document's own, opened by the caller, which judges it; every
 * other one is a navigation away. `refused` gives the guard's refused destinations (`host:port`).
 */
export function watchNavigationsAway(page: Page, { opening, refused }: { readonly opening: boolean; readonly refused: () => readonly string[] }): NavigationsAway {
  let own: HTTPRequest | undefined;
  let begun = 0;
  const pending = new Set<HTTPRequest>();
  let committedAway = false;
  let failure: DocumentError | undefined;
  let changed: () => void = () => undefined;
  const notify = () => changed();

  const isAway = (request: HTTPRequest): boolean => {
    if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return false;
    if (opening && own === undefined) own = request;
    const first = request.redirectChain()[0] ?? request;
    return first !== own;
  };
  const fail = (error: DocumentError) => {
    failure ??= error;
    notify();
  };
  const place = (request: HTTPRequest) => destinationOf(request.url()) ?? 'an address';

  page.on('request', (request) => {
    if (!isAway(request)) return;
    pending.add(request);
    if (request.redirectChain().length === 0) begun++;
  });
  page.on('response', (response) => {
    const request = response.request();
    if (!pending.has(request)) return;
    const guardSaid = response.headers()[REFUSAL_HEADER];
    if (guardSaid === UNREACHABLE) fail(new DocumentError('URL_UNREACHABLE', `The document navigated its page to ${place(request)}, which did not answer`));
    else if (guardSaid) fail(notAllowed(place(request)));
  });
  page.on('requestfailed', (request) => {
    if (!pending.delete(request)) return;
    const reason = request.failure()?.errorText ?? '';
    const destination = destinationOf(request.url());
    // https arrives at the guard as a tunnel, refused before any answer: the guard knows why.
    if (destination && refused().includes(destination)) fail(notAllowed(destination));
    // Dropped by the browser (a 204, a download, replaced by another navigation): the document stays.
    else if (!/ERR_ABORTED/.test(reason)) fail(new DocumentError('URL_UNREACHABLE', `The document navigated its page to ${place(request)}, which could not be loaded (${/net::ERR_[A-Z_]+/.exec(reason)?.[0] ?? 'no answer'})`));
    else notify();
  });
  page.on('requestfinished', (request) => {
    // A redirect finishes its hop (the next hop is a request of its own); an answer without a page
    // (204) finishes it too.
    if (pending.delete(request)) notify();
  });
  page.on('framenavigated', (frame) => {
    if (frame !== page.mainFrame() || pending.size === 0) return;
    // The answer became the page: the navigations begun so far are over.
    pending.clear();
    committedAway = true;
    notify();
  });

  const untilChange = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      changed = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  return {
    get failure() {
      return failure;
    },
    get begun() {
      return begun;
    },
    async settle(ms, { loaded = false } = {}) {
      const until = performance.now() + ms;
      while (pending.size > 0 && !failure && performance.now() < until) await untilChange(until - performance.now());
      if (failure) throw failure;
      if (!loaded || !committedAway) return;
      // The page navigated to loads as any document does: at most as long as its subresources may take.
      while (performance.now() < until) {
        const state = await page.evaluate(() => document.readyState).catch(() => 'navigating');
        if (failure) throw failure;
        if (state === 'complete' && pending.size === 0) return;
        await sleep(50);
      }
    },
  };
}

function notAllowed(destination: string): DocumentError {
  return new DocumentError(
    'URL_NOT_ALLOWED',
    `The document navigated its page to ${destination}, which is not allowed: a page may only be printed from a publicly reachable host, not a private, loopback or link-local address`,
  );
}
