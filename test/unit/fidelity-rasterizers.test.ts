/**
 * The thumbnail comparison of the fidelity harness (test/fidelity/rasterizers.ts): our thumbnail
 * against pdftoppm's picture of the same page must pass, and a thumbnail with a real defect must
 * not. The pictures are stored (test/fidelity/fixtures/thumbnails/, made by
 * test/fidelity/make-thumbnail-fixtures.ts): real thumbnails and real pdftoppm pictures, the defects
 * printed for real (watermark missing, margins 2 mm wider, the wrong page); moved text and a blank
 * picture are made here from the passing thumbnail.
 */
import { loadImage, createCanvas } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import type { Picture } from '../fidelity/compare.ts';
import { diffRasterizers, RASTERIZER_TOLERANCE } from '../fidelity/rasterizers.ts';

const FIXTURES = new URL('../fidelity/fixtures/thumbnails/', import.meta.url);

async function picture(name: string): Promise<Picture> {
  const image = await loadImage(new URL(`${name}.png`, FIXTURES).pathname);
  const context = createCanvas(image.width, image.height).getContext('2d');
  context.drawImage(image, 0, 0);
  return { width: image.width, height: image.height, pixels: context.getImageData(0, 0, image.width, image.height).data };
}

/** `picture` with everything moved right by `dx` and down by `dy` pixels, white where nothing was. */
function moved(source: Picture, dx: number, dy: number): Picture {
  const pixels = new Uint8ClampedArray(source.pixels.length).fill(255);
  for (let y = Math.max(0, dy); y < source.height; y++) {
    const from = (y - dy) * source.width;
    pixels.set(source.pixels.subarray((from + Math.max(0, -dx)) * 4, (from + source.width - Math.max(0, dx)) * 4), (y * source.width + Math.max(0, dx)) * 4);
  }
  return { ...source, pixels };
}

const invoiceReference = picture('invoice-pdftoppm');
const invoiceThumbnail = picture('invoice-thumbnail');

describe('a thumbnail against pdftoppm', () => {
  it('matches for our thumbnails of the same PDF: the densest text of the fidelity cases (600 px) and a watermarked invoice (400 px)', async () => {
    const webfonts = diffRasterizers(await picture('webfonts-magazine-pdftoppm'), await picture('webfonts-magazine-thumbnail'));
    expect(webfonts.share).toBeLessThanOrEqual(RASTERIZER_TOLERANCE);
    // Not a comparison that sees nothing: the two rasterizers' edges do show, below the tolerance.
    expect(webfonts.differing).toBeGreaterThan(0);
    expect(diffRasterizers(await invoiceReference, await invoiceThumbnail).share).toBeLessThanOrEqual(RASTERIZER_TOLERANCE);
  });

  it.each([
    ['the watermark missing (grey at its default 15 %)', 'invoice-thumbnail-no-watermark'],
    ["the page's margins 2 mm wider", 'invoice-thumbnail-margin'],
    ['the second page instead of the first', 'invoice-thumbnail-page-2'],
  ])('fails a thumbnail with %s', async (_defect, name) => {
    expect(diffRasterizers(await invoiceReference, await picture(name)).share).toBeGreaterThan(RASTERIZER_TOLERANCE);
  });

  it('fails a thumbnail whose content is moved by 3 pixels, across or down', async () => {
    const thumbnail = await invoiceThumbnail;
    expect(diffRasterizers(await invoiceReference, moved(thumbnail, 3, 0)).share).toBeGreaterThan(RASTERIZER_TOLERANCE);
    expect(diffRasterizers(await invoiceReference, moved(thumbnail, 0, 3)).share).toBeGreaterThan(RASTERIZER_TOLERANCE);
  });

  it('fails a blank picture', async () => {
    const thumbnail = await invoiceThumbnail;
    const blank = { ...thumbnail, pixels: new Uint8ClampedArray(thumbnail.pixels.length).fill(255) };
    expect(diffRasterizers(await invoiceReference, blank).share).toBeGreaterThan(RASTERIZER_TOLERANCE);
  });
});
