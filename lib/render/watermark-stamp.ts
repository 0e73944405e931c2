/**
 * The watermark's text, printed by Chromium as a one-page PDF of its own: the stamp that
 * lib/render/finishing.ts lays over every page of the document.
 *
 * The text is the customer's and may be in any script: Chromium shapes it with the same bundled
 * fonts as the document (Tamil conjuncts, Arabic joining and right-to-left order, Thai marks),
 * which a PDF library drawing glyphs one by one cannot. It stays text in the file: searchable,
 * and read by text extraction. The stamp is printed in the document's own page after the document
 * is printed, so nothing of it can change the document's PDF; the page is first emptied
 * (about:blank), so nothing of the document (its styles, its content security policy) touches it.
 */
import type { Page } from 'puppeteer-core';
import type { Watermark } from './finishing-options.ts';
import { printStampPage } from './stamp-page.ts';

/** Large enough that the stamp stays sharp scaled up to a 200-inch page; it is vector text anyway. */
const FONT_SIZE_PX = 96;

/**
 * Grey text, see-through by the watermark's opacity. The opacity is the text colour's own: drawn
 * onto the page as a form, Chromium's content sets its own opacity, which would override one set
 * around it.
 */
const stampHtml = (opacity: number) =>
  '<!doctype html><meta charset="utf-8"><style>' +
  'html,body{margin:0;padding:0;background:transparent}' +
  `span{display:inline-block;white-space:pre;font:700 ${FONT_SIZE_PX}px sans-serif;line-height:1.25;color:rgba(127,127,127,${opacity});padding:0 0.15em;unicode-bidi:plaintext}` +
  '</style><span></span>';

/** The watermark text as a one-page PDF just the text's size. */
export async function printStamp(page: Page, watermark: Watermark, timeoutMs: number): Promise<Uint8Array> {
  await page.goto('about:blank', { timeout: timeoutMs });
  await page.setContent(stampHtml(watermark.opacity), { timeout: timeoutMs });
  // Set as text through DevTools (which works with scripting off): never parsed as HTML.
  const span = await page.$('span');
  if (!span) throw new Error('the watermark stamp has no text element');
  await span.evaluate((element, value) => {
    element.textContent = value;
  }, watermark.text);
  const box = await span.boundingBox();
  if (!box) throw new Error('the watermark stamp has no size');
  return printStampPage(page, { width: `${Math.ceil(box.width)}px`, height: `${Math.ceil(box.height)}px` }, timeoutMs);
}
