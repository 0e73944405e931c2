/**
 * One fidelity case end to end: printed by the service and by the reference at the same time,
 * compared (compare.ts), and the pages worth looking at written as PNG files for the report.
 * Used by both `npm run fidelity` (run.ts) and the vitest project (fidelity.test.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import {
  diffPictures,
  firstDifference,
  openPdf,
  PIXEL_TOLERANCE,
  pictureToPng,
  RASTER_SCALE,
  SAMPLE_OVER_PAGES,
  samplePages,
  sameSize,
  type OpenedPdf,
  type PageSize,
  type TextDifference,
} from './compare.ts';
import type { FidelityCase } from './corpus/types.ts';
import { DEFAULT_SETTLE_MS, printReference } from './reference.ts';
import { renderTemplate } from '#lib/templates/engine.ts';
import { printTemplateWithService, printWithService, type ServiceAddress } from './service.ts';

export interface HarnessContext {
  readonly service: ServiceAddress;
  readonly reference: Browser;
  /** Where the report and its pictures go. */
  readonly outDir: string;
  /** Compare the pixels of long documents on a sample of pages (compare.ts, samplePages). */
  readonly sampleLongDocuments?: boolean;
}

/** A page shown in the report: reference, ours and the difference, as PNG files relative to the report. */
export interface ShownPage {
  readonly page: number;
  /** The page's share of differing pixels; undefined when the pages could not be compared (sizes differ, or one side has no such page). */
  readonly share?: number;
  readonly beyondTolerance: boolean;
  readonly reference?: string;
  readonly ours?: string;
  readonly diff?: string;
  readonly sizes: { readonly ours?: PageSize; readonly reference?: PageSize };
}

export interface CaseResult {
  readonly name: string;
  readonly title: string;
  readonly script?: string;
  /** ok: within tolerance; differs: some difference beyond it; error: a side could not print it. */
  readonly verdict: 'ok' | 'differs' | 'error';
  /** Why the case failed to print, with which side. */
  readonly error?: string;
  readonly pages?: { readonly ours: number; readonly reference: number };
  /** Page numbers whose sizes differ (pages present on both sides). */
  readonly sizeMismatches: readonly number[];
  /** Page numbers whose text differs (when page counts match), or [0] for the document as a whole (when they do not). */
  readonly textMismatches: readonly number[];
  readonly firstTextDifference?: TextDifference;
  /** Glyphs drawn as .notdef boxes (no font had the character), on each side. */
  readonly missingGlyphs?: { readonly ours: number; readonly reference: number; readonly oursPages: readonly number[] };
  /** How many pages' pixels were compared, and whether they were a sample of a long document. */
  readonly comparedPages: number;
  readonly sampled?: boolean;
  /** The page with the largest share of differing pixels. */
  readonly worst?: { readonly page: number; readonly share: number };
  /** Pages beyond PIXEL_TOLERANCE. */
  readonly pagesBeyondTolerance: readonly number[];
  /** Everything that is beyond tolerance, one short sentence each. */
  readonly problems: readonly string[];
  readonly shown: readonly ShownPage[];
  readonly timings: { readonly oursMs?: number; readonly referenceMs?: number; readonly compareMs?: number };
}

/** Pages beyond tolerance drawn in the report per case, worst first; the table counts them all. */
export const MAX_SHOWN_PAGES = 8;
/** When page counts differ, the first pages of both are shown side by side, up to this many. */
const MAX_UNPAIRED_PAGES = 6;

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

async function timed<T>(work: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const started = performance.now();
  try {
    const value = await work();
    return { value, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { error, ms: Math.round(performance.now() - started) };
  }
}

const safeName = (name: string) => name.replace(/[^a-zA-Z0-9_-]+/g, '-');

export async function runCase(testCase: FidelityCase, context: HarnessContext): Promise<CaseResult> {
  const base = {
    name: testCase.name,
    title: testCase.title,
    ...(testCase.script !== undefined && { script: testCase.script }),
  };
  // A template case: the reference prints what the engine makes of it with the data (in the data's
  // locale, as the service renders it), sent as plain HTML.
  const data = testCase.template?.data;
  const locale = typeof data?.locale === 'string' ? { locale: data.locale } : {};
  const referenceHtml = data ? (await renderTemplate({ html: testCase.html }, data, locale)).html : testCase.html;
  const [ours, reference] = await Promise.all([
    timed(() => (data ? printTemplateWithService(context.service, testCase.html, data, testCase.options) : printWithService(context.service, testCase.html, testCase.options))),
    timed(() => printReference(context.reference, referenceHtml, testCase.options, testCase.settleMs ?? DEFAULT_SETTLE_MS)),
  ]);
  const timings = { oursMs: ours.ms, referenceMs: reference.ms };
  if (!ours.value || !reference.value) {
    const errors = [
      ...(ours.value ? [] : [`ours: ${errorText(ours.error)}`]),
      ...(reference.value ? [] : [`reference: ${errorText(reference.error)}`]),
    ];
    return {
      ...base,
      verdict: 'error',
      error: errors.join('; '),
      sizeMismatches: [],
      textMismatches: [],
      comparedPages: 0,
      pagesBeyondTolerance: [],
      problems: errors,
      shown: [],
      timings,
    };
  }
  const started = performance.now();
  const compared = await comparePdfBytes(ours.value, reference.value, context.outDir, testCase.name, {
    sampleLongDocuments: context.sampleLongDocuments ?? false,
  });
  if (compared.verdict !== 'ok' || compared.shown.length > 0) {
    // Both PDFs of a case with any difference, for a closer look in a PDF reader.
    const dir = join(context.outDir, safeName(testCase.name));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'ours.pdf'), ours.value);
    await writeFile(join(dir, 'reference.pdf'), reference.value);
  }
  return { ...base, ...compared, timings: { ...timings, compareMs: Math.round(performance.now() - started) } };
}

