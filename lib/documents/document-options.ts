/**
 * What a document request may say: its source and every option, as the zod schemas that validate
 * it. Kept apart from producing the PDF (produce-pdf.ts) so that what only reads the schemas (the
 * OpenAPI document, the site function) does not load the renderer.
 */
import { z } from 'zod';
import { renderOptionsShape } from '#lib/render/options.ts';
import { filenameSchema } from '#lib/storage/filenames.ts';

/** Every option of a document: how it renders, and the name it downloads under. */
export const documentOptionsShape = { ...renderOptionsShape, filename: filenameSchema.optional() };

const sourceShape = {
  html: z.unknown().optional(),
  url: z.string({ error: 'url must be a string' }).optional(),
};

/** The single endpoint's body: source and options side by side. */
export const generateBodySchema = z.strictObject({ ...sourceShape, ...documentOptionsShape });
/** A batch item's options object: the same options, nested. */
export const itemOptionsSchema = z.strictObject(documentOptionsShape, {
  error: 'options must be an object',
});

