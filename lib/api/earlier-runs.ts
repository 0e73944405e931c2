/**
 * What an earlier run of the same `Idempotency-Key` request left, and what the next run or a replay
 * makes of it (lib/api/idempotency.ts).
 *
 * A request sent with a key gives its PDFs ids derived from a seed kept with the key, the same on
 * every run of it. So when a run dies after storing some of its PDFs (a crash, kill -9, a lost
 * container), the retry that runs once the dead run's in-progress record lapses finds them and
 * adopts them, in place, instead of making them again; it renders only what is missing.
 *
 * Why that charges each PDF of one logical request exactly once:
 * - A PDF is charged to the quota reservation its record names (lib/accounts/quota.ts). The dead
 *   run's reservation is settled by the reconcile (lib/accounts/reconcile.ts) with exactly the
 *   records written under it, the adopted ones included: adopting rewrites nothing, so they stay
 *   the dead run's, charged once there.
 * - The retry reserves only the items no earlier run made (`toMake`), and settles by the records
 *   written under its own reservation (lib/api/document-requests.ts): an adopted PDF is neither
 *   reserved nor charged by it. Its new PDFs are charged to it, once.
 * - The dead run stores nothing after the retry starts: the retry runs only once the dead run's
 *   in-progress record lapsed, which Powertools sets to the end of its function's time (Lambda has
 *   ended it by then), and a batch's records are written by the batch function itself, never by its
 *   render invocations (a late render only rewrites an unreferenced file under the same id).
 * - The retry runs under Powertools' lock: no two runs of one request at once.
 * So one logical request costs the PDFs it stored, whichever run stored them, and the dead run's
 * PDFs are in the retry's answer, not orphans. Until the reconcile settles the dead run's
 * reservation it still holds what it reserved: locally that is at start-up, at once; in AWS when the
 * reservation expires (5 minutes), or sooner when the key would be refused for quota. Between the
 * two, usage shows up to the dead run's whole reservation more than the PDFs stored.
 *
 * An `async: true` request's job id derives from the seed too: a run after one that died having
 * queued the job answers that job (its status now) rather than queueing, and charging, another.
 *
 * A PDF the dead run stored and the customer deleted since (an orphan they tidied away before
 * retrying) is not made again: the same id cannot be reused, and it was charged. Its item answers
 * `PDF_GONE`, a generate 410 `pdf_gone`, as a replay of a deleted PDF does.
 */
