/**
 * How a bulk job's chunks and the job itself end (lib/bulk/bulk-worker.ts renders them): a chunk's
 * results recorded once, its shard and job marked, and, once the last chunk is done, the job's
 * completion asked for on the bulk queue (lib/aws/bulk-queue.ts), where a worker invocation of its
 * own completes it: manifest, archive, money, webhook. Kept apart from the worker so that the
 * reconcile function, which ends the chunks every delivery failed and the jobs that could not
 * complete, does not carry the renderer.
 */
import type { Context } from 'aws-lambda';
import { settleReservation } from '#lib/accounts/quota.ts';
import { downloadUrl } from '#lib/api/views.ts';
import { enqueueCompletion, refusedAtSubmission, type ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import type { BatchItemResult } from '#lib/documents/batch.ts';
import { deleteJobRequest, getJob, jobPdfId, jobWebhookId, pendingJobIds, type Job } from '#lib/jobs/job-records.ts';
import { webhookDeps } from '#lib/jobs/job-webhooks.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { contentTypeOf, getPdfRecordEvenDeleted } from '#lib/storage/pdfs.ts';
import { attemptDelivery, enqueueDelivery } from '#lib/webhooks/deliveries.ts';
import { readChunkLines, type ChunkRange } from './bulk-lines.ts';
import {
  BULK_MAX_RECEIVE_COUNT,
  BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS,
  BULK_RESERVATION_LIFETIME_MS,
  HOLD_LEASE_MS,
  chunksInShard,
  finishBulkJob,
  finishChunk,
  isChunkDone,
  markShardFull,
  putChunkResults,
  readChunkResults,
  readPlan,
  releaseCompletion,
  renewCompletion,
  shardDoneCount,
  shardOf,
  takeCompletion,
  type LineResult,
  type PlannedChunk,
  type PlannedProblem,
} from './bulk-records.ts';
import { holdingMessage, type HeldMessage } from './message-hold.ts';
import { chunkResults, writeBulkArchive, writeBulkManifest } from './result-files.ts';
import type { LineCheck } from './upload-lines.ts';
import { deleteUpload } from './uploads.ts';
import type { ManifestLine } from './manifest.ts';

/**
 * What a completion keeps of its invocation's time for what follows the archive (settling, the
 * webhook, recording the job): an archive still being written this close to the end is given up.
 */
const AFTER_ARCHIVE_MS = 60_000;

/** Reads a line for its metadata alone: nothing is rendered from it (the reconcile function cannot open a job's shared options). */
const metadataOnly: LineCheck<Record<string, unknown>> = (text) => {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { item: parsed as Record<string, unknown> };
  } catch {
    // Not JSON: no metadata.
  }
  return { problem: { code: 'INVALID_OPTIONS', message: 'The line is not a JSON object' } };
};

/**
 * Ends a chunk's lines without rendering any: a line stored by an earlier delivery counts as stored,
 * a line refused at submission stays refused (named by the plan with its problem, or by the chunk's
 * message: its valid lines, or, in a message of an earlier version, its refused ones), every other
 * line fails for `reason`.
 */
export async function endChunkLines(
  job: Job,
  chunk: ChunkRange & { readonly invalid?: PlannedChunk['invalid'] | ChunkMessage['invalid']; readonly valid?: ChunkMessage['valid'] },
  reason: string,
): Promise<LineResult[]> {
  const store = pdfStore();
  const planned = new Map<number, PlannedProblem>();
  const numbered = new Set<number>();
  for (const entry of chunk.invalid ?? []) {
    if (typeof entry === 'number') numbered.add(entry);
    else planned.set(entry.line, entry);
  }
  const refused = chunk.valid ? refusedAtSubmission({ valid: chunk.valid }) : (line: number) => planned.has(line) || numbered.has(line);
  const results: LineResult[] = [];
  for (const line of await readChunkLines(store, job, chunk, metadataOnly)) {
    if (refused(line.line)) {
      const problem = planned.get(line.line) ?? line.error ?? { code: 'INVALID_OPTIONS' as const, message: 'The line was not a valid batch item when the job was submitted' };
      results.push({ line: line.line, success: false, code: problem.code, message: problem.message, counted: false });
      continue;
    }
    const made = await getPdfRecordEvenDeleted(store, jobPdfId(job, `line-${line.line}`));
    const metadata = line.item?.metadata;
    if (made) results.push({ line: line.line, success: true, record: made.record, ...(metadata !== undefined && { metadata }) });
    else results.push({ line: line.line, success: false, code: 'RENDER_FAILED', message: reason, counted: true });
  }
  return results;
}

/** Records a chunk's results, then marks it done with its counts (once, whoever else does it too). */
export async function recordChunk(job: Job, chunk: number, results: readonly LineResult[]): Promise<void> {
  const store = pdfStore();
  await putChunkResults(store, job, chunk, results);
  const succeeded = results.filter((result) => result.success).length;
  const failed = results.filter((result) => !result.success && result.counted).length;
  await finishChunk(store, job, chunk, { succeeded, failed });
}

