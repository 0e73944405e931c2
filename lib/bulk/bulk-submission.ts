/**
 * Bulk jobs (shared/spec/beyond.md "Bulk jobs"): up to a million documents from one request, fanned
 * out on AWS's own machinery (docs/bulk-jobs.md says why this one): the lines go on an SQS queue in
 * chunks, Lambda's event source mapping hands each chunk to the bulk worker, and the job completes
 * when its last chunk is done.
 *
 * Submission decides everything before any work: every line is read as it streams
 * (lib/bulk/upload-lines.ts) and checked (400 naming the line numbers,
 * unless `skip_invalid`), the quota for every valid line is reserved (402, nothing started), the plan
 * of chunks is stored, the job recorded, then its chunks put on the queue.
 *
 * Money is exact under crashes, retries, duplicate deliveries and cancellation:
 * - every line's PDF has an id derived from the job's secret seed and the line number, and its record
 *   is written with a condition (lib/storage/pdfs.ts): a line already stored is never rendered or
 *   charged again, whichever delivery or run of its chunk comes;
 * - one worker at a time has a chunk (a lease), and a chunk is done, with its counts, in one
 *   conditional write (lib/bulk/bulk-records.ts), so progress counts each line once;
 * - the lines rendered are exactly those whose quota was reserved: each chunk's message names its
 *   lines refused at submission, which workers never render;
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
import { ApiError, invalidRequest } from '#lib/api/errors.ts';
import { enqueueChunks, type ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { MAX_ARCHIVE_LINES, MAX_INLINE_ITEMS, MAX_UPLOAD_BYTES } from '#lib/documents/bulk-request.ts';
import { latestTemplateVersions, namesTemplateWithoutVersion } from '#lib/documents/batch.ts';
import { itemOptionsSchema } from '#lib/documents/document-options.ts';
import { getJob, pendingJobIds, putJob, putJobRequest, queuedJob, type Job } from '#lib/jobs/job-records.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { describeIssue } from '#lib/render/options.ts';
import { BULK_RESERVATION_LIFETIME_MS, CHUNKS_PER_SHARD, markBulkJobEnqueued, putPlan, readPlan, type PlannedChunk } from './bulk-records.ts';
import { bulkLineCheck, readUploadLines, UploadRefusedError, type LineProblem, type UploadLine } from './upload-lines.ts';
import { isUploadId, newUploadId, openUpload, uploadObjectKey } from './uploads.ts';

/** Lines a chunk holds (valid ones; lines refused at submission ride along): see docs/bulk-jobs.md for why 10. */
export const LINES_PER_CHUNK = 10;

/** The most invalid lines a 400 names. */
const NAMED_PROBLEMS = 20;

export interface BulkRequest {
  readonly upload_id?: string | undefined;
  readonly items?: readonly unknown[] | undefined;
  readonly options?: Record<string, unknown> | undefined;
  readonly archive?: boolean | undefined;
  readonly skip_invalid?: boolean | undefined;
}

/**
 * The input's bytes: the upload's, streamed from S3, or the inline items as JSON Lines, which are
 * written out as an upload of their own once the job is accepted (`inline`), so that workers read
 * every job's lines back one way.
 */
async function openInput(apiKey: ApiKey, request: BulkRequest): Promise<{ uploadId: string; body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>; inline?: Buffer }> {
  if (request.items !== undefined) {
    const inline = Buffer.from(request.items.map((item) => JSON.stringify(item) + '\n').join(''));
    return { uploadId: newUploadId(), body: [inline], inline };
  }
  const uploadId = request.upload_id!;
  if (!isUploadId(uploadId)) throw invalidRequest('upload_id must be the upload_id POST /v1/uploads answered');
  const opened = await openUpload(pdfStore(), apiKey, uploadId);
  if (!opened) throw invalidRequest(`No file was uploaded for ${uploadId} (or it expired): PUT the JSON Lines file to the url POST /v1/uploads answered first`);
  if (opened.size > MAX_UPLOAD_BYTES) {
    (opened.body as { destroy?: () => void }).destroy?.();
    throw invalidRequest(`The upload is ${opened.size} bytes, larger than the ${MAX_UPLOAD_BYTES} bytes one bulk job takes; split it into several jobs.`);
  }
  return { uploadId, body: opened.body };
}

/** A chunk being planned: its lines so far. */
interface PlanningChunk {
  first: number;
  last: number;
  start: number;
  end: number;
  valid: number;
  invalid: { line: number; code: LineProblem['code']; message: string }[];
}

const planned = ({ first, last, start, end, invalid }: PlanningChunk): PlannedChunk => ({ first, last, start, end, ...(invalid.length > 0 && { invalid }) });

