import { ApiError, invalidRequest, notFound } from '#lib/api/errors.ts';
import { byApiKeyPreviewing } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { takeRenderShare } from '#lib/api/render-share.ts';
import { limitsFor } from '#lib/accounts/keys.ts';
import { templateStore } from '#lib/aws/stores.ts';
import { MAX_PREVIEW_PDF_BYTES, previewBodySchema } from '#lib/documents/document-options.ts';
import { preparePreview, renderPreview, templateReader } from '#lib/documents/templates.ts';
import { admitRender } from '#lib/render/capacity.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { describeIssue } from '#lib/render/options.ts';

/**
 * POST /v1/templates/{template_id}/preview: the template rendered with `data` (or its `sample_data`),
 * answered as the PDF itself, for editors, marked PREVIEW on every page (renderPreview). Nothing is
 * stored, listed or charged; previews spend a per-minute budget of their own (lib/accounts/tiers.ts
 * TEMPLATE_LIMITS) and, like any render, the key's share of renderers (503 when it is taken).
 */
export const handler = apiHandler({ auth: byApiKeyPreviewing, body: true }, async ({ event, context, apiKey, body }) => {
  const id = event.pathParameters?.template_id ?? '';
  const parsed = previewBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  if (!/^tpl_[0-9A-Za-z]{1,64}$/.test(id)) throw notFound(`No template ${JSON.stringify(id.slice(0, 80))} exists for this API key.`);
  // The template read, its data checked and rendered first: what fails about it takes no renderer.
  const request = await preparePreview({ id, ...parsed.data }, apiKey.keyId, templateReader(templateStore(), apiKey));
  using _admission = admitRender(apiKey.keyId, { maxRunning: limitsFor(apiKey).maxConcurrentRenders });
  await using _share = await takeRenderShare(apiKey, { want: 1, lifetimeMs: context.getRemainingTimeInMillis() });
  let preview;
  try {
    preview = await renderPreview(request, apiKey.keyId);
  } catch (error) {
    if (error instanceof DocumentError && error.code === 'PDF_TOO_LARGE') {
      throw new ApiError('pdf_too_large', `The preview is larger than ${MAX_PREVIEW_PDF_BYTES} bytes, the most a preview answers; generate the document instead.`, {
        extra: { max_pdf_bytes: MAX_PREVIEW_PDF_BYTES },
      });
    }
    throw error;
  }
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="${id}-v${request.template!.version}-preview.pdf"`,
      'Cache-Control': 'no-store',
      'X-Template-Version': String(request.template!.version),
      'X-Pdf-Pages': String(preview.pages),
    },
    body: Buffer.from(preview.bytes).toString('base64'),
    isBase64Encoded: true,
  };
});
