/**
 * Which source a document request gives: the one place the html-or-url rule lives, for the single
 * endpoint and for batch items (whose shape the batch function checks without loading the renderer).
 */
import { DocumentError } from '#lib/render/errors.ts';

/** Why a request's source is not usable before anything is parsed: neither html nor url, or both. */
export function sourceProblem(input: { readonly html?: unknown; readonly url?: unknown }): DocumentError | undefined {
  if (input.html !== undefined && input.url !== undefined) {
    return new DocumentError('INVALID_OPTIONS', 'Give either html or url, not both');
  }
  if (input.html === undefined && input.url === undefined) return new DocumentError('INVALID_HTML', 'html or url is required');
  return undefined;
}