/**
 * After a chunk is done: its shard marked full if it is, and the job's completion asked for if every
 * shard is. Repeatable: a duplicate delivery of the last chunk asks again, and the completion of a
 * job already complete changes nothing.
 */
export async function afterChunk(job: Job, chunk: number): Promise<void> {
  const store = pdfStore();
  const shard = shardOf(job.bulk!, chunk);
  if ((await shardDoneCount(store, job, shard)) < chunksInShard(job.bulk!, shard)) return;
  if ((await markShardFull(store, job.id, shard)) < job.bulk!.shards) return;
  await enqueueCompletion(job.id);
}

/**
 * Ends a chunk that every delivery failed (the reconcile function, from the bulk queue's dead-letter
 * queue): its lines already stored count as stored, the others fail, and its job's completion is
 * asked for if it was the last.
 */
export async function giveUpChunk(chunk: ChunkMessage): Promise<void> {
  const store = pdfStore();
  const job = await getJob(store, chunk.job_id);
  if (!job || job.kind !== 'bulk' || !job.bulk || job.completedAt !== undefined) return;
  if (!(await isChunkDone(store, job, chunk.chunk))) {
    const planned = (await readPlan(store, job))?.[chunk.chunk] ?? chunk;
    const reason = `This line failed on each of its ${BULK_MAX_RECEIVE_COUNT} tries (its renderer crashed or ran out of time); nothing was charged for it`;
    await recordChunk(job, chunk.chunk, await endChunkLines(job, planned, reason));
  }
  await afterChunk(job, chunk.chunk);
}

/**
 * A line as the manifest shows it: its number and its batch item result (a stored PDF or picture,
 * with its `content_type`, or its error).
 */
export function manifestLine(result: LineResult, baseUrl: string): ManifestLine {
  if (!result.success) return { line: result.line, success: false, error: { code: result.code, message: result.message } };
  return {
    line: result.line,
    success: true,
    pdf_id: result.record.id,
    download_url: downloadUrl(result.record, baseUrl),
    pages: result.record.pages,
    size_bytes: result.record.size,
    metadata: result.metadata ?? {},
    // What the line made (a PDF, or a picture of `"output": "image"`), so a reader names its file right.
    content_type: contentTypeOf(result.record),
  } satisfies { line: number } & Extract<BatchItemResult, { success: true }>;
}

/**
 * Asks for the completion, as given up, of every unfinished bulk job whose reservation has expired:
 * what its chunks stored is in its manifest and charged, the rest fails. The reconcile runs it beside
 * lib/jobs' abandonExpiredJobs, which leaves bulk jobs to this; until such a job has completed, each
 * run asks again (the completion's lease keeps one worker at it). Each job on its own: one job's
 * error is logged and counted in `errors`, and the others are still asked for.
 */
export async function completeExpiredBulkJobs(now: Date): Promise<{ asked: number; errors: number }> {
  let asked = 0;
  let errors = 0;
  for (const id of await pendingJobIds(pdfStore())) {
    try {
      const job = await getJob(pdfStore(), id);
      if (job?.kind !== 'bulk' || now.getTime() - Date.parse(job.createdAt) < BULK_RESERVATION_LIFETIME_MS) continue;
      await enqueueCompletion(id, { force: true });
      asked++;
    } catch (error) {
      errors++;
      logger.error('expired bulk job not completed; the next sweep asks again', { job_id: id, ...errorFields(error) });
    }
  }
  return { asked, errors };
}

class ArchiveOutOfTime extends Error {
  override readonly name = 'ArchiveOutOfTime';
}

/** The results, stopping with ArchiveOutOfTime once `deadline` (epoch ms) has passed. */
async function* until(deadline: number, results: AsyncIterable<LineResult>): AsyncGenerator<LineResult> {
  for await (const result of results) {
    if (Date.now() > deadline) throw new ArchiveOutOfTime();
    yield result;
  }
}

/**
 * Completes a bulk job (a completion message; `force` for one the reconcile function gives up on:
 * chunks that never got done have their unstored lines failed), one worker at a time (a lease):
 * the manifest written (one line per input line, in order, streamed from the chunks' results), the
 * archive with `archive: true` (streamed from the stored PDFs; given up, with `archive_error`, when it
 * cannot be written in the invocation's time, or without one: the dead-letter fallback), the
 * reservation settled to exactly the PDFs stored, the webhook queued, the job recorded as ended,
 * once. Any step may be run again by another caller without effect. `retry`: another worker has it.
 *
 * The completion's lease and its message (`held`, the bulk worker's) are held as a chunk's are
 * (lib/bulk/message-hold.ts): a worker that crashes or times out leaves the completion to come back
 * within two minutes. A message that finds the completion busy is a duplicate (the last chunk
 * delivered twice, or asked for again by the reconcile function): the worker at it holds its own
 * message, which comes back if that worker dies, so this one waits the queue's whole visibility
 * timeout, by when that worker has ended, instead of coming back every two minutes towards the
 * dead-letter queue while a long archive is written.
 */
