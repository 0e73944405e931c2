/**
 * An upload-check worker thread (started by ./upload-check-pool.ts): reads and checks one bulk
 * job's input at a time (./upload-check.ts), its bytes arriving on its port as the caller streams
 * them from S3. It asks for each next piece (`more`) only once it has read the last, so no more
 * than the caller's window of bytes ever waits here; it answers `done` as soon as it knows, which
 * may be long before the input's end (too many invalid lines, too large): the caller then stops
 * streaming.
 *
 * In a Lambda asset this file is bundled on its own, beside the function's index.mjs, as
 * upload-check-worker.mjs (cdk/bundling.ts).
 */
import { parentPort } from 'node:worker_threads';
import { planInput, type UploadCheck } from './upload-check.ts';
import { bulkLineCheck, readUploadLines } from './upload-lines.ts';

export type UploadCheckRequest =
  | { readonly type: 'start'; readonly shared?: Readonly<Record<string, unknown>> | undefined; readonly skipInvalid: boolean }
  | { readonly type: 'bytes'; readonly bytes: Uint8Array }
  | { readonly type: 'end' };

export type UploadCheckReply =
  | { readonly type: 'ready' }
  | { readonly type: 'more' }
  | { readonly type: 'done'; readonly check: UploadCheck }
  | { readonly type: 'failed'; readonly error: string };

const port = parentPort!;
const send = (message: UploadCheckReply) => port.postMessage(message);

/** The input being read now: its pieces not read yet, whether it ended, who waits for the next. */
let current: { pieces: Uint8Array[]; ended: boolean; wake: (() => void) | undefined } | undefined;

async function* pieces(input: NonNullable<typeof current>): AsyncGenerator<Uint8Array> {
  for (;;) {
    while (input.pieces.length === 0 && !input.ended) await new Promise<void>((resolve) => (input.wake = resolve));
    const piece = input.pieces.shift();
    if (!piece) return;
    yield piece;
    send({ type: 'more' });
  }
}

port.on('message', (message: UploadCheckRequest) => {
  if (message.type === 'start') {
    const input = { pieces: [] as Uint8Array[], ended: false, wake: undefined as (() => void) | undefined };
    current = input;
    planInput(readUploadLines(pieces(input), { check: bulkLineCheck(message.shared) }), { skipInvalid: message.skipInvalid })
      .then(
        (check) => send({ type: 'done', check }),
        // A bug, not the customer's doing: its text is for our logs (callers get a generic 500).
        (error: unknown) => send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      )
      .finally(() => {
        if (current === input) current = undefined;
      });
    return;
  }
  // Pieces sent before the caller learned the input was done with arrive after it: dropped.
  if (!current) return;
  if (message.type === 'bytes') current.pieces.push(message.bytes);
  else current.ended = true;
  const wake = current.wake;
  current.wake = undefined;
  wake?.();
});
send({ type: 'ready' });
