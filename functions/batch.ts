import { limitsFor } from '#lib/accounts/keys.ts';
import { withHeldAndReservedQuota } from '#lib/accounts/quota.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { runBatchRequest } from '#lib/api/document-requests.ts';
import { earlierBatch, earlierJob } from '#lib/api/earlier-runs.ts';
import { ApiError, invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { byIdempotencyKey } from '#lib/api/idempotency.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { takeRenderShare } from '#lib/api/render-share.ts';
import { counterStore, pdfStore, templateStore } from '#lib/aws/stores.ts';
import { batchBodySchema, MAX_BATCH_SIZE, pinTemplateVersions } from '#lib/documents/batch.ts';
import { asyncRequestOf, jobAccepted, submitJob } from '#lib/jobs/jobs.ts';
import { describeIssue } from '#lib/render/options.ts';
import { admitBatch } from '#lib/render/capacity.ts';
import { settings } from '#lib/settings.ts';

/** What a synchronous batch keeps, after joining its items (`merge`), to write its record and answer. */
const MERGE_ANSWER_MS = 1_000;

/** POST /v1/pdf/batch: up to 100 PDFs, one result per item in input order (spec 4.2), now or as a job. */
export const handler = apiHandler({ auth: byApiKey, body: true, idempotent: byIdempotencyKey }, async ({ event, context, apiKey, body, requestIds }) => {
  const started = performance.now();
  const parsed = batchBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  const { pdfs: sent, merge = false } = parsed.data;
  if (merge) {
    const encrypted = sent.findIndex(isEncryptedItem);
    // An encrypted file cannot be opened to be joined; encrypting the merged file is not offered.
    if (encrypted >= 0) throw invalidRequest(`pdfs[${encrypted}].options.encryption cannot be used with merge: an encrypted PDF cannot be joined`);
  }
  const limits = limitsFor(apiKey);
  const maxBatchSize = Math.min(limits.maxBatchSize, MAX_BATCH_SIZE);
  if (sent.length > maxBatchSize) {
    throw new ApiError('batch_too_large', `A ${apiKey.tier} key may send at most ${maxBatchSize} PDFs per batch; this one has ${sent.length}.`, {
      extra: { max_batch_size: maxBatchSize },
    });
  }
  // Each template an item names renders at its latest version as of now, for every item alike
  // (lib/documents/batch.ts): one read per template, once the batch's size is known to be allowed.
  const items = await pinTemplateVersions(sent, templateStore(), apiKey);
  const asked = await asyncRequestOf(parsed.data);
  const baseUrl = publicBaseUrl(event);
  if (asked.async) {
    // With an Idempotency-Key the job's id is the request's: a run after one that died having queued
    // it answers that job (lib/api/earlier-runs.ts) rather than queueing, and charging, another.
    const jobId = requestIds && (await requestIds()).jobId();
    const job =
      (jobId && (await earlierJob(pdfStore(), apiKey.keyId, jobId))) ||
      (await submitJob({
        apiKey,
        kind: 'batch',
        body: { ...body, pdfs: items },
        count: items.length,
        baseUrl,
        ...(asked.webhookUrl && { webhookUrl: asked.webhookUrl }),
        ...(jobId && { id: jobId }),
      }));
    const accepted = { ...jobAccepted(job), status: job.status };
    return json(202, accepted, { Location: accepted.status_url });
  }

  // With an Idempotency-Key: what a run of this request that died stored is adopted, and only the
  // rest is reserved and made (lib/api/earlier-runs.ts).
  const earlier = requestIds && (await earlierBatch(pdfStore(), apiKey.keyId, items, await requestIds()));
  using _admission = admitBatch(apiKey.keyId, items.length); // 503 service_busy, before any charge
  // The batch's fan-out is its part of the key's share of renderers: at least half of what it
  // could use, or 503 before any charge (it could not finish in time with much less).
  const fanOut = Math.min(items.length, settings.batchConcurrency, limits.maxConcurrentRenders);
  // Taken at the same time as the quota, and given back with it.
  const deadlineMs = Math.min(settings.batchDeadlineMs, context.getRemainingTimeInMillis() - 1_000);
  const response = await withHeldAndReservedQuota(
    counterStore(),
    { keyId: apiKey.keyId, monthlyQuota: limits.monthlyQuota, count: earlier?.toMake ?? items.length, now: new Date() },
    () => takeRenderShare(apiKey, { want: fanOut, atLeast: Math.ceil(fanOut / 2), lifetimeMs: context.getRemainingTimeInMillis() }),
    (reservation, share) =>
      runBatchRequest(
        {
          owner: apiKey,
          items,
          merge,
          reservation,
          baseUrl,
          deadlineAt: Date.now() + Math.max(1, deadlineMs),
          itemTimeoutMs: settings.batchItemTimeoutMs,
          concurrency: share.count,
          timeLeftMs: () => context.getRemainingTimeInMillis() - MERGE_ANSWER_MS,
          ...(earlier && { madeBefore: earlier.madeBefore }),
        },
        started,
      ),
    (keyId, now) => repairDeadRequestsOf({ counters: counterStore(), pdfs: pdfStore() }, keyId, now),
  );
  return json(200, response);
});

function isEncryptedItem(item: unknown): boolean {
  const options = typeof item === 'object' && item !== null ? (item as { options?: unknown }).options : undefined;
  return typeof options === 'object' && options !== null && (options as { encryption?: unknown }).encryption !== undefined;
}
