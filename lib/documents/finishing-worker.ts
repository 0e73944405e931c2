/**
 * A finishing worker thread (started by ./pdf-workers.ts): applies a printed PDF's metadata,
 * watermark and encryption (lib/render/finishing.ts), one file at a time. Loading and saving a
 * 300-page file with pdf-lib, and encrypting it with qpdf, take a few tenths of a second of CPU that
 * would otherwise hold the event loop every customer is served by.
 *
 * In a Lambda asset this file is bundled on its own beside the function's index.mjs, as
 * finishing-worker.mjs (cdk/bundling.ts), qpdf left to the Chromium layer as in the function's bundle.
 */
import { parentPort } from 'node:worker_threads';
import type { WorkerAnswer } from '#lib/customer-code/worker-pool.ts';
import { finishPdf } from '#lib/render/finishing.ts';
import type { Finishing } from '#lib/render/finishing-options.ts';

export interface FinishingMessage {
  readonly printed: { readonly bytes: Uint8Array; readonly pages: number };
  readonly finishing: Finishing;
  readonly stamp?: Uint8Array;
}

const port = parentPort!;

port.on('message', ({ printed, finishing, stamp }: FinishingMessage) => {
  finishPdf(printed, finishing, stamp).then(
    (finished) => {
      const { bytes } = finished;
      // Handed over rather than copied when the bytes are a buffer of their own.
      const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
      port.postMessage({ type: 'done', value: finished } satisfies WorkerAnswer<typeof finished>, whole ? [bytes.buffer as ArrayBuffer] : []);
    },
    (error: unknown) =>
      port.postMessage({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies WorkerAnswer<never>),
  );
});
port.postMessage({ type: 'ready' });
