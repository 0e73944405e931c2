/**
 * Looking at a PDF page as a person would: pdf.js draws it onto a canvas (@napi-rs/canvas, a
 * prebuilt Skia binding from npm, which pdf.js itself uses in Node), and tests measure the ink in
 * the regions where text or images should be.
 */
import { createCanvas } from '@napi-rs/canvas';
import { getDocument, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface Raster {
  readonly width: number;
  readonly height: number;
  /** Pixels per PDF point. */
  readonly scale: number;
  /** RGBA, row by row from the top left. */
  readonly pixels: Uint8ClampedArray;
  /** The page as PNG, for looking at it when a test fails. */
  png(): Buffer;
}

/** A region of the page in PDF points, measured from the top left corner. */
export interface Region {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Draws a page of an open pdf.js document on a white canvas, at `scale` pixels per point. */
export async function drawPage(page: PDFPageProxy, scale: number): Promise<Raster> {
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  // pdf.js's types name the DOM canvas; the Skia canvas implements the same 2D API.
  await page.render({ canvasContext: context as never, canvas: canvas as never, viewport }).promise;
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
  return { width: canvas.width, height: canvas.height, scale, pixels, png: () => canvas.toBuffer('image/png') };
}

/** Draws one page (1-based) on a white canvas, at `scale` pixels per point. */
export async function rasterizePage(bytes: Uint8Array, pageNumber = 1, scale = 2): Promise<Raster> {
  const document = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 }).promise;
  try {
    return await drawPage(await document.getPage(pageNumber), scale);
  } finally {
    await document.destroy();
  }
}

export interface Ink {
  /** Share of the region's pixels that are not (near) white: 0 for an empty region. */
  readonly coverage: number;
  /** Share of the region's pixels in a clear colour (not black, white or grey): colour emoji, red boxes. */
  readonly colored: number;
}

/** How much ink a region of the page holds. */
export function inkIn(raster: Raster, region: Region): Ink {
  const left = Math.max(0, Math.floor(region.x * raster.scale));
  const top = Math.max(0, Math.floor(region.y * raster.scale));
  const right = Math.min(raster.width, Math.ceil((region.x + region.width) * raster.scale));
  const bottom = Math.min(raster.height, Math.ceil((region.y + region.height) * raster.scale));
  let total = 0;
  let inked = 0;
  let colored = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = left; x < right; x++) {
      const i = (y * raster.width + x) * 4;
      const r = raster.pixels[i]!;
      const g = raster.pixels[i + 1]!;
      const b = raster.pixels[i + 2]!;
      total++;
      if (Math.min(r, g, b) < 200) inked++;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 80) colored++;
    }
  }
  return { coverage: total ? inked / total : 0, colored: total ? colored / total : 0 };
}
