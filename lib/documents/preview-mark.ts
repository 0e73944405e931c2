/**
 * The mark on every page of a template preview (`POST /v1/templates/{template_id}/preview`).
 *
 * A preview is neither stored nor charged, so unmarked it would be a free document: a key past its
 * quota (402 on generate) could still take every PDF it wanted from previews. Marked, it still shows
 * an editor everything about the document, and is no substitute for one.
 */
import { resolveFinishing, type Watermark } from '#lib/render/finishing-options.ts';
import type { DocumentRequest } from './produce-pdf.ts';

/**
 * What the `watermark` option draws for `{ "text": "PREVIEW" }` (its default opacity and angle,
 * from the one place that sets them), so the mark is drawn exactly as a document's watermark is:
 * diagonal, over the content, text in the file.
 */
export const PREVIEW_MARK: Watermark = (() => {
  const finishing = resolveFinishing({ watermark: { text: 'PREVIEW' } });
  if ('error' in finishing || !finishing.watermark) throw new Error('the preview mark is not a valid watermark');
  return finishing.watermark;
})();

/**
 * The request with the preview mark as its watermark. It takes the place of a watermark the
 * template's options give: were the template's kept instead, one nearly invisible (opacity 0.05, a
 * single dot) would make previews unmarked documents again. Generate still draws the template's own.
 */
export function markedAsPreview(request: DocumentRequest): DocumentRequest {
  return { ...request, options: { ...request.options, finishing: { ...request.options.finishing, watermark: PREVIEW_MARK } } };
}
