/**
 * How a stamp (the watermark's text, ./watermark-stamp.ts; a visible signature's box,
 * ./box-stamp.ts) is printed: one page of exactly the stamp's size, no margins, no background, and
 * untagged: a stamp is an artifact or an annotation's appearance, not the document's content, so
 * the document's tags stay the document's.
 */
import type { Page } from 'puppeteer-core';

/** Prints the page's content as one page `width` × `height` (CSS lengths). */
export function printStampPage(page: Page, size: { readonly width: string; readonly height: string }, timeoutMs: number): Promise<Uint8Array> {
  return page.pdf({
    ...size,
    margin: { top: 0, right: 0, bottom: 0, left: 0 },
    printBackground: false,
    preferCSSPageSize: false,
    pageRanges: '1',
    tagged: false,
    timeout: timeoutMs,
  });
}
