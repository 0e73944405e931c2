/**
 * One document in, one PDF out.
 *
 * Every document gets its own browser context (incognito-like: its own cookies, storage, cache and
 * service workers), closed when the PDF is done, so nothing one customer's document sets can be
 * seen by or act on a later one. A document that overruns its time limit has its context closed;
 * a browser that cannot even do that is killed and replaced.
 */
import type { HTTPResponse, Page, PDFOptions } from 'puppeteer-core';
import { imageSize } from 'image-size';
import { DocumentError, quoteInput } from './errors.ts';
import { takeRenderSlot } from './capacity.ts';
import { forgetMemoryKill, recentMemoryKill } from './memory-budget.ts';
import { REFUSAL_HEADER, UNREACHABLE, type EgressGuard } from '#lib/egress/guard.ts';
import type { HtmlTraits } from './html.ts';
import { countPages } from './pdf-pages.ts';
import { PAST_THE_LAST_PAGE, refuseOverlongDocument, tooManyPages } from './page-limit.ts';
import { chromiumPageRanges, formatPageRanges, leastPagesSelected, type PageRange } from './page-ranges.ts';
import { finishPdf, needsFinishing, type FinishPdf } from './finishing.ts';
import { printStamp } from './watermark-stamp.ts';
import { printBoxStamp, type BoxStamp, type PrintedBox } from './box-stamp.ts';
import { releaseWorkspace, takeWorkspace, type Workspace, type WorkspacePolicy } from './workspaces.ts';
import type { EmulatedMedia, PaperFormat, RenderOptions } from './options.ts';
import { preparePrint } from './print-preparation.ts';
import { applyUrlAccess, type AppliedUrlAccess } from './url-access.ts';
import { watchNavigationsAway } from './navigation-away.ts';
import { headerFooterOptions, type MarginBoxStyle } from './margin-boxes.ts';
import { pictureSizeProblem, type ImageOptions } from './image-options.ts';

/**
 * What to render: HTML (with whether it needs scripting, see lib/render/html.ts) or a URL, whose
 * pages are always rendered with scripting on.
 */
export type DocumentSource = ({ readonly html: string } & HtmlTraits) | { readonly url: string };

export interface RenderedPdf {
  readonly bytes: Uint8Array;
  readonly pages: number;
  /** The box asked for (`box`), printed in the document's workspace after the document. */
  readonly box?: PrintedBox;
}

/**
 * A PDF as renderPdf made it, with what is left of its render time limit: the limit is the
 * document's, so whatever else the browser does for it (its thumbnail, lib/render/thumbnail.ts)
 * gets only the rest.
 */
export interface RenderedDocument extends RenderedPdf {
  /** The time limit less what the browser's part of the rendering took, never below 0. */
  readonly timeLeftMs: number;
}

/** Puppeteer's PDF settings for validated options. */
export function toPdfOptions(options: RenderOptions, now: Date, timeoutMs: number, marginBoxStyle: MarginBoxStyle = {}): PDFOptions {
  const { displayHeaderFooter, headerTemplate, footerTemplate, margin } = headerFooterOptions(options, now, marginBoxStyle);
  return {
    // A caller's own width and height override the format.
    ...(options.pageSize ?? { format: options.format as PaperFormat }),
    // The document's own @page size wins unless the caller says otherwise.
    preferCSSPageSize: options.preferCssPageSize,
    landscape: options.landscape,
    margin,
    printBackground: options.printBackground,
    scale: options.scale,
    // Tagged (accessible) unless the caller opts out, as Chrome prints.
    tagged: options.tagged,
    // Bookmarks from the headings.
    outline: options.outline,
    displayHeaderFooter,
    ...(headerTemplate !== undefined && { headerTemplate }),
    ...(footerTemplate !== undefined && { footerTemplate }),
    timeout: timeoutMs,
  };
}

