import { limitsFor } from '#lib/accounts/keys.ts';
import { withReservedQuota } from '#lib/accounts/quota.ts';
import { ApiError, invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { downloadUrl, pdfRecordView } from '#lib/api/views.ts';
import { invokeRenderFunction } from '#lib/aws/render-invoker.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { putPdfRecord, type PdfRecord } from '#lib/storage/pdfs.ts';
import { MergeTooLongError, storeMergedPdf } from '#lib/documents/merge.ts';
import type { ApiKey } from '#lib/accounts/keys.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { batchBodySchema, MAX_BATCH_SIZE, runBatch } from '#lib/documents/batch.ts';
import { describeIssue } from '#lib/render/options.ts';
import { admitBatch } from '#lib/render/capacity.ts';
import { settings } from '#lib/settings.ts';

/** POST /v1/pdf/batch: up to 100 PDFs, one result per item in input order (spec 4.2). */
export const handler = apiHandler({ auth: true, body: true, idempotent: true }, async ({ event, context, apiKey, body }) => {
  const started = performance.now();
  const parsed = batchBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  const { pdfs: items, merge = false } = parsed.data;
  if (merge) {
    const encrypted = items.findIndex(isEncryptedItem);
    // An encrypted file cannot be opened to be joined; encrypting the merged file is not offered.
    if (encrypted >= 0) throw invalidRequest(`pdfs[${encrypted}].options.encryption cannot be used with merge: an encrypted PDF cannot be joined`);
  }
  const limits = limitsFor(apiKey);
  const maxBatchSize = Math.min(limits.maxBatchSize, MAX_BATCH_SIZE);
  if (items.length > maxBatchSize) {
    throw new ApiError('batch_too_large', `A ${apiKey.tier} key may send at most ${maxBatchSize} PDFs per batch; this one has ${items.length}.`, {
      extra: { max_batch_size: maxBatchSize },
    });
  }

  using _admission = admitBatch(apiKey.keyId, items.length); // 503 service_busy, before any charge
  const baseUrl = publicBaseUrl(event);
  const deadlineMs = Math.min(settings.batchDeadlineMs, context.getRemainingTimeInMillis() - 1_000);
  const { results, done } = await withReservedQuota(
    counterStore(),
    { keyId: apiKey.keyId, monthlyQuota: limits.monthlyQuota, count: items.length, now: new Date() },
    async (reservation) => {
      const store = pdfStore();
      const committed = new Map<string, PdfRecord>();
      const results = await runBatch({
        items,
        owner: { keyId: apiKey.keyId, tier: apiKey.tier },
        reservationId: reservation.id,
        invokeRender: invokeRenderFunction,
        commit: async (record) => {
          await putPdfRecord(store, record);
          committed.set(record.id, record);
        },
        linkFor: (record) => downloadUrl(record, baseUrl),
        concurrency: settings.batchConcurrency,
        itemTimeoutMs: settings.batchItemTimeoutMs,
        deadline: AbortSignal.timeout(Math.max(1, deadlineMs)),
      });
      const done = results.flatMap((result) => (result.success ? [committed.get(result.pdf_id) as PdfRecord] : []));
      return { result: { results, done }, failed: results.length - done.length };
    },
    (keyId, now) => repairDeadRequestsOf({ counters: counterStore(), pdfs: pdfStore() }, keyId, now),
  );

  const successful = done.length;
  return json(200, {
    success: true,
    results,
    total: results.length,
    successful,
    failed: results.length - successful,
    ...(merge && (await mergedResult(apiKey, done, baseUrl))),
    processing_time_ms: Math.round(performance.now() - started),
  });
});

function isEncryptedItem(item: unknown): boolean {
  const options = typeof item === 'object' && item !== null ? (item as { options?: unknown }).options : undefined;
  return typeof options === 'object' && options !== null && (options as { encryption?: unknown }).encryption !== undefined;
}

/**
 * `merged`: the items that succeeded, joined in input order (lib/documents/merge.ts), or null when
 * none did. The items are charged and stored whether or not joining them works; when it fails,
 * `merge_error` says so and the items' own files are there to download.
 */
async function mergedResult(owner: Pick<ApiKey, 'keyId' | 'tier'>, done: readonly PdfRecord[], baseUrl: string) {
  if (done.length === 0) return { merged: null };
  try {
    return { merged: pdfRecordView(await storeMergedPdf(pdfStore(), owner, done), baseUrl) };
  } catch (error) {
    if (error instanceof MergeTooLongError) return { merged: null, merge_error: { code: 'TOO_MANY_PAGES', message: error.message } };
    logger.error('merging a batch failed', errorFields(error));
    return { merged: null, merge_error: { code: 'MERGE_FAILED', message: 'The PDFs could not be joined into one file; each item is stored on its own.' } };
  }
}