/** Reads and checks every line as it streams in; the chunks of the valid ones, and the problems of the others. */
async function planInput(lines: AsyncIterable<UploadLine>) {
  const plan: PlannedChunk[] = [];
  const problems: (LineProblem & { line: number })[] = [];
  /** The templates valid lines name without a version: each is pinned to its latest when the job is made. */
  const unpinnedTemplates = new Set<string>();
  let valid = 0;
  let total = 0;
  let current: PlanningChunk | undefined;
  try {
    for await (const line of lines) {
      total = line.line;
      // A chunk holds LINES_PER_CHUNK valid lines; invalid ones ride along with the chunk they fall in.
      if (!current || (!line.error && current.valid === LINES_PER_CHUNK)) {
        if (current) plan.push(planned(current));
        current = { first: line.line, last: line.line, start: line.start, end: line.end, valid: 0, invalid: [] };
      }
      current.last = line.line;
      current.end = line.end;
      if (line.error) {
        problems.push({ line: line.line, ...line.error });
        current.invalid.push({ line: line.line, ...line.error });
      } else {
        valid++;
        current.valid++;
        if (namesTemplateWithoutVersion(line.item)) unpinnedTemplates.add(line.item.template_id);
      }
    }
  } catch (error) {
    if (error instanceof UploadRefusedError) throw invalidRequest(error.message);
    throw error;
  }
  if (current) plan.push(planned(current));
  return { plan, problems, valid, total, unpinnedTemplates };
}

function describeProblems(problems: readonly (LineProblem & { line: number })[]): string {
  const named = problems.slice(0, NAMED_PROBLEMS).map((problem) => `line ${problem.line}: ${problem.message}`);
  const more = problems.length > NAMED_PROBLEMS ? `; and ${problems.length - NAMED_PROBLEMS} more` : '';
  return `${problems.length} line${problems.length === 1 ? ' is' : 's are'} not valid batch items (send "skip_invalid": true to run the others): ${named.join('; ')}${more}`;
}

/**
 * Accepts a bulk job: every line checked, the quota of the valid ones reserved, the job stored and
 * its chunks queued. When a step before the job is stored fails, nothing is left and nothing charged;
 * a job stored but not queued yet is queued by `enqueueStrandedBulkJobs`.
 */
export async function submitBulkJob(input: { apiKey: ApiKey; request: BulkRequest; baseUrl: string; webhookUrl?: string }): Promise<Job> {
  const { apiKey, request } = input;
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
  const source = await openInput(apiKey, request);
  const { plan, problems, valid, total, unpinnedTemplates } = await planInput(readUploadLines(source.body, { check: bulkLineCheck(shared) }));
  if (problems.length > 0 && !request.skip_invalid) throw invalidRequest(describeProblems(problems));
  if (valid === 0) throw invalidRequest(`None of the ${total} lines is a valid batch item: ${describeProblems(problems)}`);
  if (request.archive && total > MAX_ARCHIVE_LINES) {
    throw invalidRequest(`archive is available for jobs of at most ${MAX_ARCHIVE_LINES} lines (this one has ${total}): split the job, or download its PDFs through the manifest's links`);
  }

  const store = pdfStore();
  const counters = counterStore();
  const templateVersions = await latestTemplateVersions(unpinnedTemplates, store, apiKey);
  const now = new Date();
  const reservation = await reserveOrRefuse(
    counters,
    { keyId: apiKey.keyId, monthlyQuota: limitsFor(apiKey).monthlyQuota, count: valid, now, lifetimeMs: BULK_RESERVATION_LIFETIME_MS },
    (keyId, at) => repairDeadRequestsOf({ counters, pdfs: store }, keyId, at),
  );
  const id = 'job_' + randomBase62(24);
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
        invalid: problems.length,
        chunks: plan.length,
        shards: Math.ceil(plan.length / CHUNKS_PER_SHARD),
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
    throw error;
  }
  try {
    await enqueueChunks(apiKey.keyId, chunkMessages(job, plan));
    await markBulkJobEnqueued(store, job.id);
  } catch (error) {
    // The job is stored and charged nothing yet: it is queued again, whole, by the next sweep.
    logger.error('bulk job not queued yet', { job_id: job.id, ...errorFields(error) });
  }
  return job;
}

const chunkMessages = (job: Job, plan: readonly PlannedChunk[]): ChunkMessage[] =>
  plan.map((chunk, index) => ({
    job_id: job.id,
    chunk: index,
    first: chunk.first,
    last: chunk.last,
    start: chunk.start,
    end: chunk.end,
    ...(chunk.invalid?.length && { invalid: chunk.invalid.map((problem) => problem.line) }),
  }));

/**
 * Queues again every bulk job whose submission stored it but died before its chunks were all on
 * the queue (older than `olderThanMs`): all its chunks, since chunks already queued or done are
 * harmless twice. The local stack at start-up and the reconcile function on its schedule.
 */
export async function enqueueStrandedBulkJobs(now: Date, olderThanMs: number): Promise<number> {
  const store = pdfStore();
  let queued = 0;
  for (const id of await pendingJobIds(store)) {
    const job = await getJob(store, id);
    if (!job || job.kind !== 'bulk' || job.enqueued || now.getTime() - Date.parse(job.createdAt) < olderThanMs) continue;
    await enqueueChunks(job.keyId, chunkMessages(job, await readPlan(store, job)));
    await markBulkJobEnqueued(store, job.id);
    queued++;
  }
  return queued;
}

/** Thrown for a bulk request that may not be: a field a bulk job does not take. */
export function refuseMerge(): ApiError {
  return invalidRequest('merge is not available for bulk jobs: each line is its own PDF (use a batch of up to 100 items to get one merged file)');
}
