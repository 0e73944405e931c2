import { invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { limitsFor } from '#lib/accounts/keys.ts';
import { withReservedQuota } from '#lib/accounts/quota.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { generateBodySchema } from '#lib/documents/document-options.ts';
import { prepareDocument, producePdf } from '#lib/documents/produce-pdf.ts';
import { describeIssue } from '#lib/render/options.ts';
import { admitRender } from '#lib/render/capacity.ts';

/** POST /v1/pdf/generate: one PDF from html or url (spec 4.1). */
export const handler = apiHandler({ auth: true, body: true, idempotent: true }, async ({ event, apiKey, body }) => {
  const parsed = generateBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  // prepareDocument reads the options as sent (their schema transforms them, so once only).
  const { html, url, ...options } = body as Record<string, unknown>;
  const request = await prepareDocument({ html, url: parsed.data.url, options });
  using _admission = admitRender(apiKey.keyId); // 503 service_busy now, before any charge; the render waits its turn
  const record = await withReservedQuota(
    counterStore(),
    { keyId: apiKey.keyId, monthlyQuota: limitsFor(apiKey).monthlyQuota, count: 1, now: new Date() },
    async (reservation) => ({ result: await producePdf(pdfStore(), apiKey, request, reservation.id), failed: 0 }),
    (keyId, now) => repairDeadRequestsOf({ counters: counterStore(), pdfs: pdfStore() }, keyId, now),
  );
  return json(200, pdfRecordView(record, publicBaseUrl(event)));
});
