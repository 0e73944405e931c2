/**
 * Asynchronous jobs (shared/spec/beyond.md): `async: true` on generate or batch.
 *
 * Submission decides everything a synchronous call decides before it renders (authentication,
 * rate limit, validation, the batch size, and the quota, reserved here), stores the request and
 * the job, and queues a run of the job function with an asynchronous Lambda invoke
 * (lib/aws/job-invoker.ts). Why Lambda's own async queue and not SQS: the job function is invoked
 * once per job anyway, Lambda keeps the event durably, retries a run that died (twice) and sends
 * what it gave up on to a failure destination, with no queue to poll or size; a job needs up to
 * 15 minutes, which SQS visibility handling would only complicate.
 *
 * Runs are idempotent: a job's PDF ids derive from a secret seed of the job, so a run that starts
 * again after a crash finds the PDFs an earlier run stored and renders only what is missing; the
 * quota reserved at submission is settled once, with exactly the PDFs stored. A job that fails
 * costs nothing. When it ends, its webhook (if any) is queued for delivery before the job is marked
 * finished, so a crash in between loses no webhook (its id also derives from the seed: one delivery).
 *
 * A job nobody finishes (every run died, or the event expired in Lambda's queue) is abandoned by
 * the reconcile function once its reservation would expire: charged for what it stored, failed.
 */
