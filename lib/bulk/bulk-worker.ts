/**
 * The bulk worker's work (functions/bulkWorker.ts): one message per invocation, a chunk of a bulk
 * job (each line produced by the same code as a batch item, lib/documents/render-item.ts, under the
 * job's reservation, with the PDF id its line number decides) or a job's completion
 * (lib/bulk/bulk-completion.ts). lib/bulk/bulk-submission.ts explains why the money stays exact.
 *
 * Bulk workers take no render leases of their key (lib/accounts/render-leases.ts): a key's bulk work
 * is bounded instead by the event source mapping's MaximumConcurrency (the whole bulk fleet) and
 * shared fairly with other keys by the fair queue, and it runs beside the API's renders, which the
 * leases protect, without taking from them (docs/bulk-jobs.md).
 */
import type { Context } from 'aws-lambda';
import { TIERS } from '#lib/accounts/tiers.ts';
import { isCompletionMessage, refusedAtSubmission, type BulkMessage, type ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { withPinnedVersion, type RenderItem } from '#lib/documents/batch.ts';
import { renderItem } from '#lib/documents/render-item.ts';
import { templateReader } from '#lib/documents/templates.ts';
import { getJob, jobPdfId, readJobRequest, type Job } from '#lib/jobs/job-records.ts';
import { logger } from '#lib/observability/logger.ts';
import { asKeyWork } from '#lib/render/capacity.ts';
import { settings } from '#lib/settings.ts';
import { getPdfRecordEvenDeleted, putPdfRecord } from '#lib/storage/pdfs.ts';
import { afterChunk, completeBulkJob, recordChunk } from './bulk-completion.ts';
import { readChunkLines } from './bulk-lines.ts';
import { BULK_MAX_RUN_MS, HOLD_LEASE_MS, markBulkJobRunning, releaseChunk, renewChunk, takeChunk, type LineResult } from './bulk-records.ts';
import { holdingMessage, type HeldMessage } from './message-hold.ts';
import { bulkLineCheck } from './upload-lines.ts';

/** The job's shared options, opened once per job in a worker's life. */
const sharedOptions = new Map<string, Promise<Record<string, unknown> | undefined>>();
export function optionsOf(job: Job): Promise<Record<string, unknown> | undefined> {
  let options = sharedOptions.get(job.id);
  if (!options) {
    options = readJobRequest(pdfStore(), job.requestKey).then((request) => {
      const shared = request.options as Record<string, unknown> | undefined;
      return shared && Object.keys(shared).length ? shared : undefined;
    });
    options.catch(() => sharedOptions.delete(job.id));
    if (sharedOptions.size > 100) sharedOptions.clear();
    sharedOptions.set(job.id, options);
  }
  return options;
}

/** Whether the job still wants lines started: looked up before each line, so a cancel stops new lines within one render. */
async function stillWanted(jobId: string): Promise<boolean> {
  const job = await getJob(pdfStore(), jobId);
  return Boolean(job && job.status !== 'cancelled' && job.completedAt === undefined);
}

/**
 * A chunk's lines, each once: what an earlier delivery stored counts as stored (never rendered or
 * charged again); with `render: false` (a job past its time) nothing new is started. Lines refused
 * at submission (the message names the others) are never rendered, whatever the check says now.
 */
async function runChunkLines(job: Job, chunk: ChunkMessage, render: boolean): Promise<LineResult[]> {
  const store = pdfStore();
  const refused = refusedAtSubmission(chunk);
  const results: LineResult[] = [];
  const renderTimeoutMs = Math.min(settings.renderTimeoutMs, TIERS[job.tier].jobRenderTimeoutMs);
  // The chunk's lines share their templates: each is read (and its data_schema compiled) once.
  const templates = templateReader(store, job);
  const pinnedVersions = new Map(Object.entries(job.bulk?.templateVersions ?? {}));
  for (const line of await readChunkLines(store, job, chunk, bulkLineCheck(await optionsOf(job)))) {
    if (refused(line.line)) {
      // Refused at submission: one of the job's first failures, not counted again here.
      const problem = line.error ?? { code: 'INVALID_OPTIONS' as const, message: 'The line was not a valid batch item when the job was submitted' };
      results.push({ line: line.line, success: false, code: problem.code, message: problem.message, counted: false });
      continue;
    }
    if (line.error || !line.item) {
      // Valid at submission, not now (the upload was replaced since): it fails, uncharged.
      const problem = line.error ?? { code: 'INVALID_OPTIONS' as const, message: 'The line is not a valid batch item' };
      results.push({ line: line.line, success: false, code: problem.code, message: problem.message, counted: true });
      continue;
    }
    const { metadata, ...source } = line.item;
    const pdfId = jobPdfId(job, `line-${line.line}`);
    const made = await getPdfRecordEvenDeleted(store, pdfId);
    if (made) {
      results.push({ line: line.line, success: true, record: made.record, ...(metadata !== undefined && { metadata }) });
      continue;
    }
    if (!render) {
      results.push({ line: line.line, success: false, code: 'RENDER_FAILED', message: 'The job ran longer than a bulk job may (24 hours); this line was not started and nothing was charged for it', counted: true });
      continue;
    }
    if (!(await stillWanted(job.id))) {
      results.push({ line: line.line, success: false, code: 'CANCELLED', message: 'The job was cancelled before this line started; nothing was charged for it', counted: true });
      continue;
    }
    // A line whose render fails for a passing reason (a crashed renderer) is tried once more there.
    const outcome = await renderItem(store, { owner: job, reservationId: job.reservation.id, pdfId, renderTimeoutMs, item: withPinnedVersion(source, pinnedVersions) as RenderItem['item'] }, templates);
    if (!outcome.ok) {
      results.push({ line: line.line, success: false, code: outcome.code, message: outcome.message, counted: true });
      continue;
    }
    // From here the PDF exists, is listed and is charged (under the job's reservation), once: a
    // record already written for this id (a duplicate delivery that raced this one) is the one kept.
    const record = await putPdfRecord(store, outcome.record);
    results.push({ line: line.line, success: true, record, ...(metadata !== undefined && { metadata }) });
  }
  return results;
}

/**
 * One message of the bulk queue (the bulk worker, once per message), held while it runs
 * (lib/bulk/message-hold.ts): `done` (the message may go) or `retry` (another worker has the chunk
 * or the completion now: the message comes back once its visibility runs out, and finds the work
 * done, or free if that worker died).
 */
export async function runBulkMessage(message: BulkMessage, context: Pick<Context, 'getRemainingTimeInMillis'>, held: HeldMessage): Promise<'done' | 'retry'> {
  if (isCompletionMessage(message)) return completeBulkJob(message.job_id, { force: message.force === true, context, held });
  return runChunk(message, context, held);
}

/**
 * One chunk of a bulk job. Its message is hidden for HOLD_MESSAGE_SECONDS, not the queue's 18
 * minutes, and while the chunk's lines run the worker renews that and the chunk's lease
 * (lib/bulk/message-hold.ts): a worker that dies leaves its chunk to come back within two minutes.
 */
export async function runChunk(chunk: ChunkMessage, context: Pick<Context, 'getRemainingTimeInMillis'>, held: HeldMessage): Promise<'done' | 'retry'> {
  const store = pdfStore();
  const job = await getJob(store, chunk.job_id);
  if (!job || job.kind !== 'bulk' || !job.bulk || job.completedAt !== undefined) return 'done';
  logger.appendKeys({ job_id: job.id, key_id: job.keyId });
  const lease = {
    take: () => takeChunk(store, job, chunk.chunk, HOLD_LEASE_MS),
    renew: () => renewChunk(store, job, chunk.chunk, HOLD_LEASE_MS),
    // Free for the message's next delivery, which comes soon (functions/bulkWorker.ts).
    release: () => releaseChunk(store, job, chunk.chunk),
  };
  const outcome = await holdingMessage(held, lease, async () => {
    const render = Date.now() - Date.parse(job.createdAt) <= BULK_MAX_RUN_MS;
    if (job.status === 'queued') await markBulkJobRunning(store, job.id);
    // Locally every worker shares one machine: the job's lines take turns in its key's line, within its tier's share.
    const share = { maxRunning: TIERS[job.tier].maxConcurrentRenders, maxWaitMs: Math.max(1, context.getRemainingTimeInMillis() - 60_000) };
    const results = await asKeyWork(job.keyId, share, () => runChunkLines(job, chunk, render));
    await recordChunk(job, chunk.chunk, results);
  });
  if ('refused' in outcome && outcome.refused === 'busy') return 'retry';
  // Done now, or by another delivery before: the job's completion is asked for if it was the last.
  await afterChunk(job, chunk.chunk);
  return 'done';
}
