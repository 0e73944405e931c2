/**
 * Comparing one page drawn by two different rasterizers: our thumbnail (pdf.js on Chromium's canvas)
 * against poppler's `pdftoppm` (Splash, FreeType hinting). compare.ts's pixel comparison is made for
 * one rasterizer against itself and counts 1.2 to 4.5 % of a text page's pixels as different here:
 * the two place a glyph's edges up to a pixel apart and hint its stems to other weights, with the
 * same content. pixelmatch's anti-aliasing detection does not remove that (it looks for smoothing
 * in one picture, not for a stem drawn a pixel over), and its colour threshold is blind to a faint
 * change over a large area, such as the default watermark (grey at 15 %: 19 levels of luma).
 *
 * So the two pictures are compared as a person at arm's length sees them:
 * 1. each is reduced to its luma (Rec. 601) on white and blurred by a Gaussian of
 *    RASTERIZER_BLUR_PX (Skia's, through @napi-rs/canvas's `filter`): what sits within a pixel
 *    or two (edge placement, stem weight) averages out; text, rules, fills and a watermark do not;
 * 2. a pixel differs when its blurred luma is more than RASTERIZER_LUMA_DELTA from every pixel
 *    within RASTERIZER_REACH_PX of the same place in the other picture, either way round (the two
 *    place the page's content up to a pixel apart: pdf.js on a canvas rounded to whole pixels,
 *    pdftoppm scaled to that size);
 * 3. the pictures match when at most RASTERIZER_TOLERANCE of the pixels differ.
 *
 * The constants were calibrated on the thumbnails of the fidelity cases at 600 px (images.ts) and
 * on the stored fixtures of test/unit/fidelity-rasterizers.test.ts: see RASTERIZER_TOLERANCE.
 */
import { createCanvas, ImageData } from '@napi-rs/canvas';
import type { Picture, PixelDiff } from './compare.ts';

/** Standard deviation of the blur, in pixels: wider than an edge's smoothing, narrower than a line of thumbnail text. */
export const RASTERIZER_BLUR_PX = 1.5;
/** Luma levels (of 255) two blurred pixels may differ by: below the default watermark's 19 levels, above what hinting leaves after the blur. */
export const RASTERIZER_LUMA_DELTA = 12;
/** How far (pixels) a value may be found from its place in the other picture. */
export const RASTERIZER_REACH_PX = 1;
/**
 * Share of a thumbnail's pixels that may differ from pdftoppm's picture of the same page: 1.2 %.
 * Measured on our thumbnails of the same PDFs (the fidelity cases at 600 px): 0.05 to 0.77 %, the
 * most for webfonts-magazine's dense serif text. Measured on real defects: the content moved 2 px
 * 1.9 to 5.3 %, 3 px 2.8 to 7.4 %, the default watermark missing 4.1 to 4.4 %, the page's margins
 * 2 mm wider 19 to 21 %, the second page instead of the first 25 %, a blank picture 9 % or more.
 * 1.2 % sits between the two, about 1.5 times from each.
 */
export const RASTERIZER_TOLERANCE = 0.012;

/** One sentence for reports: what the thumbnail comparison allows. */
export const RASTERIZER_TOLERANCE_TEXT =
  `thumbnails against pdftoppm: luma blurred by ${RASTERIZER_BLUR_PX} px, a pixel differs when it is more than ${RASTERIZER_LUMA_DELTA} levels from every pixel within ` +
  `${RASTERIZER_REACH_PX} px in the other picture; at most ${RASTERIZER_TOLERANCE * 100} % of the pixels may differ (two rasterizers place glyph edges a pixel apart)`;

/** Luma of `picture` over white, blurred, cropped to `width` x `height`. */
function blurredLuma(picture: Picture, width: number, height: number): Float32Array {
  const source = createCanvas(picture.width, picture.height);
  source.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(picture.pixels), picture.width, picture.height), 0, 0);
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, width, height);
  context.filter = `blur(${RASTERIZER_BLUR_PX}px)`;
  context.drawImage(source, 0, 0);
  const rgba = context.getImageData(0, 0, width, height).data;
  const luma = new Float32Array(width * height);
  for (let index = 0; index < luma.length; index++) {
    luma[index] = 0.299 * rgba[index * 4]! + 0.587 * rgba[index * 4 + 1]! + 0.114 * rgba[index * 4 + 2]!;
  }
  return luma;
}

/** How far `value` is from the nearest value of `other` within RASTERIZER_REACH_PX of (x, y). */
function distanceToNearby(value: number, other: Float32Array, x: number, y: number, width: number, height: number): number {
  let nearest = Infinity;
  for (let dy = -RASTERIZER_REACH_PX; dy <= RASTERIZER_REACH_PX; dy++) {
    const row = y + dy;
    if (row < 0 || row >= height) continue;
    for (let dx = -RASTERIZER_REACH_PX; dx <= RASTERIZER_REACH_PX; dx++) {
      const column = x + dx;
      if (column < 0 || column >= width) continue;
      nearest = Math.min(nearest, Math.abs(value - other[row * width + column]!));
    }
  }
  return nearest;
}

/**
 * The pixels of `ours` that differ from `reference` as described above (pictures a pixel apart in
 * size are compared on the part they share). The picture shows the reference faded, differing pixels red.
 */
export function diffRasterizers(reference: Picture, ours: Picture): PixelDiff {
  const width = Math.min(reference.width, ours.width);
  const height = Math.min(reference.height, ours.height);
  const a = blurredLuma(reference, width, height);
  const b = blurredLuma(ours, width, height);
  const output = new Uint8ClampedArray(width * height * 4);
  let differing = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const index = y * width + x;
      const differs =
        distanceToNearby(a[index]!, b, x, y, width, height) > RASTERIZER_LUMA_DELTA || distanceToNearby(b[index]!, a, x, y, width, height) > RASTERIZER_LUMA_DELTA;
      if (differs) differing++;
      const faded = 255 - (255 - a[index]!) * 0.1;
      output.set(differs ? [255, 0, 0, 255] : [faded, faded, faded, 255], index * 4);
    }
  }
  const total = width * height;
  return { differing, total, share: differing / total, picture: { width, height, pixels: output } };
}
