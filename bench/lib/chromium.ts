/**
 * Chromium exactly as the service starts it (lib/render/browser.ts): the same executable, flags,
 * headless mode, viewport and fonts. Only the egress proxy is left out: the floor is Chromium with
 * nothing around it.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type LaunchOptions, type Page, type PDFOptions } from 'puppeteer-core';
import { z } from 'zod';
import { CHROMIUM_FLAGS } from '#lib/render/browser.ts';
import { fontEnvironment } from '#lib/render/fonts.ts';
import { renderOptionsShape, resolveRenderOptions, type RenderOptions } from '#lib/render/options.ts';
import { toPdfOptions } from '#lib/render/render.ts';
import type { CorpusDocument } from './corpus.ts';

/** A generous limit: the benchmark wants failures to be loud, not cut short. */
const RENDER_TIMEOUT_MS = 60_000;

/** The executable the service would use: CHROME_PATH, else @sparticuz/chromium's (decompressed to the temp dir once). */
export async function serviceExecutablePath(): Promise<string> {
  if (process.env.CHROME_PATH) return process.env.CHROME_PATH;
  chromium.setGraphicsMode = false;
  return chromium.executablePath();
}

export function serviceLaunchOptions(executablePath: string): LaunchOptions {
  return {
    executablePath,
    headless: 'shell',
    pipe: true,
    args: [...CHROMIUM_FLAGS],
    // Puppeteer's own default window, as plain Chromium driven by Puppeteer lays pages out: chart
    // libraries size themselves to the window, and a wider one prints them shrunk (the fidelity harness).
    defaultViewport: { width: 800, height: 600 },
    env: { ...process.env, ...fontEnvironment() },
  };
}

export function launchLikeService(executablePath: string): Promise<Browser> {
  return puppeteer.launch(serviceLaunchOptions(executablePath));
}

const optionsSchema = z.strictObject(renderOptionsShape);

/** A corpus document as the service would print it: its render options and Puppeteer PDF options. */
export interface PreparedDocument {
  readonly document: CorpusDocument;
  readonly options: RenderOptions;
  readonly pdfOptions: PDFOptions;
}

/** Maps the document's API options through the service's own validation and option mapping. */
export function prepare(document: CorpusDocument): PreparedDocument {
  const options = resolveRenderOptions(optionsSchema.parse(document.options));
  if ('error' in options) throw new Error(`${document.name}: ${options.error}`);
  return { document, options, pdfOptions: toPdfOptions(options, new Date(), RENDER_TIMEOUT_MS) };
}

/** Loads and prints one document on a page: setContent, then pdf. Nothing else. */
export async function printOnPage(page: Page, prepared: PreparedDocument): Promise<Uint8Array> {
  const waitUntil = prepared.options.waitFor === 'domcontentloaded' ? 'domcontentloaded' : 'load';
  await page.setContent(prepared.document.html, { waitUntil, timeout: RENDER_TIMEOUT_MS });
  if (prepared.options.waitFor === 'networkidle0' || prepared.options.waitFor === 'networkidle2') {
    await page.waitForNetworkIdle({ idleTime: 500, concurrency: prepared.options.waitFor === 'networkidle0' ? 0 : 2 });
  }
  return page.pdf(prepared.pdfOptions);
}
