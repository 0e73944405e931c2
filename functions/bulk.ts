import { invalidRequest } from '#lib/api/errors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { byIdempotencyKey } from '#lib/api/idempotency.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { refuseMerge, submitBulkJob } from '#lib/bulk/bulk-submission.ts';
import { bulkBodySchema } from '#lib/documents/bulk-request.ts';
import { checkSubmittedWebhookUrl, statusUrl } from '#lib/jobs/jobs.ts';
import { describeIssue } from '#lib/render/options.ts';

/**
 * POST /v1/pdf/bulk: a bulk job from an upload (`upload_id`) or inline `items`, every line checked
 * and its quota reserved before anything runs (lib/bulk/bulk-submission.ts); 202 with the job. With
 * an `Idempotency-Key` (lib/api/idempotency.ts) a submission retried after a lost answer gets the
 * first job (its status as it is now), not a second one charged for the same lines; a retry after
 * a run that died (no answer was kept) finishes the job that run stored.
 */
export const handler = apiHandler({ auth: byApiKey, body: true, idempotent: byIdempotencyKey }, async ({ event, apiKey, body, requestIds }) => {
  if (body && typeof body === 'object' && 'merge' in body) throw refuseMerge();
  const parsed = bulkBodySchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
  const { webhook_url: webhookUrl, ...request } = parsed.data;
  if (webhookUrl !== undefined) await checkSubmittedWebhookUrl(webhookUrl);
  const baseUrl = publicBaseUrl(event);
  // With an Idempotency-Key, the job's id derives from the request: a retry after a run that died finishes that run's job.
  const jobId = requestIds ? (await requestIds()).jobId() : undefined;
  const job = await submitBulkJob({ apiKey, request, baseUrl, ...(webhookUrl !== undefined && { webhookUrl }), ...(jobId !== undefined && { jobId }) });
  const accepted = { job_id: job.id, status: 'queued', status_url: statusUrl(baseUrl, job.id), total: job.bulk!.total };
  return json(202, accepted, { Location: accepted.status_url });
});
