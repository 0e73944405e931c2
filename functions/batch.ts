import { z } from 'zod';
import { limitsFor } from '#lib/accounts/keys.ts';
import { withReservedQuota } from '#lib/accounts/quota.ts';
import { ApiError, invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { downloadUrl } from '#lib/api/views.ts';
import { invokeRenderFunction } from '#lib/aws/render-invoker.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { putPdfRecord } from '#lib/storage/pdfs.ts';
import { runBatch } from '#lib/documents/batch.ts';
import { describeIssue } from '#lib/render/options.ts';
import { admitBatch } from '#lib/render/capacity.ts';
import { settings } from '#lib/settings.ts';

/** The spec's absolute ceiling, whatever the tier. */
const MAX_BATCH_SIZE = 100;

const envelopeSchema = z.strictObject({
  pdfs: z.array(z.unknown(), { error: 'pdfs is required and must be an array of items' }).min(1, { error: 'pdfs must not be empty' }),
});

/** POST /v1/pdf/batch: up to 100 PDFs, one result per item in input order (spec 4.2). */
export const handler = apiHandler({ auth: true, body: true }, async ({ event, context, apiKey, body }) => {
  const started = performance.now();
  const parsed = envelopeSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  const items = parsed.data.pdfs;
  const limits = limitsFor(apiKey);
  const maxBatchSize = Math.min(limits.maxBatchSize, MAX_BATCH_SIZE);
  if (items.length > maxBatchSize) {
    throw new ApiError(400, 'batch_too_large', `A ${apiKey.tier} key may send at most ${maxBatchSize} PDFs per batch; this one has ${items.length}.`, {
      extra: { max_batch_size: maxBatchSize },
    });
  }

  using _admission = admitBatch(apiKey.keyId, items.length); // 503 service_busy, before any charge
  const baseUrl = publicBaseUrl(event);
  const deadlineMs = Math.min(settings.batchDeadlineMs, context.getRemainingTimeInMillis() - 1_000);
  const results = await withReservedQuota(
    counterStore(),
    { keyId: apiKey.keyId, monthlyQuota: limits.monthlyQuota, count: items.length, now: new Date() },
    async (reservation) => {
      const store = pdfStore();
      const results = await runBatch({
        items,
        owner: { keyId: apiKey.keyId, tier: apiKey.tier },
        reservationId: reservation.id,
        invokeRender: invokeRenderFunction,
        commit: (record) => putPdfRecord(store, record),
        linkFor: (record) => downloadUrl(record, baseUrl),
        concurrency: settings.batchConcurrency,
        itemTimeoutMs: settings.batchItemTimeoutMs,
        deadline: AbortSignal.timeout(Math.max(1, deadlineMs)),
      });
      return { result: results, failed: results.filter((r) => !r.success).length };
    },
    (keyId, now) => repairDeadRequestsOf({ counters: counterStore(), pdfs: pdfStore() }, keyId, now),
  );

  const successful = results.filter((r) => r.success).length;
  return json(200, {
    success: true,
    results,
    total: results.length,
    successful,
    failed: results.length - successful,
    processing_time_ms: Math.round(performance.now() - started),
  });
});
