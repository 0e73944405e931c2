/**
 * Image fidelity (issue #44): a picture from `POST /v1/image/generate` must be pixel-identical to
 * plain Chromium's own `Page.captureScreenshot` of the same document at the same viewport. The
 * reference is reference.ts's plain browser (its flags, no egress proxy, no prepared workspaces):
 * a fresh context, the viewport set, the HTML loaded, left `settleMs` to finish drawing, then
 * Page.captureScreenshot called over the DevTools protocol directly, not through Puppeteer's helper.
 *
 * The cases are corpus documents of the kinds the hidden corpus has (charts, web fonts, emoji,
 * right-to-left and CJK text, a framework page), pictured at their first screen.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import type { Browser } from 'puppeteer-core';
import type { FidelityCase } from './corpus/types.ts';
import { DEFAULT_SETTLE_MS } from './reference.ts';
import { pictureWithService, thumbnailWithService, type ServiceAddress } from './service.ts';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { pictureToPng } from './compare.ts';
import { diffRasterizers, RASTERIZER_TOLERANCE } from './rasterizers.ts';

/** Corpus cases pictured, by name. */
export const IMAGE_CASE_NAMES = [
  'chartjs-dashboard',
  'echarts-svg-energy',
  'webfonts-magazine',
  'emoji-chat-transcript',
  'rtl-arabic-invoice',
  'cjk-japanese-minutes',
  'bootstrap-landing',
  'business-invoice-2-pages',
] as const;

/** The viewport both sides picture at: the service's default (lib/render/image-options.ts). */
export const IMAGE_VIEWPORT = { width: 800, height: 600, deviceScaleFactor: 1 } as const;

export interface ImageCaseResult {
  readonly name: string;
  readonly title: string;
  /**
   * ok: pixel-identical (a screenshot) or within RASTERIZER_TOLERANCE of pdftoppm (a thumbnail);
   * differs: beyond that, or the sizes differ; error: a side could not picture it.
   */
  readonly verdict: 'ok' | 'differs' | 'error';
  /** Why a thumbnail's difference does not count: the reference is known to draw the page wrong. */
  readonly referenceDefect?: string;
  readonly error?: string;
  readonly size?: { readonly width: number; readonly height: number };
  /** Pixels whose RGBA differs, and their share of the picture. */
  readonly differingPixels?: number;
  readonly share?: number;
  readonly timings: { readonly oursMs?: number; readonly referenceMs?: number };
}

/** Plain Chromium's Page.captureScreenshot of `html` at IMAGE_VIEWPORT, after `settleMs`. */
export async function pictureReference(browser: Browser, html: string, settleMs = DEFAULT_SETTLE_MS): Promise<Uint8Array> {
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    await page.setViewport(IMAGE_VIEWPORT);
    await page.setContent(html, { waitUntil: 'load', timeout: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const session = await page.createCDPSession();
    const { data } = await session.send('Page.captureScreenshot', { format: 'png' });
    return Buffer.from(data, 'base64');
  } finally {
    await context.close();
  }
}

async function pixels(bytes: Uint8Array): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const image = await loadImage(Buffer.from(bytes));
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  return { width: image.width, height: image.height, data: context.getImageData(0, 0, image.width, image.height).data };
}

/** Counts the pixels whose RGBA differs at all: pixel-identical means none. */
export async function comparePictures(ours: Uint8Array, reference: Uint8Array): Promise<{ sameSize: boolean; width: number; height: number; differing: number }> {
  const [a, b] = await Promise.all([pixels(ours), pixels(reference)]);
  if (a.width !== b.width || a.height !== b.height) return { sameSize: false, width: a.width, height: a.height, differing: a.width * a.height };
  let differing = 0;
  for (let index = 0; index < a.data.length; index += 4) {
    if (a.data[index] !== b.data[index] || a.data[index + 1] !== b.data[index + 1] || a.data[index + 2] !== b.data[index + 2] || a.data[index + 3] !== b.data[index + 3]) differing++;
  }
  return { sameSize: true, width: a.width, height: a.height, differing };
}

/** One case pictured by both sides and compared; both pictures are written to `outDir` for the report. */
export async function runImageCase(testCase: FidelityCase, context: { service: ServiceAddress; reference: Browser; outDir: string }): Promise<ImageCaseResult> {
  const timings: { oursMs?: number; referenceMs?: number } = {};
  const timed = async <T>(side: 'oursMs' | 'referenceMs', work: () => Promise<T>) => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      timings[side] = Math.round(performance.now() - started);
    }
  };
  try {
    const [ours, reference] = await Promise.all([
      timed('oursMs', () => pictureWithService(context.service, testCase.html, { width: IMAGE_VIEWPORT.width, height: IMAGE_VIEWPORT.height })),
      timed('referenceMs', () => pictureReference(context.reference, testCase.html, testCase.settleMs)),
    ]);
    await writeFile(join(context.outDir, `image-${testCase.name}-ours.png`), ours);
    await writeFile(join(context.outDir, `image-${testCase.name}-reference.png`), reference);
    const compared = await comparePictures(ours, reference);
    const total = compared.width * compared.height;
    return {
      name: testCase.name,
      title: testCase.title,
      verdict: compared.sameSize && compared.differing === 0 ? 'ok' : 'differs',
      size: { width: compared.width, height: compared.height },
      differingPixels: compared.differing,
      share: compared.differing / total,
      timings,
    };
  } catch (error) {
    return { name: testCase.name, title: testCase.title, verdict: 'error', error: error instanceof Error ? error.message : String(error), timings };
  }
}

