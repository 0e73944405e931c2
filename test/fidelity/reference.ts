/**
 * The reference: plain puppeteer-core with Chromium's (Puppeteer's) default flags, default viewport
 * and nothing of the service's (no flag list, no egress proxy, no prepared workspaces, no print
 * preparation). Only what makes the comparison fair is shared with the service:
 * - the same Chromium executable and the same fonts (the fontconfig environment of lib/render/fonts.ts);
 * - the same PDF settings: the case's API options go through the service's own validation and
 *   mapping (renderOptionsShape, resolveRenderOptions, toPdfOptions), so paper, margins, scale,
 *   header and footer and tagging are identical. Headers and footers use the body's font family
 *   unless they set their own (docs/api.md, "Headers and footers"); that is part of the margin box
 *   the service hands Chromium, so the reference reads the body's family too and passes it the same way.
 *
 * Each case gets a fresh browser context and page; the page is loaded with setContent (waiting for
 * `load`, or `domcontentloaded` when the case asks), then left `settleMs` (default 3 s) to finish
 * drawing, as a person would wait for print preview, and printed.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';
import { z } from 'zod';
import { fontEnvironment } from '#lib/render/fonts.ts';
import { describeIssue, renderOptionsShape, resolveRenderOptions, type RenderOptions } from '#lib/render/options.ts';
import { toPdfOptions } from '#lib/render/render.ts';

/** How long the reference leaves a loaded page before printing, unless the case says otherwise. */
export const DEFAULT_SETTLE_MS = 3_000;
const TIMEOUT_MS = 60_000;

export async function launchReference(): Promise<Browser> {
  let executablePath = process.env.CHROME_PATH;
  if (!executablePath) {
    chromium.setGraphicsMode = false;
    executablePath = await chromium.executablePath();
  }
  return puppeteer.launch({
    executablePath,
    headless: 'shell',
    args: ['--no-sandbox'],
    env: { ...process.env, ...fontEnvironment() },
  });
}

/** The case's API options as the service validates them, with every default applied. */
export function serviceOptions(options: Readonly<Record<string, unknown>> = {}): RenderOptions {
  const parsed = z.strictObject(renderOptionsShape).safeParse(options);
  if (!parsed.success) throw new Error(`invalid options: ${describeIssue(parsed.error)}`);
  const resolved = resolveRenderOptions(parsed.data);
  if ('error' in resolved) throw new Error(`invalid options: ${resolved.error}`);
  return resolved;
}

export async function printReference(
  browser: Browser,
  html: string,
  apiOptions: Readonly<Record<string, unknown>> = {},
  settleMs = DEFAULT_SETTLE_MS,
): Promise<Uint8Array> {
  const options = serviceOptions(apiOptions);
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    const waitUntil = options.waitFor === 'domcontentloaded' ? 'domcontentloaded' : 'load';
    await page.setContent(html, { waitUntil, timeout: TIMEOUT_MS });
    if (options.waitFor === 'networkidle0' || options.waitFor === 'networkidle2') {
      await page.waitForNetworkIdle({ idleTime: 500, concurrency: options.waitFor === 'networkidle0' ? 0 : 2, timeout: TIMEOUT_MS });
    }
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const hasTemplates = options.headerHtml !== undefined || options.footerHtml !== undefined;
    const fontFamily = hasTemplates
      ? await page.evaluate(() => {
          const body = document.body ?? document.documentElement;
          return body ? getComputedStyle(body).fontFamily : '';
        })
      : '';
    const pdfOptions = toPdfOptions(options, new Date(), TIMEOUT_MS, fontFamily ? { fontFamily } : {});
    return await page.pdf(pdfOptions);
  } finally {
    await context.close();
  }
}
