/**
 * Refusing a document over the page limit before it is printed.
 *
 * Printing is limited to the first MAX_PDF_PAGES + 1 pages (render.ts), but Chromium's cost per
 * printed page grows with the whole document: pages 1 to 2,001 of a 10,000-page document took
 * 26 s, and of a 30-million-pixel-tall one 139 s, against 3.7 s for a 2,500-page one. Printing only
 * page MAX_PDF_PAGES + 1 costs one pagination of the document (1.6 s and 2.3 s for those two): if
 * that page exists, the document is refused at once with `too_many_pages`.
 *
 * The probe is not free: it costs about a third of a small document's print, and half of a long
 * single table's (pagination is most of such a print: 10.8 of 22 s for 20,000 rows). So it runs only
 * for documents that look long: a tall layout, or many forced page breaks. The estimate only decides
 * whether to probe; a long document it misses is still counted and refused after its print, later.
 *
 * Documents are laid out for the screen until Chromium prints them, so the first estimate is of the
 * screen layout. A document that prints with print media (emulate_media `print`, the default) and has
 * styles that differ between screen and print (`@media print`, `<link media="print">`, or a style
 * sheet whose rules cannot be read) and looks short on screen is measured again with print media
 * emulated, then put back: a style sheet that makes a document tall for print only would otherwise
 * escape the probe and be printed before it is refused (measured: 3 to 5 s, or the time limit).
 */
import type { Page, PDFOptions } from 'puppeteer-core';
import { DocumentError } from './errors.ts';
import { lengthToPixels, type RenderOptions } from './options.ts';

/** What Chromium answers when asked to print a page past the document's last. */
export const PAST_THE_LAST_PAGE = 'Page range exceeds page count';

/** The window documents are laid out in (browser.ts), whose width their layout height is measured at. */
const LAYOUT_WIDTH_PX = 800;

export function tooManyPages(maxPages: number): DocumentError {
  return new DocumentError('TOO_MANY_PAGES', `The document has more than the maximum of ${maxPages} pages.`);
}

/** What the loaded document shows of its length. */
export interface DocumentLength {
  /** Height of its layout in the window, in CSS px. */
  readonly height: number;
  /** Elements that force a page break before or after them (left and right ones may add a blank page). */
  readonly forcedBreaks: number;
}

/**
 * A rough page count from the document's on-screen layout: its height, made taller in proportion
 * where the printed page is narrower than the window (text wraps into more lines), over the printed
 * page's content height, plus its forced page breaks.
 */
export function estimatePages(length: DocumentLength, options: RenderOptions): number {
  const side = (name: 'top' | 'right' | 'bottom' | 'left') => lengthToPixels(options.margin[name] ?? '0') ?? 0;
  const contentWidth = Math.max(1, (options.paper.width - side('left') - side('right')) / options.scale);
  const contentHeight = Math.max(1, (options.paper.height - side('top') - side('bottom')) / options.scale);
  return (length.height * Math.max(1, LAYOUT_WIDTH_PX / contentWidth)) / contentHeight + length.forcedBreaks;
}

/** Whether a document this long could plausibly print more than `maxPages` pages. */
export function mightExceed(length: DocumentLength, options: RenderOptions, maxPages: number): boolean {
  return estimatePages(length, options) >= maxPages / 2;
}

/**
 * The document's length, read in the page (scripting on or off: DevTools evaluates either way).
 * Forced breaks are counted only when there are elements enough to reach the limit with them:
 * reading every element's style costs tens of milliseconds on a large document.
 */
function measureLength(page: Page, maxPages: number): Promise<DocumentLength> {
  return page.evaluate((enoughElements: number) => {
    const height = document.documentElement?.scrollHeight ?? 0;
    const elements = document.getElementsByTagName('*');
    if (elements.length < enoughElements) return { height, forcedBreaks: 0 };
    const forced = new Set(['page', 'left', 'right', 'recto', 'verso', 'always']);
    let forcedBreaks = 0;
    for (const element of Array.from(elements)) {
      const style = getComputedStyle(element);
      if (forced.has(style.breakBefore)) forcedBreaks++;
      if (forced.has(style.breakAfter)) forcedBreaks++;
    }
    return { height, forcedBreaks };
  }, Math.floor(maxPages / 4));
}

/**
 * Whether the document's style sheets may lay it out differently in print than on screen: a media
 * query or a style sheet's media naming print or screen, or a style sheet whose rules are not
 * readable here (another origin's). Shadow roots' own style sheets are not read.
 */
function hasPrintSpecificStyles(page: Page): Promise<boolean> {
  return page.evaluate(HAS_PRINT_SPECIFIC_STYLES) as Promise<boolean>;
}

/**
 * The check hasPrintSpecificStyles runs in the page, as source text: a function with helpers named
 * inside it would be rewritten by the Lambda bundle's keepNames (wrapped in a `__name` helper that
 * exists in Node, not in the page: "ReferenceError: a is not defined" in the Lambda emulation).
 */
const HAS_PRINT_SPECIFIC_STYLES = `(() => {
  const mediaDiffers = (media) => media !== undefined && media !== null && /\\b(print|screen)\\b/i.test(media.mediaText);
  const rulesDiffer = (rules) => {
    for (const rule of Array.from(rules)) {
      if (rule instanceof CSSMediaRule && mediaDiffers(rule.media)) return true;
      if (rule instanceof CSSImportRule) {
        if (mediaDiffers(rule.media) || (rule.styleSheet && sheetDiffers(rule.styleSheet))) return true;
      } else if (rule instanceof CSSGroupingRule && rulesDiffer(rule.cssRules)) return true;
    }
    return false;
  };
  const sheetDiffers = (sheet) => {
    if (mediaDiffers(sheet.media)) return true;
    let rules;
    try {
      rules = sheet.cssRules;
    } catch {
      return true; // unreadable: it may have print styles
    }
    return rulesDiffer(rules);
  };
  return [...Array.from(document.styleSheets), ...document.adoptedStyleSheets].some(sheetDiffers);
})()`;

/**
 * Whether the document might print long enough to probe: measured as laid out, and when that looks
 * short, measured again with print media if it prints with print media and has styles for it.
 */
async function looksLong(page: Page, options: RenderOptions, maxPages: number): Promise<boolean> {
  if (mightExceed(await measureLength(page, maxPages), options, maxPages)) return true;
  // A document printed with screen media prints as it is laid out.
  if (options.emulateMedia !== 'print' || !(await hasPrintSpecificStyles(page))) return false;
  await page.emulateMediaType('print');
  try {
    return mightExceed(await measureLength(page, maxPages), options, maxPages);
  } finally {
    // Back to what emulate_media set (render.ts emulates only `screen`; `print` is Chromium's own when it prints).
    await page.emulateMediaType();
  }
}

/** Throws `TOO_MANY_PAGES` when the loaded document would print more than `maxPages` pages. */
export async function refuseOverlongDocument(page: Page, options: RenderOptions, pdfOptions: PDFOptions, maxPages: number): Promise<void> {
  if (!(await looksLong(page, options, maxPages))) return;
  try {
    // The same page geometry as the real print; untagged and without header or footer, which change no break.
    await page.pdf({ ...pdfOptions, pageRanges: String(maxPages + 1), tagged: false, displayHeaderFooter: false });
  } catch (error) {
    if (error instanceof Error && error.message.includes(PAST_THE_LAST_PAGE)) return;
    throw error;
  }
  throw tooManyPages(maxPages);
}
