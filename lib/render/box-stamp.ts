/**
 * A framed box of text lines, printed by Chromium as a one-page PDF exactly the box's size: the
 * visible signature's appearance (lib/documents/signing.ts), which the signature's update lays
 * on the page as the widget's appearance form (lib/signatures/pdf-signature.ts).
 *
 * As the watermark's stamp (./watermark-stamp.ts): the text is the customer's and may be in any
 * script, so Chromium shapes it with the same bundled fonts as the document (Tamil conjuncts,
 * Arabic joining, CJK) and it stays text in the file, selectable and read by text extraction. Each
 * line is its own paragraph with its own direction (dir=auto): an Arabic or Hebrew line reads right
 * to left and starts at the right edge, a Latin one at the left. Printed in the document's page
 * after the document is printed, the page first emptied (about:blank), so nothing of the document
 * touches it and nothing of it changes the document's PDF.
 *
 * The text never leaves the box: long lines wrap, and the font shrinks from 10 pt in quarter points
 * until everything fits; past 4 pt (too small to read on paper anyway) what does not fit is clipped
 * at the frame.
 */
import type { Page } from 'puppeteer-core';
import { printStampPage } from './stamp-page.ts';

/** What the box shows. Its size is in PDF points (1/72 in), as the box on the page. */
export interface BoxStamp {
  readonly width: number;
  readonly height: number;
  /**
   * The lines, top to bottom, given the moment the box is printed: a box that says when (a
   * signature's date) says the moment the caller then writes wherever else that time appears.
   */
  readonly lines: (printedAt: Date) => readonly string[];
}

/** The printed box, and the moment its lines were given. */
export interface PrintedBox {
  readonly bytes: Uint8Array;
  readonly printedAt: Date;
}

/** CSS pixels per PDF point. */
const PX_PER_PT = 96 / 72;
export const BOX_FONT_MAX_PT = 10;
export const BOX_FONT_MIN_PT = 4;

/** The frame, its padding and the text's style; the lines are set as text afterwards, never parsed as HTML. */
export function boxStampHtml(widthPt: number, heightPt: number): string {
  return (
    '<!doctype html><meta charset="utf-8"><style>' +
    'html,body{margin:0;padding:0;background:transparent;overflow:hidden}' +
    `#box{box-sizing:border-box;width:${(widthPt * PX_PER_PT).toFixed(3)}px;height:${(heightPt * PX_PER_PT).toFixed(3)}px;overflow:hidden;` +
    `border:0.8pt solid rgb(51,77,153);padding:3pt;font:${BOX_FONT_MAX_PT}pt/1.2 sans-serif;color:#000}` +
    'p{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;text-align:start}' +
    '</style><div id="box"></div>'
  );
}

/** The box as a one-page PDF of its size; `clock` gives the moment its lines are asked for. */
export async function printBoxStamp(page: Page, box: BoxStamp, timeoutMs: number, clock: () => Date = () => new Date()): Promise<PrintedBox> {
  await page.goto('about:blank', { timeout: timeoutMs });
  await page.setContent(boxStampHtml(box.width, box.height), { timeout: timeoutMs });
  const element = await page.$('#box');
  if (!element) throw new Error('the box stamp has no box');
  const printedAt = clock();
  // Set as text through DevTools (which works with scripting off), then shrunk until it fits. No
  // function is named inside (the Lambda bundle's keepNames would wrap it in a helper the page lacks).
  await element.evaluate(
    (target, { lines, maxPt, minPt }) => {
      const node = target as HTMLElement;
      node.replaceChildren(
        ...lines.map((line) => {
          const paragraph = document.createElement('p');
          paragraph.dir = 'auto';
          // An empty line keeps its height.
          paragraph.textContent = line === '' ? '\u00a0' : line;
          return paragraph;
        }),
      );
      for (let size = maxPt; size >= minPt; size -= 0.25) {
        node.style.fontSize = `${size}pt`;
        if (node.scrollHeight <= node.clientHeight && node.scrollWidth <= node.clientWidth) return;
      }
    },
    { lines: [...box.lines(printedAt)], maxPt: BOX_FONT_MAX_PT, minPt: BOX_FONT_MIN_PT },
  );
  const bytes = await printStampPage(page, { width: `${(box.width * PX_PER_PT).toFixed(3)}px`, height: `${(box.height * PX_PER_PT).toFixed(3)}px` }, timeoutMs);
  return { bytes, printedAt };
}
