import { invalidRequest, notFound } from '#lib/api/errors.ts';
import { decodeListCursor, encodeListCursor } from '#lib/api/list-cursors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { settings } from '#lib/settings.ts';
import { DEFAULT_PAGE_SIZE, deletePdf, getPdfRecord, listPdfs, MAX_PAGE_SIZE } from '#lib/storage/pdfs.ts';

function pageSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(raw);
  if (!/^\d{1,3}$/.test(raw) || size < 1 || size > MAX_PAGE_SIZE) {
    throw invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
  return size;
}

/**
 * GET /v1/pdf: the caller's PDFs that can still be downloaded, newest first, a page at a time
 * (shared/spec/beyond.md "Listing"): what the month's quota was spent on.
 * GET /v1/pdf/{id}: the caller's PDF record with a fresh link. DELETE /v1/pdf/{id}: removes the PDF
 * and kills its link. Another key's PDF is indistinguishable from a missing one (404).
 */
export const handler = apiHandler({ auth: byApiKey, body: false }, async ({ event, apiKey }) => {
  const store = pdfStore();
  const id = event.pathParameters?.id;
  if (id === undefined) {
    const query = event.queryStringParameters ?? {};
    const after = decodeListCursor(query.cursor, apiKey.keyId, settings.linkSigningSecret);
    const page = await listPdfs(store, apiKey.keyId, { limit: pageSize(query.limit), after, now: new Date() });
    const baseUrl = publicBaseUrl(event);
    return json(200, {
      data: page.records.map((record) => pdfRecordView(record, baseUrl)),
      next_cursor: page.next ? encodeListCursor(page.next, apiKey.keyId, settings.linkSigningSecret) : null,
    });
  }
  const record = await getPdfRecord(store, id);
  if (!record || record.keyId !== apiKey.keyId || Date.parse(record.expiresAt) <= Date.now()) {
    throw notFound('No PDF with this id exists for this API key.');
  }
  if (event.httpMethod === 'DELETE') {
    await deletePdf(store, record);
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
  }
  return json(200, pdfRecordView(record, publicBaseUrl(event)));
});
