/**
 * Bulk jobs (shared/spec/beyond.md "Bulk jobs"): up to a million documents from one request, fanned
 * out on AWS's own machinery (docs/bulk-jobs.md says why this one): the lines go on an SQS queue in
 * chunks, Lambda's event source mapping hands each chunk to the bulk worker, and the job completes
 * when its last chunk is done.
 *
 * Submission decides everything before any work: every line is read as it streams
 * (lib/bulk/upload-lines.ts) and checked, in a worker thread (lib/bulk/upload-check-pool.ts), never
 * on the event loop (400 naming the line numbers unless `skip_invalid`; without it, reading stops
 * once more than MAX_INVALID_LINES lines are invalid), the quota for every valid line is reserved
 * (402, nothing started), the plan of chunks is stored, the job recorded, then its chunks put on
 * the queue.
 *
 * Money is exact under crashes, retries, duplicate deliveries and cancellation:
 * - every line's PDF has an id derived from the job's secret seed and the line number, and its record
 *   is written with a condition (lib/storage/pdfs.ts): a line already stored is never rendered or
 *   charged again, whichever delivery or run of its chunk comes;
 * - one worker at a time has a chunk (a lease), and a chunk is done, with its counts, in one
 *   conditional write (lib/bulk/bulk-records.ts), so progress counts each line once;
 * - the lines rendered are exactly those whose quota was reserved: a chunk holding lines refused at
 *   submission names its valid ones in its message (at most LINES_PER_CHUNK, so every message is
 *   small whatever the upload), and workers render no other;
 * - the PDF records are the charge: at completion the reservation is settled to exactly the lines
 *   whose PDF is stored (the manifest's successes), in one conditional write, once;
 * - completion is recorded once (a conditional write), and the webhook, whose id derives from the
 *   seed, is queued before it, so it is delivered once.
 * A cancelled job starts no more lines (each worker looks before each line), keeps what it stored,
 * and completes as soon as its remaining chunks have drained, giving the rest of its reservation back.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { limitsFor, type ApiKey } from '#lib/accounts/keys.ts';
import { reserveOrRefuse, settleReservation } from '#lib/accounts/quota.ts';
import { repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { ApiError, errorBody, invalidRequest, serviceBusy } from '#lib/api/errors.ts';
import { enqueueChunks, MessagesRefusedError, type ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { MAX_ARCHIVE_LINES, MAX_INLINE_ITEMS, MAX_UPLOAD_BYTES } from '#lib/documents/bulk-request.ts';
import { latestTemplateVersions } from '#lib/documents/batch.ts';
import { itemOptionsSchema } from '#lib/documents/document-options.ts';
import { deleteJobRequest, getJob, jobWebhookId, pendingJobIds, putJob, putJobRequest, queuedJob, type Job } from '#lib/jobs/job-records.ts';
import { webhookDeps } from '#lib/jobs/job-webhooks.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { ServiceBusyError } from '#lib/render/capacity.ts';
import { describeIssue } from '#lib/render/options.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { attemptDelivery, enqueueDelivery } from '#lib/webhooks/deliveries.ts';
import { afterChunk, endChunkLines, recordChunk } from './bulk-completion.ts';
import {
  BULK_RESERVATION_LIFETIME_MS,
  claimUpload,
  failQueuedBulkJob,
  isChunkDone,
  markBulkJobEnqueued,
  putPlan,
  readPlan,
  releaseUploadClaim,
  shardsFor,
  UPLOAD_CLAIM_STALE_MS,
  uploadClaim,
  type PlannedChunk,
  type UploadClaim,
} from './bulk-records.ts';
import { LINES_PER_CHUNK, MAX_INVALID_LINES, MAX_LINES_PER_CHUNK, planInput, refusalOf } from './upload-check.ts';
import { uploadCheckPool } from './upload-check-pool.ts';
import { deleteUpload, isUploadId, newUploadId, openUpload, uploadObjectKey, uploadSize } from './uploads.ts';

// The planning of chunks lives with the reading (./upload-check.ts, which the worker runs); re-exported for the plan's readers.
export { LINES_PER_CHUNK, MAX_INVALID_LINES, MAX_LINES_PER_CHUNK, planInput };

export interface BulkRequest {
  readonly upload_id?: string | undefined;
  readonly items?: readonly unknown[] | undefined;
  readonly options?: Record<string, unknown> | undefined;
  readonly archive?: boolean | undefined;
  readonly skip_invalid?: boolean | undefined;
}

/**
 * The input's bytes: the upload's, streamed from S3 once `open` is called (after a worker is free to
 * read them), or the inline items as JSON Lines, which are written out as an upload of their own once
 * the job is accepted (`inline`), so that workers read every job's lines back one way. An upload
 * that is missing or too large is refused here, before any wait.
 */
