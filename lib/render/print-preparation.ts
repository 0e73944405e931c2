/**
 * What a loaded document needs before it is printed, beyond what the page's own load events wait for.
 *
 * - Images with `loading="lazy"` start loading only near the viewport, and the `load` event does not
 *   wait for them, so a lazy image further down prints as an empty box. They are switched to eager
 *   loading and awaited like any other image (unless the caller asked for `domcontentloaded`,
 *   which waits for no image at all).
 * - Headers and footers (margin boxes) are printed in documents of their own that load nothing: a
 *   font declared there with a data: URL is only used if it is already decoded in the page's memory
 *   cache. So the margin boxes' fonts are loaded into the page first (as FontFace objects that are never
 *   added to the document, so the document's own rendering is unchanged).
 * - Web fonts the document uses are awaited (document.fonts.ready), unless the caller asked for
 *   `domcontentloaded`: the load event need not wait for a font still loading. A static document
 *   can only have the fonts its own style sheets declare (lib/render/html.ts); one that declares
 *   none has nothing to wait for.
 * - CSS animations and transitions that end are finished: Chrome's print preview, opened once the
 *   page is done, shows them at their end, not at the frame the load event happened to fall on
 *   (a fade-in would print blank). Endless ones are left where they are, as print preview would.
 * - Margin boxes use the body's font family unless they set their own, so that is read here.
 *
 * Everything runs in the page, under the document's time limit (see render.ts).
 */
import type { Page } from 'puppeteer-core';
import type { RenderOptions } from './options.ts';
import { marginBoxFontUrls, sanitizeMarginBox, type MarginBoxStyle } from './margin-boxes.ts';

/** What the document may hold that its load event does not wait for. */
export interface PrintPreparation {
  /** Lazy images (documents with scripts, or from a URL: lib/render/html.ts counts lazy loading as scripting). */
  readonly lazyContent: boolean;
  /** Fonts that may still be loading: the document's own @font-face, or any a script adds. */
  readonly webFonts: boolean;
  /** CSS animations or transitions (declared by the document, or added by its scripts). */
  readonly animations: boolean;
}

/**
 * Prepares the loaded page for printing and returns how its header and footer are to be styled.
 * Everything is done in one call into the page: each round trip to the browser costs CPU on both
 * sides, on every document; steps a document cannot need are skipped.
 */
export async function preparePrint(page: Page, options: RenderOptions, needs: PrintPreparation): Promise<MarginBoxStyle> {
  const hasMarginBoxes = options.headerHtml !== undefined || options.footerHtml !== undefined;
  const wait = options.waitFor !== 'domcontentloaded';
  const steps = {
    lazy: needs.lazyContent,
    wait,
    fonts: wait && needs.webFonts,
    animations: needs.animations,
    marginBoxFonts: hasMarginBoxes ? marginBoxFontUrls(sanitizeMarginBox(options.headerHtml ?? ''), sanitizeMarginBox(options.footerHtml ?? '')) : null,
  };
  // A static document without fonts of its own, animations, header or footer (most invoices and
  // letters) needs nothing: no call into the page at all.
  if (!steps.lazy && !steps.fonts && !steps.animations && steps.marginBoxFonts === null) return {};
  const fontFamily = await page.evaluate(
    async (steps: { lazy: boolean; wait: boolean; fonts: boolean; animations: boolean; marginBoxFonts: string[] | null }) => {
      if (steps.lazy) {
        const lazy = Array.from(document.querySelectorAll('img[loading], iframe[loading]')).filter(
          (element) => element.getAttribute('loading')?.toLowerCase() === 'lazy',
        );
        for (const element of lazy) element.setAttribute('loading', 'eager');
        // decode() settles once the image has loaded (or failed) and is ready to paint, whatever
        // state the switch to eager left it in; `complete` and load events can both miss a load in flight.
        const images = lazy.filter((element): element is HTMLImageElement => element instanceof HTMLImageElement);
        if (steps.wait) await Promise.all(images.map((image) => image.decode().catch(() => undefined)));
      }
      // The load event need not wait for a web font: without this, a slow font server prints the
      // fallback font.
      if (steps.fonts) await document.fonts.ready;
      if (steps.animations) {
        for (const animation of document.getAnimations()) {
          const timing = animation.effect?.getComputedTiming();
          if (!timing || timing.endTime === Infinity || animation.playState === 'finished') continue;
          try {
            animation.finish();
          } catch {
            // a paused animation at playback rate 0 cannot finish; it prints where it stands
          }
        }
      }
      if (steps.marginBoxFonts === null) return '';
      await Promise.all(
        steps.marginBoxFonts.map((url, index) => new FontFace(`pdf-api-margin-box-font-${index}`, `url("${url}")`).load().catch(() => undefined)),
      );
      const body = document.body ?? document.documentElement;
      return body ? getComputedStyle(body).fontFamily : '';
    },
    steps,
  );
  return typeof fontFamily === 'string' && fontFamily !== '' ? { fontFamily } : {};
}
