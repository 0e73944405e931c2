import { notFound } from '#lib/api/errors.ts';
import { json } from '#lib/api/http.ts';
import { byApiKeyPollingJobs } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { jobView } from '#lib/api/views.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { getJob, withResult } from '#lib/jobs/job-records.ts';

/**
 * GET /v1/jobs/{job_id}: an asynchronous job's state and, once finished, its result (exactly the
 * synchronous call's body). Another key's job is indistinguishable from a missing one (404).
 * Polling spends the key's job-polling budget, not the one its requests share (lib/accounts/tiers.ts).
 */
export const handler = apiHandler({ auth: byApiKeyPollingJobs, body: false }, async ({ event, apiKey }) => {
  const id = event.pathParameters?.job_id ?? '';
  const job = /^job_[0-9A-Za-z]{1,64}$/.test(id) ? await getJob(pdfStore(), id) : undefined;
  if (!job || job.keyId !== apiKey.keyId) throw notFound(`No job with id ${JSON.stringify(id.slice(0, 80))}.`);
  return json(200, jobView(await withResult(pdfStore(), job)));
});
