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
import { prepareSignature, type PlaceholderInput } from '#lib/signatures/pdf-signature.ts';

export interface FinishingMessage {
  readonly printed: { readonly bytes: Uint8Array; readonly pages: number };
  readonly finishing: Finishing;
  readonly stamp?: Uint8Array;
}

/**
 * A signature's update written into a finished file (lib/signatures/pdf-signature.ts): loading the
 * file to find its catalog and page is the part that costs (0.1 s for 300 pages); the digest and
 * KMS's signature are done by the caller.
 */
export interface SignaturePreparationMessage {
  readonly prepareSignature: { readonly pdf: Uint8Array; readonly input: PlaceholderInput };
}

const port = parentPort!;

port.on('message', (message: FinishingMessage | SignaturePreparationMessage) => {
  if ('prepareSignature' in message) {
    const { pdf, input } = message.prepareSignature;
    prepareSignature(pdf, input).then(
      (prepared) => port.postMessage({ type: 'done', value: prepared } satisfies WorkerAnswer<typeof prepared>, [prepared.bytes.buffer as ArrayBuffer]),
      (error: unknown) => port.postMessage({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies WorkerAnswer<never>),
    );
    return;
  }
  const { printed, finishing, stamp } = message;
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
