/**
 * What a document request may say: its source and every option, as the zod schemas that validate
 * it. Kept apart from producing the PDF (produce-pdf.ts) so that what only reads the schemas (the
 * OpenAPI document, the site function) does not load the renderer.
 */
import { z } from 'zod';
import { renderOptionsShape } from '#lib/render/options.ts';
import { filenameSchema } from '#lib/storage/filenames.ts';
import { signatureOptionSchema } from '#lib/signatures/options.ts';
import { imageSchema, thumbnailSchema } from '#lib/render/image-options.ts';
import { finishingShape } from '#lib/render/finishing-options.ts';

const FINISHING_OPTIONS = Object.keys(finishingShape) as (keyof typeof finishingShape)[];

/**
 * Every option of a document: how it renders, the name it downloads under, its `signature`, and
 * (shared/spec/beyond.md "Images and Markdown") a picture's `image` options, a PDF's `thumbnail`, a
 * Markdown document's `css`.
 */
export const documentOptionsShape = {
  ...renderOptionsShape,
  filename: filenameSchema.optional(),
  signature: signatureOptionSchema.optional(),
  image: imageSchema.optional(),
  thumbnail: thumbnailSchema.optional(),
  css: z.string({ error: 'css must be a string' }).max(1_000_000, { error: 'css must be at most 1000000 characters' }).optional(),
};

/** The options that shape a printed page (or its file), meaningless for a picture: refused on an image request, by name. */
export const PDF_ONLY_OPTIONS = [
  'format',
  'margin',
  'orientation',
  'print_background',
  'scale',
  'header_html',
  'footer_html',
  'tagged',
  'width',
  'height',
  'prefer_css_page_size',
  'page_ranges',
  'outline',
  ...FINISHING_OPTIONS,
  'thumbnail',
  'signature',
] as const satisfies readonly (keyof typeof documentOptionsShape)[];

const sourceShape = {
  html: z.unknown().optional(),
  url: z.string({ error: 'url must be a string' }).optional(),
  markdown: z.string({ error: 'markdown must be a string' }).optional(),
};

/* Stored templates (shared/spec/beyond.md "Templates"); lib/documents/templates.ts renders them. */
/** Longest template name. */
export const MAX_TEMPLATE_NAME_CHARS = 200;

export const templateIdSchema = z.string({ error: 'template_id must be a string' }).regex(/^tpl_[0-9A-Za-z]{1,64}$/, { error: 'template_id must be a template id such as "tpl_…"' });
export const templateVersionSchema = z.int({ error: 'template_version must be a whole number from 1' }).min(1, { error: 'template_version must be a whole number from 1' });

/** The fields that ask for a stored template, beside a document's options (generate) or in a batch item. */
export const templateSourceShape = {
  template_id: templateIdSchema.optional(),
  template_version: templateVersionSchema.optional(),
  data: z.unknown().optional(),
};
export const TEMPLATE_SOURCE_FIELDS = Object.keys(templateSourceShape) as (keyof typeof templateSourceShape)[];

/** `POST /v1/templates` and `PUT /v1/templates/{template_id}`: a whole template (PUT saves a whole new version). */
export const templateBodySchema = z.strictObject({
  name: z
    .string({ error: 'name is required and must be a string' })
    .trim()
    .min(1, { error: 'name must not be empty' })
    .max(MAX_TEMPLATE_NAME_CHARS, { error: `name must be at most ${MAX_TEMPLATE_NAME_CHARS} characters` }),
  html: z.string({ error: 'html is required and must be a string' }).min(1, { error: 'html must not be empty' }),
  header_html: z.string({ error: 'header_html must be a string' }).optional(),
  footer_html: z.string({ error: 'footer_html must be a string' }).optional(),
  options: z.record(z.string(), z.unknown(), { error: 'options must be an object' }).optional(),
  data_schema: z.unknown().optional(),
  sample_data: z.record(z.string(), z.unknown(), { error: 'sample_data must be a JSON object' }).optional(),
});
export type TemplateBody = z.infer<typeof templateBodySchema>;

/** `POST /v1/templates/{template_id}/preview`: data to render with (the template's sample data when absent), and which version. */
export const previewBodySchema = z.strictObject({
  data: z.record(z.string(), z.unknown(), { error: 'data must be a JSON object' }).optional(),
  version: templateVersionSchema.optional(),
});

/**
 * The most a preview answers: it travels in the response itself (base64 in Lambda's 6 MB response
 * payload), not through a download link. A larger document is 422 `pdf_too_large`; generate it instead.
 */
export const MAX_PREVIEW_PDF_BYTES = 4 * 1024 * 1024;

/**
 * Asking for an asynchronous job instead of an answer (shared/spec/beyond.md, "Asynchronous jobs"):
 * generate and batch take these beside their own fields; lib/jobs/jobs.ts runs the job.
 */
export const asyncRequestShape = {
  async: z.boolean({ error: 'async must be true or false' }).optional(),
  webhook_url: z.string({ error: 'webhook_url must be a string' }).max(2048, { error: 'webhook_url must be at most 2048 characters' }).optional(),
};
export const ASYNC_REQUEST_FIELDS = Object.keys(asyncRequestShape) as (keyof typeof asyncRequestShape)[];

/** The single endpoint's body: source (html, url, or a template and its data) and options side by side. */
export const generateBodySchema = z.strictObject({ ...sourceShape, ...templateSourceShape, ...documentOptionsShape, ...asyncRequestShape });
/** A batch item's options object: the same options, nested. */
export const itemOptionsSchema = z.strictObject(documentOptionsShape, {
  error: 'options must be an object',
});


/**
 * Where an asynchronous job of `POST /v1/image/generate` keeps what it makes (`"image"`), beside the
 * request's own fields in the job's stored body, as a batch item says it: the job function reads it
 * (lib/jobs/jobs.ts, with outputOf). Not a field of generate's public body, whose schema refuses it.
 */
export const JOB_OUTPUT_FIELD = 'output';

/** The fields of a request that say what to print; everything else in a generate body is an option. */
export const DOCUMENT_SOURCE_FIELDS = ['html', 'url', 'markdown', ...TEMPLATE_SOURCE_FIELDS] as const;

/**
 * A generate body (as sent) split into its source and its options, the async fields left out:
 * options are read as sent (their schema transforms them, so they are parsed once, later).
 */
export function splitGenerateBody(body: Record<string, unknown>): {
  source: Partial<Record<(typeof DOCUMENT_SOURCE_FIELDS)[number], unknown>>;
  options: Record<string, unknown>;
} {
  const source: Record<string, unknown> = {};
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name === JOB_OUTPUT_FIELD) continue;
    if ((DOCUMENT_SOURCE_FIELDS as readonly string[]).includes(name)) source[name] = value;
    else if (!(ASYNC_REQUEST_FIELDS as readonly string[]).includes(name)) options[name] = value;
  }
  return { source, options };
}
