/**
 * Which source a document request gives: the one place the "exactly one of html, url or
 * template_id" rule lives, for the single endpoint and for batch items (whose shape the batch
 * function checks without loading the renderer).
 */
import { DocumentError } from '#lib/render/errors.ts';

/** Why a request's source is not usable before anything is parsed: none of html, url or template_id, or several. */
export function sourceProblem(input: { readonly html?: unknown; readonly url?: unknown; readonly template_id?: unknown }): DocumentError | undefined {
  const given = (['html', 'url', 'template_id'] as const).filter((field) => input[field] !== undefined);
  if (given.length > 1) {
    return new DocumentError('INVALID_OPTIONS', input.template_id === undefined ? 'Give either html or url, not both' : `Give one of html, url or template_id, not ${given.join(' and ')}`);
  }
  if (given.length === 0) return new DocumentError('INVALID_HTML', 'html or url is required (or template_id, to render a stored template with data)');
  return undefined;
}
