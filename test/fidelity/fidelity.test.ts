/**
 * Fidelity in `npm test`: every case printed by the service (the project's own stack, see
 * global-setup.ts) and by plain Chromium, compared exactly as `npm run fidelity` compares them
 * (harness.ts); each case must be within tolerance; and two screenshots against plain Chromium's
 * (images.ts). The report is written to .local/fidelity-test/
 * (FIDELITY_OUT to change) when the file is done; a failure names what differs and where to look.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadCases } from './cases.ts';
import { PIXEL_TOLERANCE } from './compare.ts';
import { comparePdfBytes, runCase, type CaseResult } from './harness.ts';
import { IMAGE_CASE_NAMES, runImageCase } from './images.ts';
import { launchReference, printReference } from './reference.ts';
import { failureMessage, formatTable, summaryLine, writeReport } from './report.ts';
import { SELF_CHECK_CASE as invoice } from './self-check.ts';
import { REPO_ROOT } from './service.ts';

const cases = await loadCases();
const outDir = resolve(REPO_ROOT, process.env.FIDELITY_OUT ?? '.local/fidelity-test');
const reportPath = join(outDir, 'report.html');
const service = inject('fidelityService');
const startedAt = new Date();
const results = new Map<string, CaseResult>();
let reference: Browser;

beforeAll(async () => {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  reference = await launchReference();
});

afterAll(async () => {
  const ordered = cases.flatMap((testCase) => results.get(testCase.name) ?? []);
  if (ordered.length > 0) {
    const browserVersion = await reference.version();
    await writeReport(ordered, outDir, { startedAt, browserVersion, durationMs: Date.now() - startedAt.getTime() });
    console.log(`${formatTable(ordered)}\n\n${summaryLine(ordered)}.\nReport: ${reportPath}`);
  }
  await reference?.close();
});

describe('the harness itself', () => {
  // A static document printed twice by the reference: what the comparison sees must come from the
  // PDFs, never from the comparison (no noise), and a small layout change must be caught.

  it('sees no difference between two prints of the same document', async () => {
    const [a, b] = [await printReference(reference, invoice.html, invoice.options, 0), await printReference(reference, invoice.html, invoice.options, 0)];
    const compared = await comparePdfBytes(a, b, join(outDir, '_self-check'), 'same');
    expect(compared.problems).toEqual([]);
    expect(compared.worst?.share).toBe(0);
  });

  it('catches a page laid out 2 mm further in', async () => {
    const moved = { ...invoice.options, margin: '17mm' };
    const [a, b] = [await printReference(reference, invoice.html, moved, 0), await printReference(reference, invoice.html, invoice.options, 0)];
    const compared = await comparePdfBytes(a, b, join(outDir, '_self-check'), 'moved');
    expect(compared.verdict).toBe('differs');
    expect(compared.worst!.share).toBeGreaterThan(PIXEL_TOLERANCE);
    expect(compared.shown.length).toBeGreaterThan(0);
  });
});

/**
 * Screenshots in `npm test`: two of images.ts's eight cases (`npm run fidelity` pictures all eight),
 * a chart drawn by scripts and right-to-left text in web fonts, each pixel-identical to plain
 * Chromium's Page.captureScreenshot at the same viewport. About 4 s each, mostly the reference's
 * wait, beside the corpus's cases.
 */
const SCREENSHOT_CASES: readonly (typeof IMAGE_CASE_NAMES)[number][] = ['chartjs-dashboard', 'rtl-arabic-invoice'];

describe.concurrent('screenshots: POST /v1/image/generate pictures like plain Chromium', () => {
  it.each(cases.filter((testCase) => (SCREENSHOT_CASES as readonly string[]).includes(testCase.name)))('$name', async (testCase) => {
    const result = await runImageCase(testCase, { service, reference, outDir });
    const why = result.verdict === 'error' ? result.error : `${result.differingPixels} pixels differ; both pictures in ${outDir} (image-${testCase.name}-*.png)`;
    expect(result.verdict, why).toBe('ok');
  });
});

describe.concurrent('fidelity: the service prints like plain Chromium', () => {
  it.each(cases)('$name', async (testCase) => {
    const result = await runCase(testCase, { service, reference, outDir, sampleLongDocuments: true });
    results.set(testCase.name, result);
    expect(result.verdict, failureMessage(result, reportPath)).toBe('ok');
  });
});
