/**
 * One document in, one PDF out.
 *
 * Every document gets its own browser context (incognito-like: its own cookies, storage, cache and
 * service workers), closed when the PDF is done, so nothing one customer's document sets can be
 * seen by or act on a later one. A document that overruns its time limit has its context closed;
 * a browser that cannot even do that is killed and replaced.
 */
import type { HTTPResponse, Page, PDFOptions } from 'puppeteer-core';
import { DocumentError } from '#lib/documents/errors.ts';
import { REFUSAL_HEADER, type EgressGuard } from './egress-guard.ts';
import type { HtmlTraits } from './html.ts';
import { countPages } from './pdf-pages.ts';
import { releaseWorkspace, takeWorkspace, type Workspace, type WorkspacePolicy } from './workspaces.ts';
import type { RenderOptions } from './options.ts';
import { preparePrint } from './print-preparation.ts';
import { headerFooterOptions, type TemplateStyle } from './templates.ts';

/**
 * What to render: HTML (with whether it needs scripting, see lib/render/html.ts) or a URL, whose
 * pages are always rendered with scripting on.
 */
export type DocumentSource = ({ readonly html: string } & HtmlTraits) | { readonly url: string };

export interface RenderedPdf {
  readonly bytes: Uint8Array;
  readonly pages: number;
}

/** Puppeteer's PDF settings for validated options. */
export function toPdfOptions(options: RenderOptions, now: Date, timeoutMs: number, templateStyle: TemplateStyle = {}): PDFOptions {
  const { displayHeaderFooter, headerTemplate, footerTemplate, margin } = headerFooterOptions(options, now, templateStyle);
  return {
    format: options.format,
    // No format from the caller: the document's own @page size wins (format is then the fallback).
    preferCSSPageSize: options.preferCssPageSize,
    landscape: options.landscape,
    margin,
    printBackground: options.printBackground,
    scale: options.scale,
    // Puppeteer tags every PDF unless told otherwise; ours are tagged when the caller asks.
    tagged: options.tagged,
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
  /** `host:port` entries the document may reach although they are not public. */
  readonly allowPrivateHosts: ReadonlySet<string>;
  /** How browser workspaces are prepared, reused and bounded. */
  readonly workspaces: WorkspacePolicy;
}

/**
 * Renders one document. `owner` names whose document it is (the API key's id): a browser workspace
 * is only ever reused for documents of the same owner (lib/render/workspaces.ts).
 */
export async function renderPdf(
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  owner: string,
  now = new Date(),
): Promise<RenderedPdf> {
  // Self-contained static documents may share a workspace with the same owner's in the same
  // languages; everything else gets a fresh one, with scripting only if it needs it
  // (lib/render/workspaces.ts).
  const needsScripts = !('html' in source) || source.scripted;
  const reuseKey = 'html' in source && !needsScripts && source.selfContained ? `${owner}\n${source.languages}` : undefined;
  const workspace = await takeWorkspace(
    { allowPrivateHosts: limits.allowPrivateHosts, maxBytes: limits.maxDownloadBytes },
    { reuseKey, scripts: needsScripts },
    limits.workspaces,
  );
  let succeeded = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const work = printInWorkspace(workspace, source, options, limits, now);
    work.catch(() => undefined); // its outcome no longer matters once the deadline has passed
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DocumentError('RENDER_TIMEOUT', `Rendering took longer than the limit of ${limits.timeoutMs} ms`)),
        limits.timeoutMs,
      );
    });
    const bytes = await Promise.race([work, deadline]);
    const pages = await countPages(bytes);
    if (pages > limits.maxPages) {
      throw new DocumentError('TOO_LARGE', `The document has more than the maximum of ${limits.maxPages} pages`);
    }
    succeeded = true;
    return { bytes, pages };
  } catch (error) {
    throw asDocumentError(error);
  } finally {
    clearTimeout(timer);
    releaseWorkspace(workspace, { reuseKey, succeeded }, limits.workspaces);
  }
}

async function printInWorkspace(
  { page, guard, kind }: Workspace,
  source: DocumentSource,
  options: RenderOptions,
  limits: RenderLimits,
  now: Date,
): Promise<Uint8Array> {
  page.setDefaultTimeout(limits.timeoutMs);
  // Puppeteer waits for the load events itself; the network-idle conditions are awaited after
  // them, the same way for html and url. (Waiting for network idle inside goto can be satisfied by
  // the idle signal of the page's initial blank document and print before the site has loaded.)
  const lifecycle = options.waitFor === 'domcontentloaded' ? 'domcontentloaded' : 'load';
  if ('html' in source) {
    await page.setContent(source.html, { waitUntil: lifecycle, timeout: limits.timeoutMs });
  } else {
    await navigate(page, guard, source.url, lifecycle, limits.timeoutMs);
  }
  if (options.waitFor === 'networkidle0' || options.waitFor === 'networkidle2') {
    await page.waitForNetworkIdle({ idleTime: 500, concurrency: options.waitFor === 'networkidle0' ? 0 : 2, timeout: limits.timeoutMs });
  }
  // Lazy images loaded, template fonts ready, the body's font read for the templates.
  // A static page loads nothing and runs nothing, so only its own @font-face fonts can be pending;
  // a live one may have fonts from style sheets or scripts.
  const templateStyle = await preparePrint(page, options, {
    lazyContent: kind === 'live',
    webFonts: kind === 'live' || ('html' in source && source.webFonts),
  });
  return printWithinLimits(page, toPdfOptions(options, now, limits.timeoutMs, templateStyle), limits);
}

const NOT_ALLOWED_REDIRECT = 'url is not allowed: it redirected to a private, loopback or link-local address';

async function navigate(
  page: Page,
  guard: EgressGuard,
  url: string,
  lifecycle: 'load' | 'domcontentloaded',
  timeoutMs: number,
) {
  let response: HTTPResponse | null;
  try {
    response = await page.goto(url, { waitUntil: lifecycle, timeout: timeoutMs });
  } catch (error) {
    const reason = error instanceof Error ? /net::ERR_[A-Z_]+/.exec(error.message)?.[0] : undefined;
    if (!reason) throw error;
    // An https redirect to a refused address fails the tunnel; the guard knows why.
    if (guard.refused.length > 0) throw new DocumentError('URL_NOT_ALLOWED', NOT_ALLOWED_REDIRECT);
    throw new DocumentError('URL_UNREACHABLE', `url could not be loaded (${reason})`);
  }
  if (response?.headers()[REFUSAL_HEADER]) throw new DocumentError('URL_NOT_ALLOWED', NOT_ALLOWED_REDIRECT);
  if (response && response.status() >= 400) {
    throw new DocumentError('URL_UNREACHABLE', `url could not be loaded: it answered HTTP ${response.status()}`);
  }
}

/**
 * Prints at most one page more than allowed (so an over-long document is detected without printing
 * all of it) and streams the PDF, stopping as soon as it grows past the size limit.
 */
async function printWithinLimits(page: Page, pdfOptions: PDFOptions, limits: RenderLimits): Promise<Uint8Array> {
  const stream = await page.createPDFStream({ ...pdfOptions, pageRanges: `1-${limits.maxPages + 1}` });
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limits.maxPdfBytes) {
      await reader.cancel().catch(() => undefined);
      throw new DocumentError('TOO_LARGE', `The PDF is larger than the maximum of ${limits.maxPdfBytes} bytes`);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

function asDocumentError(error: unknown): DocumentError {
  if (error instanceof DocumentError) return error;
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new DocumentError('RENDER_TIMEOUT', 'Rendering took longer than the time limit', { cause: error });
  }
  return new DocumentError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
}
