import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { invalidRequest, notFound } from '#lib/api/errors.ts';
import { json } from '#lib/api/http.ts';
import { byApiKeyPollingJobs } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { bulkProgress, bulkResultObjectKey, cancelBulkJob } from '#lib/bulk/bulk-records.ts';
import { getJob, withResult } from '#lib/jobs/job-records.ts';
import { jobView } from '#lib/jobs/job-views.ts';

/** How long the redirect to a bulk job's manifest or archive may be followed. */
const RESULT_LINK_TTL_SECONDS = 60;

/**
 * GET /v1/jobs/{job_id}: an asynchronous job's state and, once finished, its result (exactly the
 * synchronous call's body); a bulk job's counts so far. DELETE: cancels a bulk job (its status is
 * `cancelled` at once; lib/bulk/bulk-submission.ts). GET .../manifest and .../archive: a finished bulk job's
 * files, by a short redirect to the bucket. Another key's job is indistinguishable from a missing one
 * (404). Polling spends the key's job-polling budget, not the one its requests share (lib/accounts/tiers.ts).
 */
export const handler = apiHandler({ auth: byApiKeyPollingJobs, body: false }, async ({ event, apiKey }) => {
  const store = pdfStore();
  const id = event.pathParameters?.job_id ?? '';
  let job = /^job_[0-9A-Za-z]{1,64}$/.test(id) ? await getJob(store, id) : undefined;
  if (!job || job.keyId !== apiKey.keyId) throw notFound(`No job with id ${JSON.stringify(id.slice(0, 80))}.`);
  const file = /\/(manifest|archive)$/.exec(event.resource ?? event.path ?? '')?.[1];
  if (file) {
    const key = bulkResultObjectKey(job, file);
    if (!key) throw notFound(`This job has no ${file}${job.kind === 'bulk' ? ' (yet)' : ''}.`);
    const url = await getSignedUrl(store.s3, new GetObjectCommand({ Bucket: store.bucketName, Key: key }), { expiresIn: RESULT_LINK_TTL_SECONDS });
    return { statusCode: 302, headers: { Location: url, 'Cache-Control': 'no-store' }, body: '' };
  }
  if (event.httpMethod === 'DELETE') {
    if (job.kind !== 'bulk') throw invalidRequest('Only bulk jobs can be cancelled; this asynchronous job runs to its end.');
    job = (await cancelBulkJob(store, job.id, new Date())) ?? job;
  }
  const progress = job.bulk && job.completedAt === undefined ? await bulkProgress(store, job) : undefined;
  return json(200, jobView(await withResult(store, job), progress));
});
