/**
 * A merge worker thread (started by ./pdf-workers.ts): joins one batch's PDFs at a time into the
 * file its caller opened, an item per message, with MergedPdfWriter. The caller owns the file (it
 * passes the descriptor and closes it), so a worker terminated mid-merge leaves nothing open.
 *
 * Messages, each answered once (lib/customer-code/worker-pool.ts `ask`): `open` a merge into a file
 * descriptor under a size limit, `append` one item's bytes, `finish` (answers its size and pages).
 * A merged file past its size limit is answered `refused` MERGE_TOO_LARGE, as on the calling thread.
 *
 * In a Lambda asset this file is bundled on its own beside the function's index.mjs, as
 * merge-worker.mjs (cdk/bundling.ts).
 */
import { writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { WorkerAnswer } from '#lib/customer-code/worker-pool.ts';
import { MergedPdfWriter, MergeRefusedError } from './merged-pdf-writer.ts';

export type MergeMessage =
  | { readonly type: 'open'; readonly fd: number; readonly maxBytes: number }
  | { readonly type: 'append'; readonly bytes: Uint8Array }
  | { readonly type: 'finish' };

export interface MergedFile {
  readonly size: number;
  readonly pages: number;
}

const port = parentPort!;
const answer = (message: WorkerAnswer<MergedFile | undefined>) => port.postMessage(message);

let writer: MergedPdfWriter | undefined;

/** Writes all of `chunk` at the descriptor's position (a write may take only part of it). */
function writeAll(fd: number, chunk: Uint8Array): void {
  for (let done = 0; done < chunk.byteLength; ) done += writeSync(fd, chunk, done);
}

async function handle(message: MergeMessage): Promise<MergedFile | undefined> {
  if (message.type === 'open') {
    const { fd } = message;
    writer = new MergedPdfWriter(async (chunk) => writeAll(fd, chunk), { maxBytes: message.maxBytes });
    return undefined;
  }
  if (!writer) throw new Error(`${message.type} before open`);
  if (message.type === 'append') {
    await writer.append(message.bytes);
    return undefined;
  }
  await writer.finish();
  const merged = { size: writer.size, pages: writer.pages };
  writer = undefined;
  return merged;
}

port.on('message', (message: MergeMessage) => {
  handle(message).then(
    (value) => answer({ type: 'done', value }),
    (error: unknown) =>
      answer(
        error instanceof MergeRefusedError
          ? { type: 'refused', code: error.code, message: error.message }
          : // Its text is for our logs; the batch answers MERGE_FAILED.
            { type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
      ),
  );
});
port.postMessage({ type: 'ready' });