async function openInput(apiKey: ApiKey, request: BulkRequest): Promise<{ uploadId: string; open: () => Promise<AsyncIterable<Uint8Array> | Iterable<Uint8Array>>; inline?: Buffer }> {
  if (request.items !== undefined) {
    const inline = Buffer.from(request.items.map((item) => JSON.stringify(item) + '\n').join(''));
    return { uploadId: newUploadId(), open: async () => [inline], inline };
  }
  const uploadId = request.upload_id!;
  if (!isUploadId(uploadId)) throw invalidRequest('upload_id must be the upload_id POST /v1/uploads answered');
  const gone = () => invalidRequest(`No file was uploaded for ${uploadId} (or it expired): PUT the JSON Lines file to the url POST /v1/uploads answered first`);
  const size = await uploadSize(pdfStore(), apiKey, uploadId);
  if (size === undefined) throw gone();
  if (size > MAX_UPLOAD_BYTES) {
    throw invalidRequest(`The upload is ${size} bytes, larger than the ${MAX_UPLOAD_BYTES} bytes one bulk job takes; split it into several jobs.`);
  }
  const open = async () => {
    const opened = await openUpload(pdfStore(), apiKey, uploadId);
    if (!opened) throw gone();
    // Put again larger since it was measured? The reader's own count refuses it past the limit as it streams.
    return opened.body;
  };
  return { uploadId, open };
}

/** Seconds a submitter waits before trying again when its input could not be read (storage, not its content). */
const UNREADABLE_INPUT_RETRY_SECONDS = 5;

/**
 * Accepts a bulk job: every line checked, the quota of the valid ones reserved, the job stored and
 * its chunks queued. When a step before the job is stored fails, nothing is left and nothing charged;
 * a job stored but not queued yet is queued by `enqueueStrandedBulkJobs`.
 */
