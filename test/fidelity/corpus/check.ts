/**
 * Dev check of the corpus (not part of the test run): prints each case in plain Chromium, as the
 * reference does (load, wait settleMs, print A4 with backgrounds), with the service's fonts, and
 * reports its page count, any request that was not a data: URL, any script error, and how many
 * glyphs were drawn as .notdef (tofu).
 *
 *   node test/fidelity/corpus/check.ts [--twice] [--out DIR] [--settle MS] [name-or-prefix ...]
 *
 * PDFs are written to DIR (default /tmp/fidelity-corpus); `pdftoppm -png -r 50 DIR/x.pdf` to look.
 * With --twice each case is printed twice and the page counts and text (pdftotext) compared;
 * --settle replaces every case's settleMs (to find how long a document takes to finish drawing).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import { PDFDocument } from 'pdf-lib';
import puppeteer, { type Browser } from 'puppeteer-core';
import { fontEnvironment } from '#lib/render/fonts.ts';
import { readPdfText } from '../../support/pdf-text.ts';
import { buildCorpus } from './index.ts';
import type { FidelityCase } from './types.ts';

const args = process.argv.slice(2);
const twice = args.includes('--twice');
const option = (name: string) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const outDir = option('--out') ?? '/tmp/fidelity-corpus';
const settleOverride = option('--settle') === undefined ? undefined : Number(option('--settle'));
const filters = args.filter((arg, i) => !arg.startsWith('--') && !['--out', '--settle'].includes(args[i - 1] ?? ''));

interface Printed {
  readonly pages: number;
  readonly text: string;
  readonly refused: string[];
  readonly errors: string[];
  readonly ms: number;
  /** Glyphs drawn as .notdef (the "tofu" box): characters no font had. */
  readonly tofu: number;
}

async function print(browser: Browser, fidelityCase: FidelityCase, file: string): Promise<Printed> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const refused: string[] = [];
  const errors: string[] = [];
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('data:') || url === 'about:blank') void request.continue();
    else {
      refused.push(url.slice(0, 120));
      void request.abort();
    }
  });
  page.on('pageerror', (error) => errors.push(String(error).slice(0, 200)));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text().slice(0, 200)}`);
  });
  const started = Date.now();
  await page.setContent(fidelityCase.html, { waitUntil: 'load', timeout: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, settleOverride ?? fidelityCase.settleMs ?? 3000));
  const bytes = await page.pdf({ format: 'A4', printBackground: true, timeout: 120_000 });
  const ms = Date.now() - started;
  await context.close();
  writeFileSync(file, bytes);
  const pages = (await PDFDocument.load(bytes)).getPageCount();
  const text = execFileSync('pdftotext', ['-layout', file, '-'], { maxBuffer: 64 * 1024 * 1024 }).toString();
  const tofu = (await readPdfText(bytes)).reduce(
    (sum, page) => sum + page.glyphs.filter((glyph) => glyph.identity && glyph.code === 0).length,
    0,
  );
  return { pages, text, refused, errors, ms, tofu };
}

const corpusStart = Date.now();
const corpus = await buildCorpus();
console.log(`corpus: ${corpus.length} cases built in ${Date.now() - corpusStart} ms`);
const selected = corpus.filter((c) => filters.length === 0 || filters.some((f) => c.name === f || c.name.startsWith(f)));
mkdirSync(outDir, { recursive: true });

const browser = await puppeteer.launch({
  executablePath: await chromium.executablePath(),
  headless: 'shell',
  args: ['--no-sandbox'],
  env: { ...process.env, ...fontEnvironment() },
});
try {
  for (const fidelityCase of selected) {
    const file = join(outDir, `${fidelityCase.name}.pdf`);
    const first = await print(browser, fidelityCase, file);
    let same = '';
    if (twice) {
      const second = await print(browser, fidelityCase, join(outDir, `${fidelityCase.name}.2.pdf`));
      same = second.pages === first.pages && second.text === first.text ? ' same' : ` DIFFERENT (${second.pages} pages)`;
    }
    const size = `${Math.round(fidelityCase.html.length / 1024)} KiB`;
    console.log(
      `${fidelityCase.name.padEnd(34)} ${String(first.pages).padStart(4)} pages  settle ${fidelityCase.settleMs ?? 3000}  ${size.padStart(9)}  ${first.ms} ms${same}${first.tofu ? `  TOFU ${first.tofu}` : ''}`,
    );
    for (const url of first.refused) console.log(`    REQUEST ${url}`);
    for (const error of first.errors) console.log(`    ERROR ${error}`);
  }
} finally {
  await browser.close();
}
