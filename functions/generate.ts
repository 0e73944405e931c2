import { invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { byIdempotencyKey } from '#lib/api/idempotency.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { takeRenderShare } from '#lib/api/render-share.ts';
import { generateDocument } from '#lib/api/document-requests.ts';
import { earlierJob, earlierPdf, pdfGone } from '#lib/api/earlier-runs.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { limitsFor } from '#lib/accounts/keys.ts';
import { withHeldAndReservedQuota } from '#lib/accounts/quota.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore, templateStore } from '#lib/aws/stores.ts';
import { generateBodySchema, JOB_OUTPUT_FIELD, splitGenerateBody } from '#lib/documents/document-options.ts';
import { documentIdFor } from '#lib/documents/source.ts';
import { IMAGE_GENERATE_PATH } from '#lib/api/routes.ts';
import { prepareRequestedDocument, templateReader } from '#lib/documents/templates.ts';
import { asyncRequestOf, jobAccepted, submitJob } from '#lib/jobs/jobs.ts';
import { describeIssue } from '#lib/render/options.ts';
import { admitRender } from '#lib/render/capacity.ts';
import { preparingWorkspacesAfterAnswer } from '#lib/aws/post-answer-work.ts';

/**
 * POST /v1/pdf/generate: one PDF from html, url, markdown or a stored template with data (spec 4.1),
 * now or as an asynchronous job. POST /v1/image/generate (shared/spec/beyond.md "Images and
 * Markdown"): the same, pictured instead of printed; one function serves both, so a picture takes
 * exactly a PDF's path (admission, share, quota, isolation, storage) and only what is made differs.
 */
export const handler = await preparingWorkspacesAfterAnswer(apiHandler({ auth: byApiKey, body: true, idempotent: byIdempotencyKey }, async ({ event, context, apiKey, body, requestIds }) => {
  const parsed = generateBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  const output = event.resource === IMAGE_GENERATE_PATH ? 'image' : 'pdf';
  // The options are read as sent (their schema transforms them, so once only). A template is read,
  // its data checked and rendered now: whatever fails about it fails before anything is charged.
  const { source, options } = splitGenerateBody(body);
  const request = await prepareRequestedDocument({ ...source, options }, apiKey.keyId, () => templateReader(templateStore(), apiKey), output);
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
        kind: 'generate',
        // The job renders the template version that was checked now, even if another is saved meanwhile.
        body: { ...body, ...(request.template && { template_version: request.template.version }), ...(output === 'image' && { [JOB_OUTPUT_FIELD]: output }) },
        count: 1,
        baseUrl,
        ...(asked.webhookUrl && { webhookUrl: asked.webhookUrl }),
        ...(jobId && { id: jobId }),
      }));
    const accepted = { ...jobAccepted(job), status: job.status };
    return json(202, accepted, { Location: accepted.status_url });
  }
  // With an Idempotency-Key: the PDF a run of this request that died stored is the answer, charged
  // to that run alone (lib/api/earlier-runs.ts); otherwise it is made under the same id.
  const pdfId = requestIds && documentIdFor(output, (await requestIds()).pdfId('document'));
  if (pdfId) {
    const made = await earlierPdf(pdfStore(), apiKey.keyId, pdfId);
    if (made === 'gone') throw pdfGone(pdfId, { replayed: false });
    if (made) return json(200, pdfRecordView(made, baseUrl));
  }
  // 503 service_busy now, before any charge; the render waits its turn, within the key's share.
  using _admission = admitRender(apiKey.keyId, { maxRunning: limitsFor(apiKey).maxConcurrentRenders });
  // The key's render share (503 before any charge) and the quota (402), asked at once and given back at once.
  return json(
    200,
    await withHeldAndReservedQuota(
      counterStore(),
      { keyId: apiKey.keyId, monthlyQuota: limitsFor(apiKey).monthlyQuota, count: 1, now: new Date() },
      () => takeRenderShare(apiKey, { want: 1, lifetimeMs: context.getRemainingTimeInMillis() }),
      async (reservation) => ({ result: await generateDocument(apiKey, request, { reservationId: reservation.id, ...(pdfId && { pdfId }) }, baseUrl), failed: 0 }),
      (keyId, now) => repairDeadRequestsOf({ counters: counterStore(), pdfs: pdfStore() }, keyId, now),
    ),
  );
}));
