/**
 * The PDF work of a request that takes seconds of CPU runs in worker threads, never on the event
 * loop that serves every customer (issue #39): joining a batch's PDFs (6.8 s of CPU for 100 items
 * of 300 pages, in one block per item, when it ran on the loop) and finishing a printed PDF
 * (metadata, watermark, encryption: about 0.2 s for 300 pages). Each has a pool of its own
 * (lib/customer-code/worker-pool.ts: bounded workers shared per key like render slots, a key never
 * holding every worker), so a key's long merge never delays its own or anyone's finishing.
 *
 * lib/render stays free of threads: renderPdf takes the finishing step as a parameter, given here.
 */
import { workerFile } from '#lib/customer-code/bounded-worker.ts';
import { ask, BoundedWorkerPool, WorkerRefusalError, WorkerStoppedError } from '#lib/customer-code/worker-pool.ts';
import { DocumentError } from '#lib/render/errors.ts';
import type { FinishPdf } from '#lib/render/finishing.ts';
import type { FinishingMessage, SignaturePreparationMessage } from './finishing-worker.ts';
import type { PlaceholderInput, PreparedSignature } from '#lib/signatures/pdf-signature.ts';
import type { MergedFile, MergeMessage } from './merge-worker.ts';
import { MergeRefusedError, type MergeRefusal } from './merged-pdf-writer.ts';
import { BUNDLED_FINISHING_WORKER_NAME, BUNDLED_MERGE_WORKER_NAME, FINISHING_WORKER_SOURCE, MERGE_WORKER_SOURCE } from './pdf-worker-files.ts';

/**
 * A PDF worker's JavaScript heap (old generation), in MB. A worker holds one PDF parsed at a time:
 * an item being joined, or a file being finished, at most MAX_PDF_BYTES (100 MB) and in practice a
 * few MB; pdf-lib's objects for a file take a few times its size.
 */
export const PDF_WORKER_HEAP_MB = 1_024;
const PDF_WORKER_YOUNG_HEAP_MB = 64;

/**
 * Wall-clock time finishing one printed PDF may take: 0.2 to 0.3 s for 300 pages on an idle core,
 * a few seconds for the longest document (MAX_PDF_PAGES) beside Chromium on a crowded one. Past it
 * the document fails RENDER_TIMEOUT, uncharged. A merge has no limit of its own: it has what is
 * left of its request's time (lib/api/document-requests.ts), and is stopped when that runs out.
 */
export const FINISHING_TIME_LIMIT_MS = 30_000;

const MERGE_WORKER_FILE = workerFile(import.meta.url, BUNDLED_MERGE_WORKER_NAME, MERGE_WORKER_SOURCE);
const FINISHING_WORKER_FILE = workerFile(import.meta.url, BUNDLED_FINISHING_WORKER_NAME, FINISHING_WORKER_SOURCE);

let merging: BoundedWorkerPool | undefined;
let finishing: BoundedWorkerPool | undefined;

/** This process's merge workers, made on first use. A merge waits for one as long as its request's time allows. */
export function mergePool(): BoundedWorkerPool {
  merging ??= new BoundedWorkerPool({ file: MERGE_WORKER_FILE, heapMb: PDF_WORKER_HEAP_MB, youngHeapMb: PDF_WORKER_YOUNG_HEAP_MB, maxWaitMs: Number.POSITIVE_INFINITY });
  return merging;
}

/**
 * This process's finishing workers, made on first use. A document waits for one without limit: it
 * holds a render slot meanwhile, so there are never more waiting than render slots, and each ahead
 * of it ends within FINISHING_TIME_LIMIT_MS.
 */
export function finishingPool(): BoundedWorkerPool {
  finishing ??= new BoundedWorkerPool({ file: FINISHING_WORKER_FILE, heapMb: PDF_WORKER_HEAP_MB, youngHeapMb: PDF_WORKER_YOUNG_HEAP_MB, maxWaitMs: Number.POSITIVE_INFINITY });
  return finishing;
}