import type { Context } from 'aws-lambda';
import { isKeyActive, limitsFor, type ApiKey } from '#lib/accounts/keys.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { isRefusal, leaseRenders, type RenderLease } from '#lib/accounts/render-leases.ts';
import { reserveOrRefuse, settleReservation } from '#lib/accounts/quota.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { documentErrorToApiError } from '#lib/api/document-errors.ts';
import { generateDocument, runBatchRequest } from '#lib/api/document-requests.ts';
import { ApiError, errorBody, invalidRequest } from '#lib/api/errors.ts';
import type { JobAcceptedView } from '#lib/api/schemas.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { invokeJobFunction } from '#lib/aws/job-invoker.ts';
import { counterStore, keyStore, pdfStore, templateStore } from '#lib/aws/stores.ts';
import { batchBodySchema } from '#lib/documents/batch.ts';
import { ASYNC_REQUEST_FIELDS, splitGenerateBody } from '#lib/documents/document-options.ts';
import { documentIdFor, outputOf } from '#lib/documents/source.ts';
import { prepareRequestedDocument, templateReader } from '#lib/documents/templates.ts';
import { logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { asKeyWork } from '#lib/render/capacity.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { settings } from '#lib/settings.ts';
import { getPdfRecord } from '#lib/storage/pdfs.ts';
import { checkWebhookUrl } from '#lib/webhooks/send.ts';
import {
  deleteJob,
  deleteJobRequest,
  jobPdfId,
  queuedJob,
  JOB_RESERVATION_LIFETIME_MS,
  putJob,
  putJobRequest,
  readJobRequest,
  startJobRun,
  type Job,
  type JobKind,
} from './job-records.ts';
import { abandonJob, endJob, type Ending } from './job-endings.ts';

/** A run that starts later than this after submission fails the job instead: it could outlive the reservation. */
const JOB_START_DEADLINE_MS = JOB_RESERVATION_LIFETIME_MS - 30 * 60_000;
/** What a job function keeps back from its own time limit to record how the job ended. */
const FINISHING_MS = 30_000;

/**
 * How long one document of a job of this tier may take: its tier's `jobRenderTimeoutMs`, at most
 * the deployment's JOB_RENDER_TIMEOUT_MS. Every wait of the document (loading, readiness
 * conditions, wait_delay_ms, printing) shares it, and running out fails the job `render_timeout`:
 * a job's document never holds a renderer longer than this.
 */
export function jobRenderTimeoutMs(job: Pick<Job, 'tier'>): number {
  return Math.min(TIERS[job.tier].jobRenderTimeoutMs, settings.jobRenderTimeoutMs);
}

/**
 * The job's part of its key's share of renderers (lib/accounts/render-leases.ts), waited for: a job
 * waits in its key's own line where a request would be refused. A run that cannot get any while it
 * could still render and finish fails as a passing failure, tried again later by Lambda.
 */
async function waitForRenderShare(job: Job, { want }: { want: number }, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<RenderLease> {
  const giveUpAt = Date.now() + Math.max(0, context.getRemainingTimeInMillis() - jobRenderTimeoutMs(job) - FINISHING_MS);
  for (let waitMs = SHARE_POLL_MS; ; waitMs = Math.min(SHARE_POLL_MAX_MS, waitMs * 2)) {
    const taken = await leaseRenders(counterStore(), {
      keyId: job.keyId,
      want,
      ceiling: TIERS[job.tier].maxConcurrentRenders,
      lifetimeMs: context.getRemainingTimeInMillis(),
    });
    if (!isRefusal(taken)) return taken;
    if (Date.now() + waitMs > giveUpAt) throw new Error(`the key's share of renderers stayed taken (${taken.active} rendering)`);
    await new Promise((resolve) => setTimeout(resolve, waitMs * (0.5 + Math.random() / 2)));
  }
}

/** How often a job waiting for its key's share looks again: first, and at most. */
const SHARE_POLL_MS = 250;
const SHARE_POLL_MAX_MS = 5_000;

export const statusUrl = (baseUrl: string, jobId: string) => `${baseUrl}/v1/jobs/${jobId}`;

/**
 * Whether a request asks for a job (`async: true`), and where its webhook goes: checked now, with
 * the rest of the request, so that a refused webhook URL is a 400 (`url_not_allowed`) before
 * anything is charged.
 */
export async function asyncRequestOf(body: { async?: boolean | undefined; webhook_url?: string | undefined }): Promise<{ async: boolean; webhookUrl?: string }> {
  if (body.webhook_url === undefined) return { async: body.async === true };
  if (body.async !== true) throw invalidRequest('webhook_url needs "async": true: a synchronous request answers with its result instead');
  await checkSubmittedWebhookUrl(body.webhook_url);
  return { async: true, webhookUrl: body.webhook_url };
}

/**
 * A submitted `webhook_url` (a job's, a bulk job's), refused with 400 `url_not_allowed` when the
 * egress rules would not let it be called. Outside Lambda (the local stack), the refusal of a
 * private or plain-http receiver names the setting that allows it.
 */
export async function checkSubmittedWebhookUrl(webhookUrl: string): Promise<void> {
  const checked = await checkWebhookUrl(webhookUrl, { allowPrivateHosts: settings.allowPrivateHosts }, { nameTheAllowance: !settings.runsOnLambda });
  if ('problem' in checked) throw new ApiError('url_not_allowed', checked.problem);
}

/** The 202 answer to an accepted job. */
export function jobAccepted(job: Job): JobAcceptedView {
  return { job_id: job.id, status: 'queued', status_url: statusUrl(job.baseUrl, job.id) };
}

/**
 * Accepts a validated request as a job: reserves its quota (402 when it does not fit), stores the
 * request and the job, and queues its run. When any step fails, nothing is left and nothing charged.
 */
export async function submitJob(input: {
  apiKey: ApiKey;
  kind: JobKind;
  /** The request as sent (its async fields are dropped: the job runs it as a synchronous request). */
  body: Record<string, unknown>;
  /** PDFs to reserve: 1, or a batch's items. */
  count: number;
  webhookUrl?: string;
  baseUrl: string;
  /** The job's id when the request decides it (an Idempotency-Key's, lib/api/earlier-runs.ts); new otherwise. */
  id?: string;
}): Promise<Job> {
  const { apiKey } = input;
  const now = new Date();
  const counters = counterStore();
  const store = pdfStore();
  const reservation = await reserveOrRefuse(
    counters,
    { keyId: apiKey.keyId, monthlyQuota: limitsFor(apiKey).monthlyQuota, count: input.count, now, lifetimeMs: JOB_RESERVATION_LIFETIME_MS },
    (keyId, at) => repairDeadRequestsOf({ counters, pdfs: store }, keyId, at),
  );
  const id = input.id ?? 'job_' + randomBase62(24);
  const request = Object.fromEntries(Object.entries(input.body).filter(([name]) => !(ASYNC_REQUEST_FIELDS as string[]).includes(name)));
  const job = queuedJob({ id, owner: apiKey, kind: input.kind, reservation, baseUrl: input.baseUrl, webhookUrl: input.webhookUrl, now });
  let stored = false;
  try {
    await putJobRequest(store, job.requestKey, request);
    await putJob(store, job);
    stored = true;
    await invokeJobFunction({ job_id: id });
    return job;
  } catch (error) {
    // Not queued: the job never happened. Undo in reverse, and give the quota back.
    await Promise.allSettled([stored ? deleteJob(store, id) : Promise.resolve(), deleteJobRequest(store, job.requestKey)]);
    await settleReservation(counters, reservation, input.count);
    throw error;
  }
}

/**
 * One run of a job (the job function). A run that meets a passing failure (the render failed,
 * this process was busy, a store did not answer) throws, so that Lambda runs the job again; a
 * document that cannot be made (bad HTML, a url that answers 404, too many pages) fails the job.
 */
export async function runJob(jobId: string, context: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>): Promise<void> {
  const store = pdfStore();
  const job = await startJobRun(store, jobId);
  if (!job) return; // finished already (a duplicate event), or never accepted
  logger.appendKeys({ job_id: job.id, key_id: job.keyId });
  if (Date.now() - Date.parse(job.createdAt) > JOB_START_DEADLINE_MS) {
    await abandonJob(jobId, 'The job waited too long to start and was given up. Nothing was charged; please submit it again.');
    return;
  }
  // A key revoked since it submitted the job gets nothing more done in its name: the job fails, uncharged.
  if (!(await isKeyActive(keyStore(), job.keyId))) {
    logger.info('job of a revoked key cancelled');
    await abandonJob(jobId, 'The API key that submitted this job was revoked before the job ran. Nothing more was rendered or charged.', 'unauthorized');
    return;
  }
  const body = await readJobRequest(store, job.requestKey);
  // The job's documents take their turns in its key's own line, within its tier's share of the
  // renderer, and may wait for it as long as the run can still render and finish after.
  const share = {
    maxRunning: TIERS[job.tier].maxConcurrentRenders,
    maxWaitMs: Math.max(1, context.getRemainingTimeInMillis() - jobRenderTimeoutMs(job) - FINISHING_MS),
  };
  const ending = await asKeyWork(job.keyId, share, () => (job.kind === 'generate' ? runGenerate(job, body, context) : runBatch(job, body, context)));
  await endJob(job, ending);
}

async function runGenerate(job: Job, body: Record<string, unknown>, context: Pick<Context, 'awsRequestId' | 'getRemainingTimeInMillis'>): Promise<Ending> {
  const store = pdfStore();
  const output = outputOf(body);
  const pdfId = documentIdFor(output, jobPdfId(job, 'document'));
  const made = await getPdfRecord(store, pdfId);
  if (made) return { status: 'succeeded', result: pdfRecordView(made, job.baseUrl), failed: 0 };
  await using _share = await waitForRenderShare(job, { want: 1 }, context);
  const { source, options } = splitGenerateBody(body);
  try {
    const request = await prepareRequestedDocument({ ...source, options }, job.keyId, () => templateReader(templateStore(), job), output);
    const making = { reservationId: job.reservation.id, pdfId, renderTimeoutMs: jobRenderTimeoutMs(job) };
    return { status: 'succeeded', result: await generateDocument(job, request, making, job.baseUrl), failed: 0 };
  } catch (error) {
    // A failed render may pass: the run is tried again. Anything else about the document is final.
    if (!(error instanceof DocumentError) || error.code === 'RENDER_FAILED') throw error;
    const apiError = documentErrorToApiError(error);
    if (apiError.status >= 500) apiError.extra.request_id = context.awsRequestId;
    return { status: 'failed', result: errorBody(apiError), failed: 1 };
  }
}

async function runBatch(job: Job, body: Record<string, unknown>, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<Ending> {
  const store = pdfStore();
  const { pdfs: items, merge = false } = batchBodySchema.parse(body);
  // A picture's id differs from a PDF's by its prefix only (documentIdFor).
  const pdfIdOf = (index: number) => documentIdFor(outputOf(items[index]), jobPdfId(job, `item-${index}`));
  const mergedPdfId = jobPdfId(job, 'merged');
  // Its fan-out is what its key's share has free (at least one render), waited for in line.
  await using share = await waitForRenderShare(job, { want: Math.min(items.length, settings.batchConcurrency, TIERS[job.tier].maxConcurrentRenders) }, context);
  const deadlineMs = Math.max(1, context.getRemainingTimeInMillis() - FINISHING_MS);
  const produced = await runBatchRequest({
    concurrency: share.count,
    owner: job,
    items,
    merge,
    reservation: job.reservation,
    baseUrl: job.baseUrl,
    deadlineAt: Date.now() + deadlineMs,
    // An item may wait in its key's line (its tier's share of renderers) for as long as the job
    // has; its render alone is bounded by the tier's render time.
    itemTimeoutMs: deadlineMs,
    // Joining the items (merge) may use half of what is kept back for finishing, and the rest of the run.
    timeLeftMs: () => context.getRemainingTimeInMillis() - FINISHING_MS / 2,
    madeBefore: {
      pdfIdOf,
      recordOf: (index) => getPdfRecord(store, pdfIdOf(index)),
      renderTimeoutMs: jobRenderTimeoutMs(job),
      mergedPdfId,
      mergedRecord: () => getPdfRecord(store, mergedPdfId),
    },
  });
  // A batch is answered whatever its items did, so the job succeeds; each item says how it went.
  return { status: 'succeeded', ...produced };
}
