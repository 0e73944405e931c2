/**
 * Comparing our PDF of a document with the reference's: page count, each page's size, each page's
 * text, and each page's pixels.
 *
 * - Sizes are read with pdf-lib and must agree within SIZE_TOLERANCE_PT.
 * - Text is read the way Acrobat and poppler read it (test/support/pdf-text.ts, which applies the
 *   ActualText marks Chromium writes for complex scripts), page by page, with every run of white
 *   space collapsed to one space, and must be equal.
 * - Missing glyphs (.notdef boxes) are counted on each side: our PDF must have none.
 * - Pixels: both pages are drawn by pdf.js on @napi-rs/canvas at the same scale and compared with
 *   pixelmatch (colour threshold PIXEL_THRESHOLD, anti-aliasing detection on, so a pixel that
 *   differs only by the smoothing of an edge does not count). A page passes when at most
 *   PIXEL_TOLERANCE of its pixels differ.
 * Pages are compared one to one only when both PDFs have the same number of pages.
 */
import { createCanvas, ImageData } from '@napi-rs/canvas';
import { PDFDocument } from 'pdf-lib';
import pixelmatch from 'pixelmatch';
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { readPdfText } from '../support/pdf-text.ts';
import { drawPage } from '../support/raster.ts';

/** Page sizes may differ by this much (PDF points) and still count as the same. */
export const SIZE_TOLERANCE_PT = 0.5;
/**
 * Share of a page's pixels that may differ: 0.01 %, about 28 pixels of an A4 page at RASTER_SCALE,
 * less than one character of body text. Two prints of a document by the same Chromium are identical
 * to the pixel (the harness checks that of itself), and so were ours and the reference's for every
 * case without a real difference; a looser 0.1 % let through a d3 chart printed mid-transition,
 * with three bars visibly short (0.08 %). What is left is room for anti-aliasing residue only.
 */
export const PIXEL_TOLERANCE = 0.0001;
/** pixelmatch's colour distance (0 to 1) below which two pixels count as the same. */
export const PIXEL_THRESHOLD = 0.1;
/** Pixels per PDF point: 0.75 is 54 dpi, enough to see a line of body text move. */
export const RASTER_SCALE = 0.75;

/**
 * Drawing a page costs pdf.js about 0.2 s whatever the scale (its glyphs are paths), so a 224-page
 * book takes a minute and a half per side. Where time is short (`npm test`), documents longer than
 * SAMPLE_OVER_PAGES have their pixels compared on a sample of pages; their page count, sizes, text
 * and glyphs are still compared on every page. `npm run fidelity` draws every page.
 */
export const SAMPLE_OVER_PAGES = 50;

/** The sample: the first ten pages, every tenth page, and the last five. */
export function samplePages(pageCount: number): number[] {
  const pages = new Set<number>();
  for (let page = 1; page <= Math.min(10, pageCount); page++) pages.add(page);
  for (let page = 10; page <= pageCount; page += 10) pages.add(page);
  for (let page = Math.max(1, pageCount - 4); page <= pageCount; page++) pages.add(page);
  return [...pages].sort((a, b) => a - b);
}

export interface PageSize {
  readonly width: number;
  readonly height: number;
}

/** A page drawn at some scale: RGBA pixels, row by row from the top left. */
export interface Picture {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8ClampedArray;
}

export function pictureToPng(picture: Picture): Buffer {
  const canvas = createCanvas(picture.width, picture.height);
  canvas.getContext('2d').putImageData(new ImageData(picture.pixels, picture.width, picture.height), 0, 0);
  return canvas.toBuffer('image/png');
}

/** One PDF opened for reading: page sizes, text per page, and pages drawn on demand. */
export interface OpenedPdf {
  readonly pageCount: number;
  readonly sizes: readonly PageSize[];
  /** Each page's text, white space collapsed. */
  readonly texts: readonly string[];
  /**
   * Each page's missing glyphs: characters no font had, drawn as .notdef (glyph 0, the "tofu"
   * box). Both sides have the same fonts, so the reference draws the same boxes; they are counted
   * because a box is never what the document meant.
   */
  readonly missingGlyphs: readonly number[];
  draw(page: number, scale: number): Promise<Picture>;
  close(): Promise<void>;
}

export const normalizeText = (text: string): string => text.replace(/\s+/g, ' ').trim();

export async function openPdf(bytes: Uint8Array): Promise<OpenedPdf> {
  const structure = await PDFDocument.load(bytes, { updateMetadata: false });
  const sizes = structure.getPages().map((page) => page.getSize());
  const pagesText = await readPdfText(bytes);
  const texts = pagesText.map((page) => normalizeText(page.text));
  const missingGlyphs = pagesText.map((page) => page.glyphs.filter((glyph) => glyph.identity && glyph.code === 0).length);
  const document: PDFDocumentProxy = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 }).promise;
  return {
    pageCount: sizes.length,
    sizes,
    texts,
    missingGlyphs,
    async draw(pageNumber, scale) {
      const page = await document.getPage(pageNumber);
      const { width, height, pixels } = await drawPage(page, scale);
      page.cleanup();
      return { width, height, pixels };
    },
    close: () => document.destroy(),
  };
}

export const sameSize = (a: PageSize | undefined, b: PageSize | undefined): boolean =>
  !!a && !!b && Math.abs(a.width - b.width) <= SIZE_TOLERANCE_PT && Math.abs(a.height - b.height) <= SIZE_TOLERANCE_PT;

export interface PixelDiff {
  readonly differing: number;
  readonly total: number;
  /** differing / total. */
  readonly share: number;
  /** pixelmatch's picture: the reference faded, differing pixels red, anti-aliasing yellow. */
  readonly picture: Picture;
}

/**
 * Pixel difference of two pictures of the same page size. (Sizes within SIZE_TOLERANCE_PT can round
 * to pictures a pixel apart; the part they share is compared.)
 */
export function diffPictures(reference: Picture, ours: Picture): PixelDiff {
  const width = Math.min(reference.width, ours.width);
  const height = Math.min(reference.height, ours.height);
  const crop = (picture: Picture) => {
    if (picture.width === width && picture.height === height) return picture.pixels;
    const pixels = new Uint8ClampedArray(width * height * 4);
    for (let row = 0; row < height; row++) pixels.set(picture.pixels.subarray(row * picture.width * 4, (row * picture.width + width) * 4), row * width * 4);
    return pixels;
  };
  const output = new Uint8ClampedArray(width * height * 4);
  const differing = pixelmatch(crop(reference), crop(ours), output, width, height, { threshold: PIXEL_THRESHOLD, includeAA: false });
  const total = width * height;
  return { differing, total, share: differing / total, picture: { width, height, pixels: output } };
}

/** Where two texts first part, with a little context on each side. */
export interface TextDifference {
  readonly page?: number;
  readonly ours: string;
  readonly reference: string;
}

const CONTEXT_CHARS = 40;

export function firstDifference(ours: string, reference: string, page?: number): TextDifference | undefined {
  if (ours === reference) return undefined;
  // Compare code points, so the excerpt never splits a surrogate pair.
  const a = [...ours];
  const b = [...reference];
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  const excerpt = (chars: string[]) => {
    const start = Math.max(0, index - CONTEXT_CHARS);
    const end = Math.min(chars.length, index + CONTEXT_CHARS);
    return (start > 0 ? '…' : '') + chars.slice(start, end).join('') + (end < chars.length ? '…' : '') || '(no text)';
  };
  return { ...(page !== undefined && { page }), ours: excerpt(a), reference: excerpt(b) };
}