import { documentIdFor, outputOf } from '#lib/documents/source.ts';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { getJob, type Job } from '#lib/jobs/job-records.ts';
import { getPdfRecord, getPdfRecordEvenDeleted, type PdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
import type { BatchRequest } from './document-requests.ts';
import { ApiError } from './errors.ts';
import { REPLAYED_HEADER } from './idempotency-key.ts';
import type { RequestIds } from './middlewares.ts';

/** What an earlier run made under this id: its record, `gone` when deleted or expired since, or nothing. */
export async function earlierPdf(store: PdfStore, keyId: string, pdfId: string, now = new Date()): Promise<PdfRecord | 'gone' | undefined> {
  const found = await getPdfRecordEvenDeleted(store, pdfId);
  if (!found) return undefined;
  // Ids derive from a seed of the key's own: another key's record under one is not possible.
  if (found.record.keyId !== keyId) throw new Error(`PDF id ${pdfId} belongs to another key`);
  return found.deleted || Date.parse(found.record.expiresAt) <= now.getTime() ? 'gone' : found.record;
}

/** 410 `pdf_gone`: the PDF a request made was deleted (or has expired) since. */
export function pdfGone(pdfId: string, { replayed }: { replayed: boolean }): ApiError {
  return new ApiError(
    'pdf_gone',
    `The PDF this request made (${pdfId}) was deleted or has expired since; it was charged once. Send a new Idempotency-Key to make it again.`,
    { extra: { pdf_id: pdfId }, ...(replayed && { headers: { [REPLAYED_HEADER]: 'true' } }) },
  );
}

/**
 * A batch's items as an earlier run of the same request left them: what runBatchRequest adopts
 * (`madeBefore`), and how many items still need a PDF, which is what the run reserves.
 */
export async function earlierBatch(
  store: PdfStore,
  keyId: string,
  items: readonly unknown[],
  requestIds: RequestIds,
): Promise<{ madeBefore: NonNullable<BatchRequest['madeBefore']>; toMake: number }> {
  // A picture's id differs from a PDF's by its prefix only (documentIdFor).
  const ids = items.map((item, index) => documentIdFor(outputOf(item), requestIds.pdfId(`item-${index}`)));
  const made = await Promise.all(ids.map((id) => earlierPdf(store, keyId, id)));
  const mergedPdfId = requestIds.pdfId('merged');
  return {
    toMake: made.filter((item) => item === undefined).length,
    madeBefore: {
      pdfIdOf: (index) => ids[index]!,
      recordOf: async (index) => made[index],
      mergedPdfId,
      mergedRecord: () => getPdfRecord(store, mergedPdfId),
    },
  };
}

/**
 * The job an earlier run of the same `async: true` request submitted under its id, if any: a run
 * that died after queueing it (before its response was kept) must not queue, and charge, a second.
 */
export async function earlierJob(store: PdfStore, keyId: string, jobId: string): Promise<Job | undefined> {
  const job = await getJob(store, jobId);
  if (job && job.keyId !== keyId) throw new Error(`job id ${jobId} belongs to another key`);
  return job;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A kept response, as it is now: an accepted job's `status` is the job's current one (not the
 * `queued` it was accepted with), and a PDF deleted or expired since is said to be gone rather than
 * answered with a dead link: a generate is 410 `pdf_gone`, a batch item `PDF_GONE` (the batch's
 * counts follow its items), a merged file `merge_error` `PDF_GONE`. Anything else is as it was.
 */
export async function refreshReplay(store: PdfStore, keyId: string, replay: APIGatewayProxyResult): Promise<APIGatewayProxyResult> {
  let body: unknown;
  try {
    body = JSON.parse(replay.body);
  } catch {
    return replay;
  }
  if (!isObject(body)) return replay;
  const now = new Date();

  if (replay.statusCode === 202 && typeof body.job_id === 'string') {
    const job = await getJob(store, body.job_id);
    if (!job || job.keyId !== keyId || job.status === body.status) return replay;
    return { ...replay, body: JSON.stringify({ ...body, status: job.status }) };
  }
  if (replay.statusCode !== 200) return replay;

  if (Array.isArray(body.results)) {
    const gone = async (id: unknown) => typeof id === 'string' && (await earlierPdf(store, keyId, id, now)) === 'gone';
    let changed = false;
    const results = await Promise.all(
      body.results.map(async (item: unknown) => {
        if (!isObject(item) || item.success !== true || !(await gone(item.pdf_id))) return item;
        changed = true;
        return { success: false, error: { code: 'PDF_GONE', message: `The PDF made for this item (${String(item.pdf_id)}) was deleted or has expired since; it was charged once` } };
      }),
    );
    const mergedGone = isObject(body.merged) && (await gone(body.merged.id));
    if (!changed && !mergedGone) return replay;
    const successful = results.filter((item) => isObject(item) && item.success === true).length;
    const refreshed: Json = { ...body, results, successful, failed: results.length - successful };
    if (mergedGone) {
      refreshed.merged = null;
      refreshed.merge_error = { code: 'PDF_GONE', message: `The merged file (${String((body.merged as Json).id)}) was deleted or has expired since` };
    }
    return { ...replay, body: JSON.stringify(refreshed) };
  }

  if (typeof body.id === 'string' && typeof body.url === 'string' && (await earlierPdf(store, keyId, body.id, now)) === 'gone') {
    throw pdfGone(body.id, { replayed: true });
  }
  return replay;
}
