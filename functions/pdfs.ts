import { notFound } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { deletePdf, getPdfRecord } from '#lib/storage/pdfs.ts';

/**
 * GET /v1/pdf/{id}: the caller's PDF record with a fresh link. DELETE /v1/pdf/{id}: removes the PDF
 * and kills its link. Another key's PDF is indistinguishable from a missing one (404).
 */
export const handler = apiHandler({ auth: true, body: false }, async ({ event, apiKey }) => {
  const store = pdfStore();
  const record = await getPdfRecord(store, event.pathParameters?.id ?? '');
  if (!record || record.keyId !== apiKey.keyId || Date.parse(record.expiresAt) <= Date.now()) {
    throw notFound('No PDF with this id exists for this API key.');
  }
  if (event.httpMethod === 'DELETE') {
    await deletePdf(store, record);
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
  }
  return json(200, pdfRecordView(record, publicBaseUrl(event)));
});
