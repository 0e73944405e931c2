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

/**
 * Asking for an asynchronous job instead of an answer (shared/spec/beyond.md, "Asynchronous jobs"):
 * generate and batch take these beside their own fields; lib/jobs/jobs.ts runs the job.
 */
export const asyncRequestShape = {
  async: z.boolean({ error: 'async must be true or false' }).optional(),
  webhook_url: z.string({ error: 'webhook_url must be a string' }).max(2048, { error: 'webhook_url must be at most 2048 characters' }).optional(),
};
export const ASYNC_REQUEST_FIELDS = Object.keys(asyncRequestShape) as (keyof typeof asyncRequestShape)[];

/** The single endpoint's body: source and options side by side. */
export const generateBodySchema = z.strictObject({ ...sourceShape, ...documentOptionsShape, ...asyncRequestShape });
/** A batch item's options object: the same options, nested. */
export const itemOptionsSchema = z.strictObject(documentOptionsShape, {
  error: 'options must be an object',
});