export async function submitBulkJob(input: { apiKey: ApiKey; request: BulkRequest; baseUrl: string; webhookUrl?: string; jobId?: string }): Promise<Job> {
  const { apiKey, request } = input;
  const store = pdfStore();
  // With an Idempotency-Key the job's id derives from the request (lib/api/idempotency.ts): a retry
  // of a submission that died after storing its job finds that job and finishes it.
  const id = input.jobId ?? 'job_' + randomBase62(24);
  if (input.jobId !== undefined) {
    const earlier = await getJob(store, input.jobId);
    if (earlier && earlier.keyId === apiKey.keyId && earlier.kind === 'bulk') return finishDeadSubmission(earlier);
  }
  if ((request.items === undefined) === (request.upload_id === undefined)) throw invalidRequest('Give either upload_id or items, not both');
  if (request.items !== undefined && request.items.length === 0) throw invalidRequest('items must not be empty');
  if (request.items !== undefined && request.items.length > MAX_INLINE_ITEMS) {
    throw invalidRequest(`items may hold at most ${MAX_INLINE_ITEMS} lines; upload larger jobs (POST /v1/uploads, then upload_id)`);
  }
  const shared = request.options && Object.keys(request.options).length > 0 ? request.options : undefined;
  if (shared) {
    const checked = itemOptionsSchema.safeParse(shared);
    if (!checked.success) throw invalidRequest(`options: ${describeIssue(checked.error)}`);
  }
  // An upload backs one job: refused before it is read when another job has it (claimed below, for good).
  if (request.upload_id !== undefined && isUploadId(request.upload_id)) await refuseUsedUpload(store, apiKey.keyId, request.upload_id, id);
  const source = await openInput(apiKey, request);
  // Read and checked in a worker thread, streamed (./upload-check-pool.ts): never on the event loop
  // that answers other keys, and refused as soon as it is known to be.
  const skipInvalid = request.skip_invalid === true;
  const check = await uploadCheckPool()
    .check(apiKey.keyId, source.open, { shared, skipInvalid })
    .catch((error: unknown) => {
      if (error instanceof ApiError || error instanceof ServiceBusyError) throw error;
      // Not the input's fault: storage did not deliver it (a connection reset mid-stream, seen with
      // eight 4 MB uploads read at once on a loaded host) or its worker died. Nothing is reserved
      // yet: the caller is told to retry, as for any overload, never a 500.
      logger.error('a bulk input could not be read', { key_id: apiKey.keyId, ...errorFields(error) });
      throw serviceBusy(UNREADABLE_INPUT_RETRY_SECONDS, `The job's input could not be read just now. Nothing was charged; retry in ${UNREADABLE_INPUT_RETRY_SECONDS} s.`);
    });
  const refusal = refusalOf(check, { skipInvalid });
  if (refusal !== undefined || 'refused' in check) throw invalidRequest(refusal ?? 'The upload cannot be a job');
  const { plan, invalid, valid, total } = check;
  const unpinnedTemplates = new Set(check.unpinnedTemplates);
  if (request.archive && total > MAX_ARCHIVE_LINES) {
    throw invalidRequest(`archive is available for jobs of at most ${MAX_ARCHIVE_LINES} lines (this one has ${total}): split the job, or download its PDFs through the manifest's links`);
  }

  const counters = counterStore();
  const templateVersions = await latestTemplateVersions(unpinnedTemplates, store, apiKey);
  const now = new Date();
  // Claimed before anything is reserved: of two submissions of one upload, one gets it, the other 409.
  const claimed = source.inline ? undefined : source.uploadId;
  if (claimed !== undefined) await claimUploadOrRefuse(store, apiKey.keyId, claimed, id, now);
  const release = async () => {
    if (claimed !== undefined) await releaseUploadClaim(store, apiKey.keyId, claimed, id);
  };
  let reservation: Awaited<ReturnType<typeof reserveOrRefuse>>;
  try {
    reservation = await reserveOrRefuse(
      counters,
      { keyId: apiKey.keyId, monthlyQuota: limitsFor(apiKey).monthlyQuota, count: valid, now, lifetimeMs: BULK_RESERVATION_LIFETIME_MS },
      (keyId, at) => repairDeadRequestsOf({ counters, pdfs: store }, keyId, at),
    );
  } catch (error) {
    await release();
    throw error;
  }
  let job: Job;
  try {
    if (source.inline) {
      await store.s3.send(
        new PutObjectCommand({ Bucket: store.bucketName, Key: uploadObjectKey(apiKey.keyId, source.uploadId), Body: source.inline, ContentType: 'application/x-ndjson' }),
      );
    }
    job = {
      ...queuedJob({ id, owner: apiKey, kind: 'bulk', reservation, baseUrl: input.baseUrl, webhookUrl: input.webhookUrl, now }),
      bulk: {
        total,
        invalid,
        chunks: plan.length,
        shards: shardsFor(plan.length),
        spread: true,
        uploadId: source.uploadId,
        archive: request.archive === true,
        ...(templateVersions.size > 0 && { templateVersions: Object.fromEntries(templateVersions) }),
      },
    };
    // The shared options may carry a url's secrets (headers, cookies, basic auth): sealed as a job's request is.
    await putJobRequest(store, job.requestKey, { options: shared ?? {} });
    await putPlan(store, job, plan);
    await putJob(store, job);
  } catch (error) {
    await settleReservation(counters, reservation, valid);
    await release();
    throw error;
  }
  let queued: QueueOutcome;
  try {
    queued = await queueBulkJob(job, plan);
  } catch (error) {
    // A passing failure (SQS unreachable): the job is stored and charged nothing yet; it is queued
    // again, whole, by the next sweep.
    logger.error('bulk job not queued yet', { job_id: job.id, ...errorFields(error) });
    return job;
  }
  // SQS will never take it: the job failed, its reservation went back, and so does this request.
  if (!queued.queued) throw queued.error;
  return job;
}

/** 409 `upload_in_use` naming the job an upload backs. */
function uploadInUse(uploadId: string, jobId: string): ApiError {
  return new ApiError(
    'upload_in_use',
    `The upload ${uploadId} already backs job ${jobId}: an upload makes one job. Follow that job, or upload the file again for a new one.`,
    { extra: { job_id: jobId } },
  );
}

/**
 * The claim another job holds on an upload (`holder`); none when the upload is free or this job's,
 * and only `stale` when the claim's job was never stored and its submission is long dead (the claim
 * may then be taken over, as it was seen).
 */
