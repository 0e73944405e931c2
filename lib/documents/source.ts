/**
 * Which source a document request gives: the one place the "exactly one of html, url or
 * template_id" rule lives, for the single endpoint and for batch items (whose shape the batch
 * function checks without loading the renderer).
 */
import { DocumentError } from '#lib/render/errors.ts';

/** Why a request's source is not usable before anything is parsed: none of html, url, markdown or template_id, or several. */
export function sourceProblem(input: { readonly html?: unknown; readonly url?: unknown; readonly markdown?: unknown; readonly template_id?: unknown }): DocumentError | undefined {
  const given = (['html', 'url', 'markdown', 'template_id'] as const).filter((field) => input[field] !== undefined);
  if (given.length > 1) {
    if (given.length === 2 && given.includes('html') && given.includes('url')) return new DocumentError('INVALID_OPTIONS', 'Give either html or url, not both');
    return new DocumentError('INVALID_OPTIONS', `Give one of html, url, markdown or template_id, not ${given.join(' and ')}`);
  }
  if (given.length === 0) return new DocumentError('INVALID_HTML', 'html or url is required (or markdown, or template_id to render a stored template with data)');
  return undefined;
}

/** What a document is made into: a PDF (spec 4.1), or a picture (`POST /v1/image/generate`, a batch item's `"output": "image"`). */
export type DocumentOutput = 'pdf' | 'image';
export const DOCUMENT_OUTPUTS: readonly DocumentOutput[] = ['pdf', 'image'];

/** What a batch item (or a job's stored generate body) asks to make: its `output`, a PDF when absent. */
export function outputOf(fields: unknown): DocumentOutput {
  return typeof fields === 'object' && fields !== null && (fields as { output?: unknown }).output === 'image' ? 'image' : 'pdf';
}

/**
 * The id a document derived from a request or a job is stored under (lib/api/idempotency.ts and
 * lib/jobs/jobs.ts derive `pdf_…` ids): the same characters after `img_` when it is a picture.
 */
export function documentIdFor(output: DocumentOutput, derivedPdfId: string): string {
  return output === 'image' ? derivedPdfId.replace(/^pdf_/, 'img_') : derivedPdfId;
}