/** What one document may use; each is a named setting (lib/settings.ts) with a documented default. */
export interface RenderLimits {
  readonly timeoutMs: number;
  /** Pages printed at most; a longer document is refused rather than printed in full. */
  readonly maxPages: number;
  /** Largest PDF accepted; printing stops as soon as it is exceeded. */
  readonly maxPdfBytes: number;
  /** Most bytes the document may download through the egress guard. */
  readonly maxDownloadBytes: number;
  /** Longest the document's subresources are waited for before it prints without them. */
  readonly resourceTimeoutMs: number;
  /** How long a document with scripts must stay quiet to count as done drawing. */
  readonly settleQuietMs: number;
  /** Longest a document with scripts is waited for to go quiet. */
  readonly settleMaxMs: number;
  /** `host:port` entries the document may reach although they are not public. */
  readonly allowPrivateHosts: ReadonlySet<string>;
  /** How browser workspaces are prepared. */
  readonly workspaces: WorkspacePolicy;
}

/**
 * Renders one document in a fresh workspace of its own (lib/render/workspaces.ts). `finish` applies
 * its metadata, watermark and encryption: finishPdf on this thread unless the caller gives a way to
 * run it elsewhere (lib/documents gives a worker thread's, so the event loop is not held). `box`
 * is printed as a one-page PDF of its own after the document, in its workspace (./box-stamp.ts: a
 * visible signature's appearance), and handed back beside the document for the caller to lay on.
 */
export async function renderPdf(
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  { now = new Date(), finish = finishPdf, box }: { now?: Date; finish?: FinishPdf; box?: BoxStamp | undefined } = {},
): Promise<RenderedDocument> {
  const { made: printed, timeLeftMs } = await renderInWorkspace(source, options, limits, { media: 'print' }, (workspace, budget) =>
    printPage(workspace, source, options, limits, budget, now, box),
  );
  const printedBox = printed.box && { box: printed.box };
  try {
    const printedPages = await countPages(printed.bytes);
    if (printedPages > limits.maxPages) throw tooManyPages(limits.maxPages);
    if (options.pageRanges && printedPages < Math.min(leastPagesSelected(options.pageRanges), limits.maxPages + 1)) {
      throw pastTheLastPage(options.pageRanges, printedPages);
    }
    if (!needsFinishing(options.finishing)) return { bytes: printed.bytes, pages: printedPages, timeLeftMs, ...printedBox };
    // Pages and size are those of the file the customer gets.
    const finished = await finish({ bytes: printed.bytes, pages: printedPages }, options.finishing, printed.stamp);
    if (finished.bytes.byteLength > limits.maxPdfBytes) throw pdfTooLarge(limits.maxPdfBytes);
    return { bytes: finished.bytes, pages: finished.pages, timeLeftMs, ...printedBox };
  } catch (error) {
    throw asDocumentError(error);
  }
}

/** A picture of a document: its bytes and its size in device pixels. */
export interface RenderedImage {
  readonly bytes: Uint8Array;
  readonly width: number;
  readonly height: number;
}

/**
 * Takes a picture of one document (`POST /v1/image/generate`): the same workspace, egress guard,
 * memory budget, readiness waits and time limit as a PDF (renderInWorkspace), the page laid out
 * in the caller's viewport instead of on paper, and Chromium's own Page.captureScreenshot instead
 * of printing, so the picture is what plain Chromium shows at that viewport.
 */
export async function renderImage(source: DocumentSource, options: RenderOptions, image: ImageOptions, limits: RenderLimits): Promise<RenderedImage> {
  const { made } = await renderInWorkspace(source, options, limits, { viewport: image.viewport, media: 'screen' }, (workspace) => picturePage(workspace, image, limits));
  return made;
}

/**
 * Where every document is made, PDF or picture: a render slot (lib/render/capacity.ts), then a
 * fresh workspace, the document loaded and waited for as its options ask, followed when it navigates
 * away, and `output` made of it within the document's time limit. The workspace is closed after,
 * whatever happened. Answers what was made and the time left of the limit.
 */
