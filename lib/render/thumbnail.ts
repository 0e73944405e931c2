/**
 * A PDF's thumbnail (the `thumbnail` option, shared/spec/beyond.md "Images and Markdown"): its first
 * page drawn from the PDF itself by pdf.js, so the picture shows what the PDF shows (its page size,
 * margins, header and footer, watermark), not the HTML it came from.
 *
 * pdf.js runs in the same browser, in a fresh workspace of its own (lib/render/workspaces.ts) that
 * is closed after: the PDF is the customer's, and pdf.js reading it is the kind of work a renderer
 * process is isolated for. The workspace's egress guard lets nothing out (the PDF arrives as an
 * argument, pdf.js as inline scripts), and pdf.js runs with `isEvalSupported: false` (no code
 * compiled from the PDF's fonts or functions). pdf.js's worker runs on the page's own thread
 * (its `pdfjsWorker` global), so the page needs no second origin to load a worker from.
 */
import { readFileSync } from 'node:fs';
import { imageSize } from 'image-size';
import { takeRenderSlot } from './capacity.ts';
import { DocumentError } from './errors.ts';
import { locateBundledFile, searchStarts } from './fonts.ts';
import { IMAGE_CONTENT_TYPES, type ThumbnailOptions } from './image-options.ts';
import { PDFJS_LIBRARY_PATH, PDFJS_WORKER_PATH } from './pdfjs-files.ts';
import type { RenderedImage, RenderLimits } from './render.ts';
import { releaseWorkspace, takeWorkspace } from './workspaces.ts';

/** pdf.js's two modules, read once per process: the library and its worker's code. */
let pdfjsSources: { library: string; worker: string } | undefined;

function pdfjs(): { library: string; worker: string } {
  if (pdfjsSources) return pdfjsSources;
  const read = (file: string) => {
    const path = locateBundledFile(file, searchStarts());
    if (!path) throw new Error(`${file} was not found: thumbnails need pdfjs-dist installed, or shipped beside the bundle (PDFJS_BUNDLE_PATHS)`);
    return readFileSync(path, 'utf8');
  };
  pdfjsSources = { library: read(PDFJS_LIBRARY_PATH), worker: read(PDFJS_WORKER_PATH) };
  return pdfjsSources;
}

/**
 * Draws the first page of `pdf` at `thumbnail.width` pixels wide, as `thumbnail.format`, within
 * `timeLeftMs`: what the PDF's rendering left of the document's render time limit (renderPdf's
 * `timeLeftMs`), so that the PDF and its thumbnail together take no more of the browser than the
 * limit. As for the PDF, the time starts once the drawing has its render slot and workspace.
 */
export async function pictureFirstPage(
  pdf: Uint8Array,
  thumbnail: ThumbnailOptions,
  limits: Pick<RenderLimits, 'timeoutMs' | 'workspaces'>,
  timeLeftMs: number,
): Promise<RenderedImage> {
  const outOfTime = () =>
    new DocumentError('RENDER_TIMEOUT', `Rendering the PDF and drawing its thumbnail took longer than the limit of ${limits.timeoutMs} ms`);
  // Nothing left: no slot or workspace is taken for a drawing that could not finish.
  if (timeLeftMs <= 0) throw outOfTime();
  const sources = pdfjs();
  using _slot = await takeRenderSlot();
  // Nothing may leave: no host is allowed, not one byte may be downloaded.
  const workspace = await takeWorkspace({ allowPrivateHosts: new Set(), maxBytes: 0 }, { scripts: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(outOfTime()), timeLeftMs);
    });
    const drawing = draw(workspace.page, pdf, thumbnail, sources);
    drawing.catch(() => undefined);
    const dataUrl = await Promise.race([drawing, deadline, workspace.lost]);
    const bytes = Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
    const { width, height } = imageSize(bytes);
    return { bytes, width, height };
  } finally {
    clearTimeout(timer);
    releaseWorkspace(workspace, limits.workspaces);
  }
}

async function draw(page: import('puppeteer-core').Page, pdf: Uint8Array, thumbnail: ThumbnailOptions, sources: { library: string; worker: string }): Promise<string> {
  await page.setContent('<!DOCTYPE html><html><body style="margin:0"></body></html>');
  // The worker's module first: the library finds its `pdfjsWorker` global and runs it on this thread.
  await page.addScriptTag({ content: sources.worker, type: 'module' });
  await page.addScriptTag({ content: sources.library, type: 'module' });
  // Module scripts run once the page gets to them, after addScriptTag has answered.
  await page.waitForFunction(() => 'pdfjsLib' in globalThis && 'pdfjsWorker' in globalThis, { polling: 10 });
  const type = IMAGE_CONTENT_TYPES[thumbnail.format];
  return page.evaluate(
    async (base64: string, width: number, mediaType: string) => {
      type PdfJs = {
        getDocument(source: object): { promise: Promise<{ getPage(n: number): Promise<PdfPage> }> };
      };
      type PdfPage = {
        getViewport(options: { scale: number }): { width: number; height: number };
        render(options: object): { promise: Promise<void> };
      };
      const library = (globalThis as unknown as { pdfjsLib: PdfJs }).pdfjsLib;
      const data = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
      const document_ = await library.getDocument({ data, isEvalSupported: false, enableXfa: false }).promise;
      const first = await document_.getPage(1);
      const viewport = first.getViewport({ scale: width / first.getViewport({ scale: 1 }).width });
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(viewport.width);
      canvas.height = Math.round(viewport.height);
      const context = canvas.getContext('2d') as CanvasRenderingContext2D;
      // Paper is white: a page without a background would otherwise be transparent (and black as jpeg).
      context.fillStyle = '#fff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      await first.render({ canvasContext: context, canvas, viewport }).promise;
      return canvas.toDataURL(mediaType, 0.9);
    },
    Buffer.from(pdf).toString('base64'),
    thumbnail.width,
    type,
  );
}
