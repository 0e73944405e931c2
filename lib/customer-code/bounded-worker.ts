/**
 * How every worker thread of ours starts (customer code here, upload checks in lib/bulk): from its
 * bundled file beside the Lambda asset's index.mjs when there is one (cdk/bundling.ts puts it there),
 * else from the project's TypeScript; with its heap capped; unref'd, so an idle worker never keeps a
 * process alive; and ready once its modules are loaded, which it says with a `{ type: 'ready' }`
 * message, so no time limit ever counts the load.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker's file: `bundledName` beside the module at `importerUrl` (in a Lambda asset: its index.mjs) if there, else `source`. */
export function workerFile(importerUrl: string, bundledName: string, source: URL): URL {
  const bundled = new URL(`./${bundledName}`, importerUrl);
  return existsSync(fileURLToPath(bundled)) ? bundled : source;
}

export interface BoundedWorker {
  readonly thread: Worker;
  /** Resolves once its modules are loaded; rejects if it could not start (a task that needs it gets the error). */
  readonly ready: Promise<void>;
}

export function startBoundedWorker(
  file: URL,
  { heapMb, youngHeapMb, env }: { heapMb: number; youngHeapMb: number; env?: WorkerOptions['env'] },
): BoundedWorker {
  const thread = new Worker(file, { ...(env !== undefined && { env }), resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: youngHeapMb } });
  // Idle workers never keep a process alive; a task's own timer does while it runs.
  thread.unref();
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (message: { type?: unknown }) => {
      if (message.type !== 'ready') return;
      thread.off('message', onMessage);
      thread.off('error', reject);
      resolve();
    };
    thread.on('message', onMessage);
    thread.once('error', reject);
  });
  // Not awaited by anyone until a task needs it.
  ready.catch(() => {});
  return { thread, ready };
}