async function otherClaim(store: PdfStore, keyId: string, uploadId: string, jobId: string, now: Date): Promise<{ holder?: UploadClaim; stale?: UploadClaim }> {
  const claim = await uploadClaim(store, keyId, uploadId);
  if (!claim || claim.jobId === jobId) return {};
  if (now.getTime() - claim.claimedAt > UPLOAD_CLAIM_STALE_MS && !(await getJob(store, claim.jobId))) return { stale: claim };
  return { holder: claim };
}

/** Refuses (409) an upload another job holds, before anything of it is read. */
async function refuseUsedUpload(store: PdfStore, keyId: string, uploadId: string, jobId: string): Promise<void> {
  const { holder } = await otherClaim(store, keyId, uploadId, jobId, new Date());
  if (holder) throw uploadInUse(uploadId, holder.jobId);
}

/** Claims the upload for the job, or refuses (409) naming the job that claimed it first. */
async function claimUploadOrRefuse(store: PdfStore, keyId: string, uploadId: string, jobId: string, now: Date): Promise<void> {
  if (await claimUpload(store, keyId, uploadId, jobId, now)) return;
  const { holder, stale } = await otherClaim(store, keyId, uploadId, jobId, now);
  if (!holder && (await claimUpload(store, keyId, uploadId, jobId, now, stale))) return;
  const claim = holder ?? (await uploadClaim(store, keyId, uploadId));
  throw uploadInUse(uploadId, claim?.jobId ?? 'another job');
}

/**
 * A retry (the same Idempotency-Key and body) of a submission that stored its job, then died before
 * answering: that job is the answer. Its lines were checked and its quota reserved by the first
 * run; what the first run may not have done, putting its chunks on the queue, is done now (chunks
 * already there are harmless twice), rather than a second job charged for the same lines.
 */
async function finishDeadSubmission(job: Job): Promise<Job> {
  if (job.enqueued || job.completedAt !== undefined) return job;
  logger.warn('bulk submission retried after its first run died: its job is queued now', { job_id: job.id, key_id: job.keyId });
  let queued: QueueOutcome;
  try {
    queued = await queueBulkJob(job, await readPlan(pdfStore(), job));
  } catch (error) {
    logger.error('bulk job not queued yet', { job_id: job.id, ...errorFields(error) });
    return job;
  }
  if (!queued.queued) throw queued.error;
  return job;
}

/**
 * A chunk's message: which lines, and when some of them were refused at submission, the valid ones,
 * the only ones it renders. A chunk holds at most LINES_PER_CHUNK valid lines, so the message names
 * at most that many whatever the input: its size is bounded by construction (a few hundred bytes,
 * see test/unit/bulk-messages.test.ts), far within SQS_LIMITS. A plan stored by an earlier version
 * (one chunk for any run of refused lines) gives the same bounded message.
 */
export function chunkMessage(jobId: string, index: number, chunk: PlannedChunk): ChunkMessage {
  const message = { job_id: jobId, chunk: index, first: chunk.first, last: chunk.last, start: chunk.start, end: chunk.end };
  if (!chunk.invalid?.length) return message;
  const refused = new Set(chunk.invalid.map((problem) => (typeof problem === 'number' ? problem : problem.line)));
  const valid: number[] = [];
  for (let line = chunk.first; line <= chunk.last; line++) if (!refused.has(line)) valid.push(line);
  return { ...message, valid };
}

/** How putting a job on the queue ended: queued (its chunks, or what of them can run), or the job failed whole with `error`. */
type QueueOutcome = { readonly queued: true } | { readonly queued: false; readonly error: ApiError };

/**
 * Fails a stored bulk job that cannot be put on the queue, if none of it has started: the job ends
 * `failed` with the reason, its whole reservation goes back, its request is removed and its
 * webhook (`pdf.job.failed`) sent. Undefined when a chunk of it has started (or it was cancelled or
 * has ended): then nothing changed.
 */
