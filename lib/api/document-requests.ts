/**
 * What `POST /v1/pdf/generate` and `POST /v1/pdf/batch` do once a request is valid and its quota
 * reserved: the same whether the API function answers it at once or an asynchronous job runs it
 * (lib/jobs/jobs.ts), so a job's `result` is exactly the body the synchronous call answers.
 */
import type { ApiKey } from '#lib/accounts/keys.ts';
import type { QuotaReservation } from '#lib/accounts/quota.ts';
import { invokeRenderFunction, invokeRenderGroup } from '#lib/aws/render-invoker.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { runBatch, type BatchRun } from '#lib/documents/batch.ts';
import { MergeRefusedError, storeMergedPdf } from '#lib/documents/merge.ts';
import { producePdf, type DocumentRequest, type Making } from '#lib/documents/produce-pdf.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { settings } from '#lib/settings.ts';
import { putPdfRecord, type PdfRecord } from '#lib/storage/pdfs.ts';
import { downloadUrl, pdfRecordView } from './views.ts';

type Owner = Pick<ApiKey, 'keyId' | 'tier'>;

/** What a request produced: the response body, and how many of its reserved PDFs it did not store. */
export interface Produced<T> {
  readonly result: T;
  readonly failed: number;
}

/** One stored PDF, as generate answers it. */
export async function generateDocument(owner: Owner, request: DocumentRequest, making: Making, baseUrl: string) {
  return pdfRecordView(await producePdf(pdfStore(), owner, request, making), baseUrl);
}

export interface BatchRequest {
  readonly owner: Owner;
  /** The items, as sent: each is checked on its own. */
  readonly items: readonly unknown[];
  readonly merge: boolean;
  readonly reservation: QuotaReservation;
  readonly baseUrl: string;
  /** When unfinished items give up (epoch ms). */
  readonly deadlineAt: number;
  /** Longest one item may take. */
  readonly itemTimeoutMs: number;
  /** Render invocations in flight at once (the batch's part of its key's share); BATCH_CONCURRENCY by default. */
  readonly concurrency?: number;
  /**
   * With `merge`: the time left, when asked, before the answer is due (API Gateway's limit for a
   * synchronous batch, the run's end for a job), less what answering takes. Joining the items gets
   * no more than that (MERGE_TIMEOUT otherwise).
   */
  readonly timeLeftMs: () => number;
  /**
   * An asynchronous job's batch (lib/jobs/jobs.ts), or one sent with an Idempotency-Key
   * (lib/api/earlier-runs.ts): its PDF ids and what an earlier run of it made.
   */
  readonly madeBefore?: BatchRun['madeBefore'] & { readonly mergedPdfId: string; readonly mergedRecord: () => Promise<PdfRecord | undefined> };
}

/** A batch's items rendered in parallel by the render function, and the body batch answers. */
export async function runBatchRequest(batch: BatchRequest, started = performance.now()) {
  const store = pdfStore();
  const committed = new Map<string, PdfRecord>();
  const results = await runBatch({
    items: batch.items,
    owner: batch.owner,
    reservationId: batch.reservation.id,
    invokeRender: invokeRenderFunction,
    renderGroup: invokeRenderGroup,
    commit: async (record) => {
      const stored = await putPdfRecord(store, record);
      committed.set(stored.id, stored);
      return stored;
    },
    linkFor: (record) => downloadUrl(record, batch.baseUrl),
    concurrency: batch.concurrency ?? settings.batchConcurrency,
    itemTimeoutMs: batch.itemTimeoutMs,
    deadlineAt: batch.deadlineAt,
    ...(batch.madeBefore && { madeBefore: batch.madeBefore }),
  });
  // Items an earlier run of a job made are done too: their records are read back, not committed.
  const done: PdfRecord[] = [];
  for (const [index, result] of results.entries()) {
    if (!result.success) continue;
    done.push(committed.get(result.pdf_id) ?? ((await batch.madeBefore?.recordOf(index)) as PdfRecord));
  }
  const successful = done.length;
  // What this request's reservation paid for: the records written under it. An item an earlier run
  // of the same job made is under the same reservation (the job's); one that a dead run of the same
  // idempotent request made is under that run's reservation, which the reconcile settles by it
  // (lib/api/earlier-runs.ts explains why that charges each PDF once).
  const stored = done.filter((record) => record.reservationId === batch.reservation.id).length;
  const body = {
    success: true,
    results,
    total: results.length,
    successful,
    failed: results.length - successful,
    ...(batch.merge && (await mergedResult(batch, done))),
    processing_time_ms: Math.round(performance.now() - started),
  };
  return { result: body, failed: batch.reservation.count - stored } satisfies Produced<unknown>;
}

/**
 * `merged`: the items that succeeded, joined in input order (lib/documents/merge.ts), or null when
 * none did. The items are charged and stored whether or not joining them works; when it fails,
 * `merge_error` says so and the items' own files are there to download.
 */
async function mergedResult(batch: BatchRequest, done: readonly PdfRecord[]) {
  if (done.length === 0) return { merged: null };
  try {
    const made = await batch.madeBefore?.mergedRecord();
    const merged =
      made ??
      (await storeMergedPdf(pdfStore(), batch.owner, done, {
        ...(batch.madeBefore && { id: batch.madeBefore.mergedPdfId }),
        // The items took the batch's window; joining them has what is left of it, and not a moment more.
        signal: AbortSignal.timeout(Math.max(0, batch.timeLeftMs())),
      }));
    return { merged: pdfRecordView(merged, batch.baseUrl) };
  } catch (error) {
    if (error instanceof MergeRefusedError) return { merged: null, merge_error: { code: error.code, message: error.message } };
    logger.error('merging a batch failed', errorFields(error));
    return { merged: null, merge_error: { code: 'MERGE_FAILED', message: 'The PDFs could not be joined into one file; each item is stored on its own.' } };
  }
}
