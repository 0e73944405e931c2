/**
 * One document in, one PDF out.
 *
 * Every document gets its own browser context (incognito-like: its own cookies, storage, cache and
 * service workers), closed when the PDF is done, so nothing one customer's document sets can be
 * seen by or act on a later one. A document that overruns its time limit has its context closed;
 * a browser that cannot even do that is killed and replaced.
 */
import type { Browser, BrowserContext, PDFOptions } from 'puppeteer-core';
import { PDFDocument } from 'pdf-lib';
import { DocumentError } from '#lib/documents/errors.ts';
import { discardBrowser, getBrowser } from './browser.ts';
import type { RenderOptions } from './options.ts';
import { headerFooterOptions } from './templates.ts';

export type DocumentSource = { readonly html: string } | { readonly url: string };

export interface RenderedPdf {
  readonly bytes: Uint8Array;
  readonly pages: number;
}

/** How long a context may take to close before its browser is presumed hung. */
const CONTEXT_CLOSE_GRACE_MS = 5_000;

/** Puppeteer's PDF settings for validated options. */
export function toPdfOptions(options: RenderOptions, now: Date, timeoutMs: number): PDFOptions {
  const { displayHeaderFooter, headerTemplate, footerTemplate, margin } = headerFooterOptions(options, now);
  return {
    format: options.format,
    landscape: options.landscape,
    margin,
    printBackground: options.printBackground,
    scale: options.scale,
    displayHeaderFooter,
    ...(headerTemplate !== undefined && { headerTemplate }),
    ...(footerTemplate !== undefined && { footerTemplate }),
    timeout: timeoutMs,
  };
}

export async function renderPdf(
  source: DocumentSource,
  options: RenderOptions,
  { timeoutMs, now = new Date() }: { timeoutMs: number; now?: Date },
): Promise<RenderedPdf> {
  const browser = await getBrowser();
  const context = await browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
  let timer: NodeJS.Timeout | undefined;
  const work = printInContext(context, source, options, now, timeoutMs);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DocumentError('RENDER_TIMEOUT', `Rendering took longer than the limit of ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const bytes = await Promise.race([work, deadline]);
    const pages = (await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount();
    return { bytes, pages };
  } catch (error) {
    throw asDocumentError(error);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined); // its outcome no longer matters once the deadline has passed
    await closeOrDiscard(browser, context);
  }
}

async function printInContext(
  context: BrowserContext,
  source: DocumentSource,
  options: RenderOptions,
  now: Date,
  timeoutMs: number,
): Promise<Uint8Array> {
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  if ('html' in source) {
    // setContent knows only load events; the network-idle conditions are awaited after it.
    const lifecycle = options.waitFor === 'domcontentloaded' ? 'domcontentloaded' : 'load';
    await page.setContent(source.html, { waitUntil: lifecycle, timeout: timeoutMs });
    if (options.waitFor === 'networkidle0' || options.waitFor === 'networkidle2') {
      await page.waitForNetworkIdle({ idleTime: 500, concurrency: options.waitFor === 'networkidle0' ? 0 : 2, timeout: timeoutMs });
    }
  } else {
    const response = await page
      .goto(source.url, { waitUntil: options.waitFor, timeout: timeoutMs })
      .catch((error: unknown) => {
        const reason = error instanceof Error ? /net::ERR_[A-Z_]+/.exec(error.message)?.[0] : undefined;
        if (!reason) throw error;
        throw new DocumentError('URL_UNREACHABLE', `url could not be loaded (${reason})`);
      });
    if (response && response.status() >= 400) {
      throw new DocumentError('URL_UNREACHABLE', `url could not be loaded: it answered HTTP ${response.status()}`);
    }
  }
  return page.pdf(toPdfOptions(options, now, timeoutMs));
}

async function closeOrDiscard(browser: Browser, context: BrowserContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    context.close().then(
      () => true,
      () => !browser.connected, // a dead browser has nothing left to close
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CONTEXT_CLOSE_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (!closed) discardBrowser(browser);
}

function asDocumentError(error: unknown): DocumentError {
  if (error instanceof DocumentError) return error;
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new DocumentError('RENDER_TIMEOUT', 'Rendering took longer than the time limit', { cause: error });
  }
  return new DocumentError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
}