export async function completeBulkJob(
  jobId: string,
  { force = false, context, held }: { force?: boolean; context?: Pick<Context, 'getRemainingTimeInMillis'>; held?: HeldMessage } = {},
): Promise<'done' | 'retry'> {
  const store = pdfStore();
  const job = await getJob(store, jobId);
  if (!job || job.kind !== 'bulk' || !job.bulk || job.completedAt !== undefined) return 'done';
  logger.appendKeys({ job_id: job.id, key_id: job.keyId });
  const lease = {
    take: () => takeCompletion(store, job.id, HOLD_LEASE_MS),
    renew: () => renewCompletion(store, job.id, HOLD_LEASE_MS),
    release: () => releaseCompletion(store, job.id),
  };
  const outcome = await holdingMessage(held, lease, () => completeHeldJob(job, { force, context }));
  if (!('refused' in outcome)) return 'done';
  await held?.hide(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS).catch((error: unknown) => logger.warn('busy bulk completion’s message back at its hold’s end', errorFields(error)));
  return 'retry';
}

/** completeBulkJob's steps, its lease held. */
async function completeHeldJob(job: Job, { force, context }: { force: boolean; context: Pick<Context, 'getRemainingTimeInMillis'> | undefined }): Promise<void> {
  const store = pdfStore();
  const bulk = job.bulk!;
  const plan = force ? ((await readPlan(store, job)) ?? []) : [];
  const read = async (chunk: number): Promise<readonly LineResult[]> => {
    const results = await readChunkResults(store, job, chunk);
    if (results) return results;
    if (!force) throw new Error(`chunk ${chunk} of ${job.id} is done but its results are missing`);
    const planned = plan[chunk];
    if (!planned) throw new Error(`chunk ${chunk} of ${job.id} has no results, and the job's plan does not name its lines`);
    return endChunkLines(job, planned, 'The job could not be completed in its time; this line was not stored and nothing was charged for it');
  };
  const lines = async function* () {
    for await (const result of chunkResults(bulk.chunks, read)) yield manifestLine(result, job.baseUrl);
  };
  const manifest = await writeBulkManifest(store, job, lines());
  if (manifest.lines !== bulk.total) throw new Error(`the manifest of ${job.id} has ${manifest.lines} lines for ${bulk.total} input lines`);
  const { succeeded } = manifest;
  const failed = bulk.total - succeeded;

  let archive: { archive_url: string } | { archive_error: { code: 'ARCHIVE_FAILED'; message: string } } | undefined;
  if (bulk.archive) {
    if (!context) {
      archive = { archive_error: { code: 'ARCHIVE_FAILED', message: 'The archive could not be written (the job could not be completed normally); download the PDFs through the manifest' } };
    } else {
      const deadline = Date.now() + context.getRemainingTimeInMillis() - AFTER_ARCHIVE_MS;
      try {
        const written = await writeBulkArchive(store, job, until(deadline, chunkResults(bulk.chunks, read)));
        if (written.missing.length > 0) logger.warn('bulk archive left out PDFs deleted while the job ran', { missing: written.missing.length });
        archive = { archive_url: `${job.baseUrl}/v1/jobs/${job.id}/archive` };
      } catch (error) {
        if (!(error instanceof ArchiveOutOfTime)) throw error;
        logger.warn('bulk archive given up: out of time', { succeeded });
        archive = {
          archive_error: { code: 'ARCHIVE_FAILED', message: `The archive of ${succeeded} PDFs could not be written in the time one worker has; download the PDFs through the manifest` },
        };
      }
    }
  }

  // Exactly the PDFs stored are charged: what the reservation holds beyond them goes back, once.
  await settleReservation(counterStore(), job.reservation, job.reservation.count - succeeded);
  const completedAt = new Date();
  const delivery = job.webhookUrl
    ? await enqueueDelivery(webhookDeps().store, { id: jobWebhookId(job), keyId: job.keyId, jobId: job.id, url: job.webhookUrl, now: completedAt })
    : undefined;
  const result = { manifest_url: `${job.baseUrl}/v1/jobs/${job.id}/manifest`, ...archive, succeeded, failed };
  if (await finishBulkJob(store, job, { status: force ? 'failed' : 'succeeded', result, succeeded, failed, completedAt })) {
    logger.info('bulk job finished', { succeeded, failed });
    // Its sealed shared options outlive no job (a late duplicate of a chunk finds the job ended first).
    await deleteJobRequest(store, job.requestKey).catch((error: unknown) => logger.warn('job request not removed', errorFields(error)));
    // Nor its input (the upload's claim stays: the upload cannot back another job).
    await deleteUpload(store, job, bulk.uploadId).catch((error: unknown) => logger.warn('bulk upload not removed', errorFields(error)));
    if (delivery) await attemptDelivery(webhookDeps(), delivery).catch((error: unknown) => logger.error('webhook delivery failed', errorFields(error)));
  }
}