/** The image cases as a Markdown table, for the run's output and report. */
export function formatImageTable(results: readonly ImageCaseResult[]): string {
  const rows = results.map((result) => {
    const counted = `${result.differingPixels} pixels differ (${((result.share ?? 0) * 100).toFixed(3)} %)`;
    const what = result.verdict === 'error' ? `error: ${result.error}` : result.name.startsWith('thumbnail ') ? counted : result.verdict === 'ok' ? 'pixel-identical' : counted;
    const verdict = result.referenceDefect ? `not gated: ${result.referenceDefect}` : result.verdict;
    return `| ${result.name} | ${result.size ? `${result.size.width} x ${result.size.height}` : '–'} | ${verdict} | ${what} | ${result.timings.oursMs ?? '–'} / ${result.timings.referenceMs ?? '–'} |`;
  });
  return ['| Image case | Size | Verdict | Against Page.captureScreenshot (thumbnails: pdftoppm) | ms (ours / reference) |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Width of the thumbnails compared with pdftoppm's rendering of the same page. */
export const THUMBNAIL_WIDTH = 600;

/**
 * Thumbnails the reference draws wrong, by case name, with why: their difference is shown, not
 * counted. (Checked in the PDF: what the case's HTML shows in plain Chromium, and what pdf.js draws.)
 */
export const THUMBNAIL_REFERENCE_DEFECTS: Readonly<Record<string, string>> = {
  // The Sankey's flows are shading-pattern fills under a fill opacity (ExtGState /ca 0.2); poppler
  // 22.12 (pdftoppm and pdftocairo alike) paints them opaque, pdf.js and Chromium at 20 %.
  'echarts-svg-energy': 'pdftoppm paints the translucent (ca 0.2) gradient flows opaque',
};

/**
 * A thumbnail (`thumbnail` on a PDF, drawn by pdf.js in the service's browser) against poppler's
 * `pdftoppm` rendering of the PDF's first page at the same size, compared as two rasterizers'
 * pictures of one page (rasterizers.ts, RASTERIZER_TOLERANCE).
 */
export async function runThumbnailCase(testCase: FidelityCase, context: { service: ServiceAddress; outDir: string }): Promise<ImageCaseResult> {
  const timings: { oursMs?: number; referenceMs?: number } = {};
  const scratch = await mkdtemp(join(tmpdir(), 'fidelity-thumbnail-'));
  try {
    let started = performance.now();
    const { pdf, thumbnail } = await thumbnailWithService(context.service, testCase.html, testCase.options ?? {}, { width: THUMBNAIL_WIDTH });
    timings.oursMs = Math.round(performance.now() - started);
    const ours = await pixels(thumbnail);
    started = performance.now();
    await writeFile(join(scratch, 'in.pdf'), pdf);
    await promisify(execFile)('pdftoppm', ['-png', '-f', '1', '-l', '1', '-scale-to-x', String(ours.width), '-scale-to-y', String(ours.height), '-singlefile', join(scratch, 'in.pdf'), join(scratch, 'out')]);
    const poppler = await readFile(join(scratch, 'out.png'));
    timings.referenceMs = Math.round(performance.now() - started);
    await writeFile(join(context.outDir, `thumbnail-${testCase.name}-ours.png`), thumbnail);
    await writeFile(join(context.outDir, `thumbnail-${testCase.name}-pdftoppm.png`), poppler);
    const reference = await pixels(poppler);
    const diff = diffRasterizers({ width: reference.width, height: reference.height, pixels: reference.data }, { width: ours.width, height: ours.height, pixels: ours.data });
    await writeFile(join(context.outDir, `thumbnail-${testCase.name}-diff.png`), pictureToPng(diff.picture));
    const referenceDefect = THUMBNAIL_REFERENCE_DEFECTS[testCase.name];
    return {
      name: `thumbnail ${testCase.name}`,
      title: testCase.title,
      verdict: reference.width === ours.width && reference.height === ours.height && diff.share <= RASTERIZER_TOLERANCE ? 'ok' : 'differs',
      ...(referenceDefect && { referenceDefect }),
      size: { width: ours.width, height: ours.height },
      differingPixels: diff.differing,
      share: diff.share,
      timings,
    };
  } catch (error) {
    return { name: `thumbnail ${testCase.name}`, title: testCase.title, verdict: 'error', error: error instanceof Error ? error.message : String(error), timings };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