/**
 * Joins `items` (each a PDF's bytes, in order) in a merge worker, on `keyId`'s share, into the file
 * open for writing at `fd` (the caller's: it closes it). Rejects with MergeRefusedError
 * MERGE_TOO_LARGE as soon as the file would pass `maxBytes`; once `signal` aborts, the worker is
 * stopped wherever it is and this rejects (the caller names it MERGE_TIMEOUT).
 *
 * Reading and joining overlap: the first item is read while a worker is found, and each next one
 * while the one before is joined, so at most two items are in memory (one here, one in the worker).
 */
export async function mergeInWorker(
  keyId: string,
  fd: number,
  items: AsyncIterable<Uint8Array>,
  { maxBytes, signal, pool = mergePool() }: { maxBytes: number; signal?: AbortSignal; pool?: BoundedWorkerPool },
): Promise<MergedFile> {
  const options = signal ? { signal } : {};
  const iterator = items[Symbol.asyncIterator]();
  const ahead = () => {
    const next = iterator.next();
    // Its failure is met where it is awaited, or not at all once the merge has ended another way.
    next.catch(() => {});
    return next;
  };
  let next = ahead();
  try {
    return await pool.use(
      keyId,
      async (thread) => {
        await ask(thread, { type: 'open', fd, maxBytes } satisfies MergeMessage, options);
        for (let item = await next; !item.done; item = await next) {
          next = ahead();
          const bytes = item.value;
          // Handed over, not copied, when the bytes are a buffer of their own (they are not used here again).
          const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
          await ask(thread, { type: 'append', bytes } satisfies MergeMessage, { ...options, ...(own && { transfer: [bytes.buffer as ArrayBuffer] }) });
        }
        return await ask<MergedFile>(thread, { type: 'finish' } satisfies MergeMessage, options);
      },
      options,
    );
  } catch (error) {
    if (error instanceof WorkerRefusalError) throw new MergeRefusedError(error.code as MergeRefusal, error.message);
    throw error;
  } finally {
    // Stops reading what is left (after the read under way, if any).
    iterator.return?.().catch(() => {});
  }
}

/**
 * The finishing step of renderPdf (lib/render/finishing.ts finishPdf) run in a finishing worker, on
 * `keyId`'s share, for documents of that key.
 */
export function finishInWorker(keyId: string, pool: BoundedWorkerPool = finishingPool()): FinishPdf {
  return (printed, finishingOptions, stamp) =>
    pool
      .use(keyId, (thread) =>
        ask<{ bytes: Uint8Array; pages: number }>(thread, { printed, finishing: finishingOptions, ...(stamp && { stamp }) } satisfies FinishingMessage, {
          timeLimitMs: FINISHING_TIME_LIMIT_MS,
        }),
      )
      .catch((error: unknown) => {
        if (error instanceof WorkerStoppedError && error.reason === 'late') {
          throw new DocumentError('RENDER_TIMEOUT', `Finishing the PDF (its metadata, watermark or encryption) took longer than the limit of ${FINISHING_TIME_LIMIT_MS} ms`, { cause: error });
        }
        throw error;
      });
}

/**
 * A signature's update written into a finished PDF (lib/signatures/pdf-signature.ts prepareSignature)
 * in a finishing worker, on `keyId`'s share: the file is parsed there, not on the event loop.
 */
export function prepareSignatureInWorker(keyId: string, pool: BoundedWorkerPool = finishingPool()): (pdf: Uint8Array, input: PlaceholderInput) => Promise<PreparedSignature> {
  return (pdf, input) =>
    pool
      .use(keyId, (thread) => ask<PreparedSignature>(thread, { prepareSignature: { pdf, input } } satisfies SignaturePreparationMessage, { timeLimitMs: FINISHING_TIME_LIMIT_MS }))
      .catch((error: unknown) => {
        if (error instanceof WorkerStoppedError && error.reason === 'late') {
          throw new DocumentError('RENDER_TIMEOUT', `Preparing the PDF's signature took longer than the limit of ${FINISHING_TIME_LIMIT_MS} ms`, { cause: error });
        }
        throw error;
      });
}
