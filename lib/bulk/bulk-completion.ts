/**
 * How a bulk job's chunks and the job itself end (lib/bulk/bulk-worker.ts renders them): a chunk's
 * results recorded once, its shard and job marked, and the job completed once its last chunk is
 * done. Kept apart from the worker so that the reconcile function, which ends the chunks every
 * delivery failed and the jobs that could not complete, does not carry the renderer.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { settleReservation } from '#lib/accounts/quota.ts';
import { downloadUrl } from '#lib/api/views.ts';
import type { ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { webhookDeps } from '#lib/jobs/job-webhooks.ts';
import type { BatchItemResult } from '#lib/documents/batch.ts';
import { getJob, jobPdfId, jobWebhookId, pendingJobIds, type Job } from '#lib/jobs/job-records.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { getPdfRecordEvenDeleted } from '#lib/storage/pdfs.ts';
import { attemptDelivery, enqueueDelivery } from '#lib/webhooks/deliveries.ts';
import { inputLines, type InputLine } from './bulk-lines.ts';
import {
  BULK_MAX_RECEIVE_COUNT,
  BULK_RESERVATION_LIFETIME_MS,
  bulkObjectKey,
  chunksInShard,
  finishBulkJob,
  finishChunk,
  isChunkDone,
  markShardFull,
  putChunkResults,
  readChunkResults,
  readPlan,
  shardDoneCount,
  shardOf,
  type LineResult,
  type PlannedChunk,
} from './bulk-records.ts';

/** Largest line: as large as a whole request body may be (lib/bulk/bulk-submission.ts checks it). */
const MAX_LINE_BYTES = 5 * 1024 * 1024;

async function* bytesOf(buffer: Buffer): AsyncGenerator<Uint8Array> {
  if (buffer.length) yield buffer;
}

/** The lines of a chunk, read back from the job's input (only if it is still the input the job was checked with). */
export async function readChunkLines(job: Job, chunk: Pick<ChunkMessage, 'first' | 'last' | 'start' | 'end'>): Promise<InputLine[]> {
  const store = pdfStore();
  let bytes: AsyncIterable<Uint8Array> = bytesOf(Buffer.alloc(0));
  if (chunk.end > chunk.start) {
    const { Body } = await store.s3.send(
      new GetObjectCommand({
        Bucket: store.bucketName,
        Key: job.bulk!.sourceKey,
        Range: `bytes=${chunk.start}-${chunk.end - 1}`,
        ...(job.bulk!.sourceEtag && { IfMatch: job.bulk!.sourceEtag }),
      }),
    );
    bytes = Body as AsyncIterable<Uint8Array>;
  }
  const lines: InputLine[] = [];
  for await (const line of inputLines(bytes, { maxLineBytes: MAX_LINE_BYTES, firstLine: chunk.first, offset: chunk.start })) lines.push(line);
  // Empty lines at the chunk's end have no bytes of their own to read back.
  for (let number = (lines.at(-1)?.number ?? chunk.first - 1) + 1; number <= chunk.last; number++) lines.push({ number, text: '', start: chunk.end, end: chunk.end });
  return lines;
}

/**
 * Ends a chunk's lines without rendering any: a line stored by an earlier delivery counts as stored,
 * a line refused at submission stays refused, every other line fails for `reason`.
 */
export async function endChunkLines(job: Job, chunk: PlannedChunk, reason: string): Promise<LineResult[]> {
  const store = pdfStore();
  const invalid = new Map((chunk.invalid ?? []).map((problem) => [problem.line, problem]));
  const results: LineResult[] = [];
  for (const line of await readChunkLines(job, chunk)) {
    const problem = invalid.get(line.number);
    if (problem) {
      results.push({ line: line.number, success: false, code: problem.code, message: problem.message, counted: false });
      continue;
    }
    const made = await getPdfRecordEvenDeleted(store, jobPdfId(job, `line-${line.number}`));
    if (made) {
      let metadata: unknown;
      try {
        metadata = (JSON.parse(line.text) as { metadata?: unknown }).metadata;
      } catch {
        metadata = undefined;
      }
      results.push({ line: line.number, success: true, record: made.record, ...(metadata !== undefined && { metadata }) });
    } else results.push({ line: line.number, success: false, code: 'RENDER_FAILED', message: reason, counted: true });
  }
  return results;
}

/** Records a chunk's results, then marks it done with its counts (once, whoever else does it too). */
export async function recordChunk(job: Job, chunk: number, results: readonly LineResult[]): Promise<void> {
  const store = pdfStore();
  await putChunkResults(store, job, chunk, results);
  const succeeded = results.filter((result) => result.success).length;
  const failed = results.filter((result) => !result.success && result.counted).length;
  await finishChunk(store, job.id, chunk, { succeeded, failed });
}

/** After a chunk is done: its shard marked full if it is, and the job completed if every shard is. Repeatable. */
export async function afterChunk(job: Job, chunk: number): Promise<void> {
  const store = pdfStore();
  const shard = shardOf(chunk);
  if ((await shardDoneCount(store, job.id, shard)) < chunksInShard(shard, job.bulk!.chunks)) return;
  if ((await markShardFull(store, job.id, shard)) < job.bulk!.shards) return;
  await completeBulkJob(job.id);
}

