/**
 * What a picture of a document may be (shared/spec/beyond.md "Images and Markdown"): the `image`
 * object of `POST /v1/image/generate` and of batch items with `"output": "image"`, and the
 * `thumbnail` object of a PDF. Validation and defaults only; lib/render/render.ts takes the picture.
 */
import { z } from 'zod';

export const IMAGE_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export const IMAGE_CONTENT_TYPES: Readonly<Record<ImageFormat, string>> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };
export const IMAGE_EXTENSIONS: Readonly<Record<ImageFormat, string>> = { png: 'png', jpeg: 'jpg', webp: 'webp' };

/**
 * The viewport a picture is taken at unless the caller says otherwise: Puppeteer's own window, the
 * one PDFs are laid out in too (lib/render/browser.ts), so a page pictured and printed lays out alike.
 */
export const DEFAULT_VIEWPORT = { width: 800, height: 600 } as const;
/** Widest or tallest picture, in device pixels: Skia's largest surface side, past which Chromium answers a blank or broken picture. */
export const MAX_IMAGE_SIDE_PX = 16_384;
/** Most device pixels in one picture (a 4K screen at 3x is 75 M): a full page of a very long document is refused, not drawn into gigabytes of memory. */
export const MAX_IMAGE_PIXELS = 80_000_000;
export const MAX_DEVICE_SCALE_FACTOR = 4;
export const DEFAULT_JPEG_WEBP_QUALITY = 90;
/** Widest thumbnail, and its width when none is asked for. */
export const MAX_THUMBNAIL_WIDTH = 1_600;
export const DEFAULT_THUMBNAIL_WIDTH = 300;

const wholePixels = (field: string, max: number) =>
  z
    .number({ error: `${field} must be a whole number of pixels from 1 to ${max}` })
    .int({ error: `${field} must be a whole number of pixels from 1 to ${max}` })
    .min(1, { error: `${field} must be a whole number of pixels from 1 to ${max}` })
    .max(max, { error: `${field} must be a whole number of pixels from 1 to ${max}` });

const clipSide = (field: string, min: number) =>
  z
    .number({ error: `${field} must be a number of CSS pixels from ${min} to ${MAX_IMAGE_SIDE_PX}` })
    .min(min, { error: `${field} must be a number of CSS pixels from ${min} to ${MAX_IMAGE_SIDE_PX}` })
    .max(MAX_IMAGE_SIDE_PX, { error: `${field} must be a number of CSS pixels from ${min} to ${MAX_IMAGE_SIDE_PX}` });

const formatSchema = (field: string) => z.enum(IMAGE_FORMATS, { error: `${field} must be one of ${IMAGE_FORMATS.join(', ')}` });

export const imageSchema = z
  .strictObject(
    {
      format: formatSchema('image.format').optional(),
      quality: z
        .number({ error: 'image.quality must be a whole number from 0 to 100' })
        .int({ error: 'image.quality must be a whole number from 0 to 100' })
        .min(0, { error: 'image.quality must be a whole number from 0 to 100' })
        .max(100, { error: 'image.quality must be a whole number from 0 to 100' })
        .optional(),
      width: wholePixels('image.width', MAX_IMAGE_SIDE_PX).optional(),
      height: wholePixels('image.height', MAX_IMAGE_SIDE_PX).optional(),
      device_scale_factor: z
        .number({ error: `image.device_scale_factor must be a number from 0.1 to ${MAX_DEVICE_SCALE_FACTOR}` })
        .min(0.1, { error: `image.device_scale_factor must be a number from 0.1 to ${MAX_DEVICE_SCALE_FACTOR}` })
        .max(MAX_DEVICE_SCALE_FACTOR, { error: `image.device_scale_factor must be a number from 0.1 to ${MAX_DEVICE_SCALE_FACTOR}` })
        .optional(),
      full_page: z.boolean({ error: 'image.full_page must be true or false' }).optional(),
      clip: z
        .strictObject(
          { x: clipSide('image.clip.x', 0), y: clipSide('image.clip.y', 0), width: clipSide('image.clip.width', 1), height: clipSide('image.clip.height', 1) },
          { error: 'image.clip must be an object { x, y, width, height } in CSS pixels' },
        )
        .optional(),
      omit_background: z.boolean({ error: 'image.omit_background must be true or false' }).optional(),
    },
    { error: 'image must be an object' },
  );

export const thumbnailSchema = z
  .strictObject(
    {
      width: wholePixels('thumbnail.width', MAX_THUMBNAIL_WIDTH).optional(),
      format: formatSchema('thumbnail.format').optional(),
    },
    { error: 'thumbnail must be an object' },
  );

/** A picture's options after validation, every default applied. */
export interface ImageOptions {
  readonly format: ImageFormat;
  /** For jpeg and webp only. */
  readonly quality?: number;
  readonly viewport: { readonly width: number; readonly height: number; readonly deviceScaleFactor: number };
  readonly fullPage: boolean;
  readonly clip?: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
  readonly omitBackground: boolean;
}

export interface ThumbnailOptions {
  readonly width: number;
  readonly format: ImageFormat;
}

/** Defaults applied, and what single fields cannot check: the combinations, and the picture's size. */
export function resolveImageOptions(parsed: z.output<typeof imageSchema> = {}): ImageOptions | { error: string } {
  const format = parsed.format ?? 'png';
  if (parsed.quality !== undefined && format === 'png') return { error: 'image.quality applies to jpeg and webp only; png is lossless' };
  if (parsed.omit_background && format === 'jpeg') return { error: 'image.omit_background needs png or webp: jpeg has no transparency' };
  if (parsed.full_page && parsed.clip) return { error: 'image.clip and image.full_page cannot be combined: a clip is a part of the page, full_page all of it' };
  const viewport = { width: parsed.width ?? DEFAULT_VIEWPORT.width, height: parsed.height ?? DEFAULT_VIEWPORT.height, deviceScaleFactor: parsed.device_scale_factor ?? 1 };
  const pictured = parsed.clip ?? viewport;
  const problem = pictureSizeProblem(pictured.width, pictured.height, viewport.deviceScaleFactor);
  if (problem) return { error: problem };
  return {
    format,
    ...(format !== 'png' && { quality: parsed.quality ?? DEFAULT_JPEG_WEBP_QUALITY }),
    viewport,
    fullPage: parsed.full_page ?? false,
    ...(parsed.clip && { clip: parsed.clip }),
    omitBackground: parsed.omit_background ?? false,
  };
}

/** Why a picture of `width` x `height` CSS pixels at `scale` cannot be taken, or undefined. */
export function pictureSizeProblem(width: number, height: number, scale: number): string | undefined {
  const deviceWidth = Math.ceil(width * scale);
  const deviceHeight = Math.ceil(height * scale);
  if (deviceWidth > MAX_IMAGE_SIDE_PX || deviceHeight > MAX_IMAGE_SIDE_PX) {
    return `The picture would be ${deviceWidth} x ${deviceHeight} pixels; each side may be at most ${MAX_IMAGE_SIDE_PX} pixels (device_scale_factor included)`;
  }
  if (deviceWidth * deviceHeight > MAX_IMAGE_PIXELS) {
    return `The picture would be ${deviceWidth} x ${deviceHeight} pixels; at most ${MAX_IMAGE_PIXELS} pixels are taken in one picture`;
  }
  return undefined;
}

export function resolveThumbnailOptions(parsed: z.output<typeof thumbnailSchema>): ThumbnailOptions {
  return { width: parsed.width ?? DEFAULT_THUMBNAIL_WIDTH, format: parsed.format ?? 'png' };
}