async function failUnqueueableBulkJob(job: Job, reason: string): Promise<ApiError | undefined> {
  const store = pdfStore();
  const error = new ApiError('render_failed', `The job could not be put on the queue (${reason}). None of its lines ran and nothing was charged; please submit it again.`);
  const completedAt = new Date();
  // Recorded before the job ends, as a completion does: it waits for the end, then is sent once.
  const delivery = job.webhookUrl
    ? await enqueueDelivery(webhookDeps().store, { id: jobWebhookId(job), keyId: job.keyId, jobId: job.id, url: job.webhookUrl, now: completedAt })
    : undefined;
  if (!(await failQueuedBulkJob(store, job, { result: errorBody(error), completedAt }))) return undefined;
  logger.error('bulk job failed: it could not be queued', { job_id: job.id, key_id: job.keyId, reason });
  // Nothing of it ran (it never left `queued`) and nothing will: every PDF it reserved goes back.
  await settleReservation(counterStore(), job.reservation, job.reservation.count);
  await deleteJobRequest(store, job.requestKey).catch((failure: unknown) => logger.warn('job request not removed', errorFields(failure)));
  await deleteUpload(store, job, job.bulk!.uploadId).catch((failure: unknown) => logger.warn('bulk upload not removed', errorFields(failure)));
  if (delivery) await attemptDelivery(webhookDeps(), delivery).catch((failure: unknown) => logger.error('webhook delivery failed', errorFields(failure)));
  return error;
}

/**
 * Puts a stored bulk job's chunks on the queue and records it queued. What SQS will never take
 * (MessagesRefusedError), or a job whose plan is gone, cannot run: a job none of whose chunks has
 * started fails whole (its reservation back in full); in a job already running, each chunk that
 * cannot be queued is ended at once, its lines failed uncharged, and the rest runs and completes.
 * A passing failure (SQS unreachable, throttled) throws: the job stays as it is, and the next sweep
 * puts it on the queue again (chunks already there or done are harmless twice).
 */
async function queueBulkJob(job: Job, plan: readonly PlannedChunk[] | undefined): Promise<QueueOutcome> {
  const store = pdfStore();
  if (!plan || plan.length !== job.bulk!.chunks) {
    const reason = plan ? `its plan has ${plan.length} chunks, not ${job.bulk!.chunks}` : 'its plan of chunks is missing';
    const error = await failUnqueueableBulkJob(job, reason);
    if (error) return { queued: false, error };
    throw new Error(`bulk job ${job.id} has started but cannot be queued: ${reason}`);
  }
  try {
    await enqueueChunks(job.keyId, plan.map((chunk, index) => chunkMessage(job.id, index, chunk)));
  } catch (refusal) {
    if (!(refusal instanceof MessagesRefusedError)) throw refusal;
    const error = await failUnqueueableBulkJob(job, refusal.message);
    if (error) return { queued: false, error };
    logger.error('bulk job chunks refused by the queue: their lines fail, uncharged', { job_id: job.id, chunks: refusal.ids.length, reason: refusal.message });
    const reason = `This line could not be put on the queue (${refusal.message}); nothing was charged for it`;
    for (const index of refusal.ids.map(Number)) {
      if (!(await isChunkDone(store, job, index))) await recordChunk(job, index, await endChunkLines(job, plan[index]!, reason));
      await afterChunk(job, index);
    }
  }
  await markBulkJobEnqueued(store, job.id);
  return { queued: true };
}

/** What a sweep of stranded bulk jobs did: jobs queued, jobs failed (they could not be), jobs left for the next sweep after an error. */
export interface BulkSweepReport {
  readonly queued: number;
  readonly failed: number;
  readonly errors: number;
}

/**
 * Queues again every bulk job whose submission stored it but died before its chunks were all on
 * the queue (older than `olderThanMs`): all its chunks, since chunks already queued or done are
 * harmless twice; a job that cannot be queued fails (`queueBulkJob`). Each job on its own: one
 * job's error is logged and counted, and the sweep goes on with the others (the next sweep tries
 * it again). The local stack at start-up and the reconcile function on its schedule.
 */
export async function enqueueStrandedBulkJobs(now: Date, olderThanMs: number): Promise<BulkSweepReport> {
  const store = pdfStore();
  let queued = 0;
  let failed = 0;
  let errors = 0;
  for (const id of await pendingJobIds(store)) {
    try {
      const job = await getJob(store, id);
      if (!job || job.kind !== 'bulk' || job.enqueued || now.getTime() - Date.parse(job.createdAt) < olderThanMs) continue;
      if ((await queueBulkJob(job, await readPlan(store, job))).queued) queued++;
      else failed++;
    } catch (error) {
      errors++;
      logger.error('bulk job not queued; the next sweep tries again', { job_id: id, ...errorFields(error) });
    }
  }
  return { queued, failed, errors };
}

/** Thrown for a bulk request that may not be: a field a bulk job does not take. */
export function refuseMerge(): ApiError {
  return invalidRequest('merge is not available for bulk jobs: each line is its own PDF (use a batch of up to 100 items to get one merged file)');
}