export type Comparison = Omit<CaseResult, 'name' | 'title' | 'script' | 'timings' | 'error'>;

/** Compares two PDFs; pictures worth showing go to `<outDir>/<name>/`. */
export async function comparePdfBytes(
  ours: Uint8Array,
  reference: Uint8Array,
  outDir: string,
  name: string,
  { sampleLongDocuments = false }: { sampleLongDocuments?: boolean } = {},
): Promise<Comparison> {
  const [oursPdf, referencePdf] = await Promise.all([openPdf(ours), openPdf(reference)]);
  try {
    return await comparePdfs(oursPdf, referencePdf, join(outDir, safeName(name)), safeName(name), sampleLongDocuments);
  } finally {
    await Promise.all([oursPdf.close(), referencePdf.close()]);
  }
}

async function comparePdfs(ours: OpenedPdf, reference: OpenedPdf, pictureDir: string, relativeDir: string, sampleLongDocuments: boolean): Promise<Comparison> {
  const problems: string[] = [];
  const pages = { ours: ours.pageCount, reference: reference.pageCount };
  const samePageCount = pages.ours === pages.reference;
  if (!samePageCount) problems.push(`page count: ours ${pages.ours}, reference ${pages.reference}`);

  const sizeMismatches: number[] = [];
  for (let page = 1; page <= Math.min(pages.ours, pages.reference); page++) {
    if (!sameSize(ours.sizes[page - 1], reference.sizes[page - 1])) sizeMismatches.push(page);
  }
  if (sizeMismatches.length > 0) {
    const first = sizeMismatches[0]!;
    const format = (size: PageSize | undefined) => (size ? `${size.width.toFixed(1)}x${size.height.toFixed(1)} pt` : 'none');
    problems.push(
      `page size differs on ${countPages(sizeMismatches)} (page ${first}: ours ${format(ours.sizes[first - 1])}, reference ${format(reference.sizes[first - 1])})`,
    );
  }

  const textMismatches: number[] = [];
  let firstTextDifference: TextDifference | undefined;
  if (samePageCount) {
    for (let page = 1; page <= pages.ours; page++) {
      const difference = firstDifference(ours.texts[page - 1]!, reference.texts[page - 1]!, page);
      if (!difference) continue;
      textMismatches.push(page);
      firstTextDifference ??= difference;
    }
  } else {
    firstTextDifference = firstDifference(ours.texts.join(' '), reference.texts.join(' '));
    if (firstTextDifference) textMismatches.push(0);
  }
  if (firstTextDifference) {
    const where = samePageCount ? `on ${countPages(textMismatches)}` : 'in the document';
    problems.push(`text differs ${where}: ours "${firstTextDifference.ours}", reference "${firstTextDifference.reference}"`);
  }

  const sum = (counts: readonly number[]) => counts.reduce((total, count) => total + count, 0);
  const missingGlyphs = {
    ours: sum(ours.missingGlyphs),
    reference: sum(reference.missingGlyphs),
    oursPages: ours.missingGlyphs.flatMap((count, index) => (count > 0 ? [index + 1] : [])),
  };
  if (missingGlyphs.ours > 0) {
    problems.push(`ours draws ${missingGlyphs.ours} missing-glyph boxes (.notdef) on ${countPages(missingGlyphs.oursPages)} (reference: ${missingGlyphs.reference})`);
  }

  // Pixels, page by page; only the pictures worth showing are kept (as files).
  const shares: { page: number; share: number }[] = [];
  const candidates: { page: number; share: number; write: () => Promise<ShownPage> }[] = [];
  const sampled = samePageCount && sampleLongDocuments && pages.ours > SAMPLE_OVER_PAGES;
  const pixelPages = !samePageCount
    ? Array.from({ length: Math.min(Math.max(pages.ours, pages.reference), MAX_UNPAIRED_PAGES) }, (_, index) => index + 1)
    : sampled
      ? samplePages(pages.ours)
      : Array.from({ length: pages.ours }, (_, index) => index + 1);
  for (const page of pixelPages) {
    const sizes = {
      ...(page <= pages.ours && { ours: ours.sizes[page - 1]! }),
      ...(page <= pages.reference && { reference: reference.sizes[page - 1]! }),
    };
    const [oursPicture, referencePicture] = await Promise.all([
      page <= pages.ours ? ours.draw(page, RASTER_SCALE) : undefined,
      page <= pages.reference ? reference.draw(page, RASTER_SCALE) : undefined,
    ]);
    const diff = oursPicture && referencePicture && sameSize(sizes.ours, sizes.reference) ? diffPictures(referencePicture, oursPicture) : undefined;
    if (diff && samePageCount) shares.push({ page, share: diff.share });
    const beyondTolerance = !samePageCount || !diff || diff.share > PIXEL_TOLERANCE;
    // Same-count pages identical to the pixel are not worth a picture; everything else may be shown.
    if (samePageCount && diff && diff.differing === 0) continue;
    const write = async (): Promise<ShownPage> => {
      await mkdir(pictureDir, { recursive: true });
      const files: { reference?: string; ours?: string; diff?: string } = {};
      const pictures = { reference: referencePicture, ours: oursPicture, diff: diff?.picture };
      for (const [kind, picture] of Object.entries(pictures)) {
        if (!picture) continue;
        const file = `p${page}-${kind}.png`;
        await writeFile(join(pictureDir, file), pictureToPng(picture));
        files[kind as keyof typeof files] = `${relativeDir}/${file}`;
      }
      return { page, ...(diff && { share: diff.share }), beyondTolerance, ...files, sizes };
    };
    candidates.push({ page, share: diff?.share ?? 1, write });
    if (samePageCount) {
      // Keep only what may be shown, the worst pages, so memory stays flat on a long book.
      candidates.sort((a, b) => b.share - a.share);
      candidates.length = Math.min(candidates.length, MAX_SHOWN_PAGES);
    }
  }
  const pagesBeyondTolerance = samePageCount
    ? [...shares.filter((entry) => entry.share > PIXEL_TOLERANCE).map((entry) => entry.page), ...sizeMismatches.filter((page) => !shares.some((entry) => entry.page === page))]
    : [];
  pagesBeyondTolerance.sort((a, b) => a - b);
  const worst = shares.reduce<{ page: number; share: number } | undefined>((a, b) => (!a || b.share > a.share ? b : a), undefined);
  if (samePageCount && pagesBeyondTolerance.length > 0) {
    problems.push(
      `pixels differ beyond ${formatShare(PIXEL_TOLERANCE)} on ${countPages(pagesBeyondTolerance)}` +
        (worst ? ` (worst: page ${worst.page}, ${formatShare(worst.share)})` : ''),
    );
  }
  // Shown: every page when counts differ (the first few); otherwise the worst pages beyond
  // tolerance, or, when all are within it, the worst page with any difference at all.
  const chosen = samePageCount
    ? candidates.filter((candidate) => candidate.share > PIXEL_TOLERANCE || candidate === candidates[0])
    : candidates;
  const shown: ShownPage[] = [];
  for (const candidate of chosen.sort((a, b) => (samePageCount ? b.share - a.share : a.page - b.page))) shown.push(await candidate.write());

  return {
    verdict: problems.length > 0 ? 'differs' : 'ok',
    pages,
    sizeMismatches,
    textMismatches,
    ...(firstTextDifference && { firstTextDifference }),
    missingGlyphs,
    comparedPages: shares.length,
    ...(sampled && { sampled }),
    ...(worst && { worst }),
    pagesBeyondTolerance,
    problems,
    shown,
  };
}

/** "page 3", "pages 2, 5, 9", "12 pages (1, 2, 3, …)". */
function countPages(pages: readonly number[]): string {
  if (pages.length === 1) return `page ${pages[0]}`;
  if (pages.length <= 6) return `pages ${pages.join(', ')}`;
  return `${pages.length} pages (${pages.slice(0, 5).join(', ')}, …)`;
}

export function formatShare(share: number): string {
  const percent = share * 100;
  if (percent === 0) return '0 %';
  if (percent < 0.001) return '<0.001 %';
  return `${percent < 0.1 ? percent.toFixed(3) : percent < 10 ? percent.toFixed(2) : percent.toFixed(1)} %`;
}

/** Runs cases `concurrency` at a time (each printing on both sides at once), in the corpus's order. */
export async function runCases(
  cases: readonly FidelityCase[],
  context: HarnessContext,
  { concurrency = 2, onResult }: { concurrency?: number; onResult?: (result: CaseResult) => void } = {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(cases.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, cases.length) }, async () => {
      while (next < cases.length) {
        const index = next++;
        results[index] = await runCase(cases[index]!, context);
        onResult?.(results[index]);
      }
    }),
  );
  return results;
}