/**
 * Ends a chunk that every delivery failed (the reconcile function, from the bulk queue's dead-letter
 * queue): its lines already stored count as stored, the others fail, and its job completes if it was
 * the last.
 */
export async function giveUpChunk(chunk: ChunkMessage): Promise<void> {
  const store = pdfStore();
  const job = await getJob(store, chunk.job_id);
  if (!job || job.kind !== 'bulk' || !job.bulk || job.completedAt !== undefined) return;
  if (!(await isChunkDone(store, job.id, chunk.chunk))) {
    const planned = (await readPlan(store, job))[chunk.chunk] ?? chunk;
    const reason = `This line failed on each of its ${BULK_MAX_RECEIVE_COUNT} tries (its renderer crashed or ran out of time); nothing was charged for it`;
    await recordChunk(job, chunk.chunk, await endChunkLines(job, planned, reason));
  }
  await afterChunk(job, chunk.chunk);
}

/**
 * A line as the manifest shows it: its number and its batch item result (a stored PDF, or the error,
 * whose code is a batch item's, or CANCELLED for a line a cancelled job never started).
 */
type ManifestLine = { readonly line: number } & (
  | Extract<BatchItemResult, { success: true }>
  | { readonly success: false; readonly error: { readonly code: string; readonly message: string } }
);

function manifestLine(result: LineResult, baseUrl: string): ManifestLine {
  if (!result.success) return { line: result.line, success: false, error: { code: result.code, message: result.message } };
  return {
    line: result.line,
    success: true,
    pdf_id: result.record.id,
    download_url: downloadUrl(result.record, baseUrl),
    pages: result.record.pages,
    size_bytes: result.record.size,
    metadata: result.metadata ?? {},
  };
}

/**
 * Completes, as given up, every unfinished bulk job whose reservation has expired: what its chunks
 * stored is in its manifest and charged, the rest fails. The reconcile runs it beside lib/jobs'
 * abandonExpiredJobs, which leaves bulk jobs to this.
 */
export async function completeExpiredBulkJobs(now: Date): Promise<number> {
  let completed = 0;
  for (const id of await pendingJobIds(pdfStore())) {
    const job = await getJob(pdfStore(), id);
    if (job?.kind !== 'bulk' || now.getTime() - Date.parse(job.createdAt) < BULK_RESERVATION_LIFETIME_MS) continue;
    await completeBulkJob(id, { force: true });
    completed++;
  }
  return completed;
}

/**
 * Completes a bulk job whose every chunk is done (or, `force`, one the reconcile function gives up
 * on: chunks that never got done have their unstored lines failed): the manifest written (one line
 * per input line, in order), the reservation settled to exactly the PDFs stored, the webhook queued,
 * the job recorded as ended, once. Any step may be run again by another caller without effect.
 */
export async function completeBulkJob(jobId: string, { force = false }: { force?: boolean } = {}): Promise<void> {
  const store = pdfStore();
  const job = await getJob(store, jobId);
  if (!job || job.kind !== 'bulk' || !job.bulk || job.completedAt !== undefined) return;
  const plan = force ? await readPlan(store, job) : [];
  const manifest: string[] = [];
  let succeeded = 0;
  for (let chunk = 0; chunk < job.bulk.chunks; chunk++) {
    let results = await readChunkResults(store, job, chunk);
    if (!results) {
      if (!force) throw new Error(`chunk ${chunk} of ${job.id} is done but its results are missing`);
      results = await endChunkLines(job, plan[chunk]!, 'The job could not be completed; this line was not stored and nothing was charged for it');
    }
    for (const result of results) {
      if (result.success) succeeded++;
      manifest.push(JSON.stringify(manifestLine(result, job.baseUrl)));
    }
  }
  const failed = job.bulk.total - succeeded;
  await store.s3.send(
    new PutObjectCommand({ Bucket: store.bucketName, Key: bulkObjectKey(job, 'manifest.jsonl'), Body: manifest.join('\n') + '\n', ContentType: 'application/x-ndjson' }),
  );
  // Exactly the PDFs stored are charged: what the reservation holds beyond them goes back, once.
  await settleReservation(counterStore(), job.reservation, job.reservation.count - succeeded);
  const completedAt = new Date();
  const delivery = job.webhookUrl
    ? await enqueueDelivery(webhookDeps().store, { id: jobWebhookId(job), keyId: job.keyId, jobId: job.id, url: job.webhookUrl, now: completedAt })
    : undefined;
  const result = { manifest_url: `${job.baseUrl}/v1/jobs/${job.id}/manifest`, succeeded, failed };
  if (!(await finishBulkJob(store, job, { status: force ? 'failed' : 'succeeded', result, succeeded, failed, completedAt }))) return;
  logger.info('bulk job finished', { job_id: job.id, succeeded, failed });
  if (delivery) await attemptDelivery(webhookDeps(), delivery).catch((error: unknown) => logger.error('webhook delivery failed', errorFields(error)));
}