async function renderInWorkspace<T>(
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  layout: { readonly viewport?: ImageOptions['viewport']; readonly media: EmulatedMedia },
  output: (workspace: Workspace, budget: Budget) => Promise<T>,
): Promise<{ made: T; timeLeftMs: number }> {
  // The browser's part of the document holds a render slot (lib/render/capacity.ts); its time limit
  // starts once it has one, and its workspace: starting the browser (a cold start unpacks and
  // launches Chromium, seconds when many environments start at once) is the service's time, not
  // the document's, and bounded on its own (puppeteer's launch timeout, OPEN_TIMEOUT_MS).
  using _slot = await takeRenderSlot();
  // Readiness conditions are evaluated in the page, so a document given one gets scripting on.
  const needsScripts =
    !('html' in source) || source.scripted || options.waitForSelector !== undefined || options.waitForExpression !== undefined;
  const workspace = await takeWorkspace({ allowPrivateHosts: limits.allowPrivateHosts, maxBytes: limits.maxDownloadBytes }, { scripts: needsScripts }).catch(
    (error: unknown) => {
      throw asDocumentError(error);
    },
  );
  const budget = new Budget(limits.timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  try {
    // The page is laid out in the caller's viewport from the start, as a browser window of that size would.
    if (layout.viewport) await workspace.page.setViewport(layout.viewport);
    const work = produceInWorkspace(workspace, source, options, limits, budget, layout.media, output);
    work.catch(() => undefined); // its outcome no longer matters once the deadline has passed
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DocumentError('RENDER_TIMEOUT', `Rendering took longer than the limit of ${limits.timeoutMs} ms`)),
        budget.left(),
      );
    });
    // A renderer that crashes (or a browser that goes) fails the document at once, not at its deadline.
    const made = await Promise.race([work, deadline, workspace.lost]);
    return { made, timeLeftMs: budget.left() };
  } catch (error) {
    throw asDocumentError(error);
  } finally {
    clearTimeout(timer);
    releaseWorkspace(workspace, limits.workspaces);
  }
}

/**
 * The document's time limit, shared by every wait. Waits stop early enough to leave printing a
 * reserve, so a condition that never holds is reported by name instead of by the overall deadline.
 */
class Budget {
  readonly totalMs: number;
  readonly #deadline: number;
  readonly #printReserveMs: number;

  constructor(totalMs: number) {
    this.totalMs = totalMs;
    this.#deadline = performance.now() + totalMs;
    this.#printReserveMs = Math.max(1_000, totalMs / 4);
  }

