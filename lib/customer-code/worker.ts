/**
 * A customer-code worker thread (started by ./pool.ts): runs one task at a time and answers on its
 * port. It says `ready` once its modules are loaded, so a task's time limit never counts the load.
 *
 * In a Lambda asset this file is bundled on its own, beside the function's index.mjs, as
 * customer-code-worker.mjs (cdk/bundle-customer-code-worker.ts).
 */
import { parentPort } from 'node:worker_threads';
import { runTask, type CustomerCodeTask, type TaskOutcome, type TaskStep } from './tasks.ts';

export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'step'; readonly step: TaskStep }
  | { readonly type: 'done'; readonly outcome: TaskOutcome }
  | { readonly type: 'failed'; readonly error: string };

const port = parentPort!;
const send = (message: WorkerMessage) => port.postMessage(message);

port.on('message', (task: CustomerCodeTask) => {
  runTask(task, (step) => send({ type: 'step', step })).then(
    (outcome) => send({ type: 'done', outcome }),
    // A bug, not the customer's doing: its text is for our logs (the pool logs it; callers get a generic 500).
    (error: unknown) => send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
send({ type: 'ready' });