  /** Time left until the deadline. */
  left(): number {
    return Math.max(0, this.#deadline - performance.now());
  }

  /** Time left for waiting, keeping the print reserve. */
  forWaiting(): number {
    return Math.max(0, this.left() - this.#printReserveMs);
  }
}

/** What the browser made of a document: its PDF, the watermark's stamp and the box when they were asked for. */
interface Printed {
  readonly bytes: Uint8Array;
  readonly stamp?: Uint8Array;
  readonly box?: PrintedBox;
}

/** How many times printing starts again for a page that navigated away while it was being printed. */
const MAX_NAVIGATIONS_FOLLOWED = 3;

/**
 * Makes the document's output (prints it, or pictures it) in its workspace. A document that
 * navigates its page away (meta refresh, `location`, a form) is followed as Chrome would show it:
 * the page it went to is printed once loaded, printing again if the navigation came while the old
 * page was being printed (a few times at most). A navigation away that is refused or reaches nothing
 * fails the document as a refused or unreachable `url` does (lib/render/navigation-away.ts), never
 * printing what the refusal left.
 */
async function produceInWorkspace<T>(
  workspace: Workspace,
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  budget: Budget,
  media: EmulatedMedia,
  output: (workspace: Workspace, budget: Budget) => Promise<T>,
): Promise<T> {
  const { page, guard } = workspace;
  // Watched from before the document exists, so that no navigation of its page is missed.
  const navigationsAway = watchNavigationsAway(page, { opening: 'url' in source, refused: () => guard.refused });
  const waitForResources = () => Math.min(limits.resourceTimeoutMs, budget.forWaiting());
  try {
    await loadDocument(workspace, source, options, limits, budget, media);
    for (let followed = 0; ; followed++) {
      const navigationsBefore = navigationsAway.begun;
      let printed: { value: T } | undefined;
      let failure: unknown;
      try {
        // A page the document navigated to is printed once it has loaded; a refused one fails here.
        await navigationsAway.settle(waitForResources(), { loaded: true });
        printed = { value: await output(workspace, budget) };
      } catch (error) {
        failure = error;
      }
      // One begun while printing: its answer may be what was printed, or what broke the printing.
      await navigationsAway.settle(waitForResources());
      const moved = navigationsAway.begun !== navigationsBefore && followed < MAX_NAVIGATIONS_FOLLOWED;
      if (moved) continue;
      if (printed) return printed.value;
      throw failure;
    }
  } catch (error) {
    // A refused navigation away is why whatever else failed (a wait, an evaluation) did.
    throw navigationsAway.failure ?? error;
  }
}

/** Opens the document and waits until it is ready to print, as its options ask. */
async function loadDocument(
  { page, guard, kind }: Workspace,
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  budget: Budget,
  outputMedia: EmulatedMedia,
): Promise<void> {
  page.setDefaultTimeout(budget.totalMs);
  // Chromium prints with print media and pictures with screen media; `emulate_media` asks for the other.
  if (options.emulateMedia !== outputMedia) await page.emulateMediaType(options.emulateMedia);
  const resourceWaitMs = () => Math.min(limits.resourceTimeoutMs, budget.forWaiting());
  // The network-idle conditions are awaited after the load events, the same way for html and url.
  // (Waiting for network idle inside goto can be satisfied by the idle signal of the page's initial
  // blank document and print before the site has loaded.)
  const lifecycle = options.waitFor === 'domcontentloaded' ? 'domcontentloaded' : 'load';
  const requests = trackRequests(page);
  if ('html' in source) {
    await boundedLoad(page, page.setContent(source.html, { waitUntil: lifecycle, timeout: resourceWaitMs() }));
  } else {
    // Headers, cookies and the user agent are in place before the first request leaves.
    const access = await applyUrlAccess(page, source.url, options.urlAccess);
    // The document itself may take the whole time limit: without it there is nothing to print.
    await navigate(page, guard, source.url, budget.left(), { access, failOnHttpStatus: options.urlAccess.failOnHttpStatus });
    if (lifecycle === 'load') {
      await boundedLoad(page, page.waitForFunction(() => document.readyState === 'complete', { polling: 50, timeout: resourceWaitMs() }));
    }
  }
  if (options.waitFor === 'networkidle0' || options.waitFor === 'networkidle2') {
    const concurrency = options.waitFor === 'networkidle0' ? 0 : 2;
    await boundedLoad(page, page.waitForNetworkIdle({ idleTime: 500, concurrency, timeout: resourceWaitMs() }));
  }
  if (options.waitForSelector !== undefined) await untilSelectorVisible(page, options.waitForSelector, budget);
  if (options.waitForExpression !== undefined) await untilExpressionTrue(page, options.waitForExpression, budget);
  const customCondition = options.waitForSelector !== undefined || options.waitForExpression !== undefined;
  if (kind === 'live' && options.waitFor !== 'domcontentloaded' && !customCondition) {
    await settle(page, requests, Math.min(limits.settleMaxMs, budget.forWaiting()), limits.settleQuietMs);
  }
  if (options.waitDelayMs > 0) {
    if (options.waitDelayMs > budget.forWaiting()) {
      throw new DocumentError('RENDER_TIMEOUT', `wait_delay_ms of ${options.waitDelayMs} ms does not fit in the time left of the render time limit of ${budget.totalMs} ms`);
    }
    await sleep(options.waitDelayMs);
  }
}

/** Prints the page as it stands. */
async function printPage(
  { page, kind }: Workspace,
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  budget: Budget,
  now: Date,
  box: BoxStamp | undefined,
): Promise<Printed> {
  // Lazy images loaded, web fonts ready, animations finished, header and footer fonts ready, the
  // body's font read for the margin boxes. A static page runs nothing, so only its own style sheets can have
  // declared fonts or animations; a live one may have either from its scripts.
  const marginBoxStyle = await preparePrint(page, options, {
    lazyContent: kind === 'live',
    webFonts: kind === 'live' || ('html' in source && source.webFonts),
    animations: kind === 'live' || ('html' in source && source.animated),
  });
  const pdfOptions = toPdfOptions(options, now, budget.left(), marginBoxStyle);
  // A selection of pages is printed alone, however long the document (see printWithinLimits).
  if (!options.pageRanges) await refuseOverlongDocument(page, options, pdfOptions, limits.maxPages);
  const bytes = await printWithinLimits(page, { ...pdfOptions, timeout: budget.left() }, options.pageRanges, limits);
  // The stamps empty the page: printed after the document, never before.
  const stamp = options.finishing.watermark && (await printStamp(page, options.finishing.watermark, budget.left()));
  const printedBox = box && (await printBoxStamp(page, box, budget.left()));
  return { bytes, ...(stamp && { stamp }), ...(printedBox && { box: printedBox }) };
}

/**
 * Pictures the page as it stands with Chromium's Page.captureScreenshot (through Puppeteer): the
 * viewport, the clip, or the whole page. A whole page too large to picture is refused before it is
 * drawn, and a picture larger than the file limit is refused, as a PDF is.
 */
async function picturePage({ page }: Workspace, image: ImageOptions, limits: RenderLimits): Promise<RenderedImage> {
  if (image.fullPage) {
    const size = await page.evaluate(() => ({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }));
    const problem = pictureSizeProblem(size.width, size.height, image.viewport.deviceScaleFactor);
    if (problem) throw new DocumentError('PDF_TOO_LARGE', `${problem}: picture the page in parts with image.clip, or as a PDF`);
  }
  const bytes = await page.screenshot({
    type: image.format,
    ...(image.quality !== undefined && { quality: image.quality }),
    fullPage: image.fullPage,
    ...(image.clip && { clip: image.clip }),
    omitBackground: image.omitBackground,
  });
  if (bytes.byteLength > limits.maxPdfBytes) throw new DocumentError('PDF_TOO_LARGE', `The picture is larger than the maximum of ${limits.maxPdfBytes} bytes.`);
  const { width, height } = imageSize(bytes);
  return { bytes, width, height };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits for the document's subresources (or the network to go idle) at most as long as allowed;
 * past that the page stops loading, as a reader's Stop button would, and prints without what is
 * still missing: a stalled image, a refused sprite or an endless stream costs its own bounded
 * time, never the document.
 */
async function boundedLoad(page: Page, loading: Promise<unknown>): Promise<void> {
  try {
    await loading;
  } catch (error) {
    if (!isTimeout(error)) throw error;
    await page.evaluate(() => window.stop());
  }
}

/** wait_for_selector: an element matches the CSS selector and is visible. */
async function untilSelectorVisible(page: Page, selector: string, budget: Budget): Promise<void> {
  // Only CSS: a selector the page's own engine refuses is the caller's mistake (Puppeteer would
  // otherwise read its own extensions into it, or poll a broken one until the time is up).
  const invalid = await page.evaluate((candidate) => {
    try {
      document.createDocumentFragment().querySelector(candidate);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }, selector);
  if (invalid !== undefined) throw new DocumentError('INVALID_OPTIONS', `wait_for_selector is not a valid CSS selector: ${quoteInput(invalid)}`);
  await condition(`wait_for_selector "${quoteInput(selector)}" matched no visible element`, budget, () =>
    page.waitForSelector(selector, { visible: true, timeout: budget.forWaiting() }),
  );
}

/**
 * wait_for_expression: the expression, evaluated in the page, is truthy. While it throws (its
 * variables not defined yet) it counts as not yet true; one that does not parse was refused by
 * validation (lib/render/options.ts).
 */
async function untilExpressionTrue(page: Page, expression: string, budget: Budget): Promise<void> {
  const guarded = `(() => { try { return (${expression}\n); } catch { return false; } })()`;
  await condition(`wait_for_expression ${JSON.stringify(quoteInput(expression))} never became true`, budget, () =>
    page.waitForFunction(guarded, { polling: 50, timeout: budget.forWaiting() }),
  );
}

/** Awaits a caller's readiness condition; running out of time names the condition. */
async function condition(description: string, budget: Budget, wait: () => Promise<unknown>): Promise<void> {
  try {
    await wait();
  } catch (error) {
    if (!isTimeout(error)) throw error;
    throw new DocumentError('RENDER_TIMEOUT', `${description} within the render time limit of ${budget.totalMs} ms`, { cause: error });
  }
}

/** Below this much script per second a page counts as idle (an empty 10 ms timer runs about 0.3 ms/s). */
const IDLE_SCRIPT_MS_PER_SECOND = 2;

/** Counts the page's requests still in flight, from the moment it is called. */
function trackRequests(page: Page): { inFlight(): number } {
  let started = 0;
  let ended = 0;
  page.on('request', () => started++);
  page.on('requestfinished', () => ended++);
  page.on('requestfailed', () => ended++);
  return { inFlight: () => started - ended };
}

/**
 * Waits until a document with scripts has finished drawing: no script running (beyond a trickle),
 * no layout and no request in flight for `quietMs`, or `maxMs` at most, after which it prints as it
 * stands. Chart libraries animate their first drawing over about a second with
 * requestAnimationFrame, Paged.js paginates in steps after load, mermaid renders asynchronously:
 * Chrome's print preview, opened once the page is done, shows the finished drawing, and so must the
 * PDF. The measure is Chromium's own per-page counters (Performance.getMetrics), read from outside
 * the page: nothing of ours runs in it.
 */
async function settle(page: Page, requests: { inFlight(): number }, maxMs: number, quietMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  const activity = async () => {
    const metrics = await page.metrics();
    return { at: performance.now(), scriptMs: (metrics.ScriptDuration ?? 0) * 1000, layouts: metrics.LayoutCount ?? 0 };
  };
  let quietSince = await activity();
  while (performance.now() < until) {
    await sleep(Math.min(quietMs, until - performance.now()));
    const current = await activity();
    const seconds = (current.at - quietSince.at) / 1000;
    const quiet =
      requests.inFlight() === 0 &&
      current.layouts === quietSince.layouts &&
      current.scriptMs - quietSince.scriptMs <= IDLE_SCRIPT_MS_PER_SECOND * seconds;
    if (!quiet) quietSince = current;
    else if (current.at - quietSince.at >= quietMs) return;
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

const NOT_ALLOWED_REDIRECT = 'url is not allowed: it redirected to a private, loopback or link-local address';
const REDIRECT_LOOP = 'url redirected too many times (a redirect loop?)';

/**
 * Opens the URL until its document is parsed; its subresources are waited for separately. A main
 * document answering 4xx or 5xx fails it (URL_FETCH_FAILED) unless the caller asked to print it.
 */
async function navigate(
  page: Page,
  guard: EgressGuard,
  url: string,
  timeoutMs: number,
  { access, failOnHttpStatus }: { readonly access: AppliedUrlAccess; readonly failOnHttpStatus: boolean },
) {
  let response: HTTPResponse | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
  } catch (error) {
    // A request the headers could not go with was failed on purpose; that is the reason to give.
    if (access.refusal) throw access.refusal;
    const reason = error instanceof Error ? /net::ERR_[A-Z_]+/.exec(error.message)?.[0] : undefined;
    if (!reason) throw error;
    // An https redirect to a refused address fails the tunnel; the guard knows why.
    if (guard.refused.length > 0) throw new DocumentError('URL_NOT_ALLOWED', NOT_ALLOWED_REDIRECT);
    // Chromium gives up after 20 redirects; its code for it read as if the site were down.
    if (reason === 'net::ERR_TOO_MANY_REDIRECTS') throw new DocumentError('URL_UNREACHABLE', REDIRECT_LOOP);
    throw new DocumentError('URL_UNREACHABLE', `url could not be loaded (${reason})`);
  }
  if (access.refusal) throw access.refusal;
  const guardSaid = response?.headers()[REFUSAL_HEADER];
  if (guardSaid === UNREACHABLE) throw new DocumentError('URL_UNREACHABLE', 'url could not be loaded: its site did not answer');
  if (guardSaid) throw new DocumentError('URL_NOT_ALLOWED', NOT_ALLOWED_REDIRECT);
  const status = response?.status() ?? 0;
  if (failOnHttpStatus && status >= 400) {
    throw new DocumentError('URL_FETCH_FAILED', `url answered HTTP ${status}; give fail_on_http_status: false to print the page it answered with`);
  }
}

/**
 * Prints the caller's pages (all by default) but at most one page more than allowed, so an
 * over-long document is detected without printing all of it, and streams the PDF, stopping as soon
 * as it grows past the size limit.
 */
async function printWithinLimits(page: Page, pdfOptions: PDFOptions, pageRanges: readonly PageRange[] | undefined, limits: RenderLimits): Promise<Uint8Array> {
  let stream: ReadableStream<Uint8Array>;
  try {
    stream = await page.createPDFStream({ ...pdfOptions, pageRanges: chromiumPageRanges(pageRanges, limits.maxPages + 1) });
  } catch (error) {
    // Chromium's answer when not one page of the selection exists.
    if (pageRanges && error instanceof Error && error.message.includes(PAST_THE_LAST_PAGE)) throw pastTheLastPage(pageRanges, 0);
    throw error;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limits.maxPdfBytes) {
      await reader.cancel().catch(() => undefined);
      throw pdfTooLarge(limits.maxPdfBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/** The refusal of a file over MAX_PDF_BYTES, whatever step made it so (printing, finishing, signing). */
export const pdfTooLarge = (maxPdfBytes: number) => new DocumentError('PDF_TOO_LARGE', `The PDF is larger than the maximum of ${maxPdfBytes} bytes.`);

/** A selection naming pages the document does not have: the caller's mistake, reported as such. */
function pastTheLastPage(pageRanges: readonly PageRange[], existing: number): DocumentError {
  return new DocumentError(
    'INVALID_OPTIONS',
    `page_ranges "${quoteInput(formatPageRanges(pageRanges))}" asks for pages past the document's last page (${existing} of the pages asked for exist)`,
  );
}

function asDocumentError(error: unknown): DocumentError {
  if (error instanceof DocumentError) return error;
  // A renderer killed for its memory a moment ago is the one this document just lost.
  const kill = recentMemoryKill();
  if (kill) {
    forgetMemoryKill(kill);
    return new DocumentError(
      'MEMORY_LIMIT_EXCEEDED',
      `The document needed more memory than the limit of ${kill.budgetMb} MB per document (huge images, canvases or script allocations, or a giant page with filters), and was stopped. Nothing was charged.`,
      { cause: error },
    );
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new DocumentError('RENDER_TIMEOUT', 'Rendering took longer than the time limit', { cause: error });
  }
  return new DocumentError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
}
