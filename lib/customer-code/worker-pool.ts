/**
 * A pool of bounded worker threads (./bounded-worker.ts) for CPU-heavy work that is not customer
 * code but would hold the event loop as long (lib/documents/pdf-workers.ts: joining a batch's PDFs,
 * finishing a printed one): started on first use, one task per worker at a time, shared per key
 * like render slots (lib/render/capacity.ts, the same class; a key never holds every worker), and a
 * worker whose task did not end cleanly (refused, failed, stopped at its limit or by its caller,
 * out of its heap) terminated and replaced, so no task ever sees another's leftovers. A worker
 * that waits WORKER_IDLE_MS for a task is ended (./idle-workers.ts), its heap given back.
 *
 * A task talks to its worker with `ask`: one message out, one answer back, settled once however the
 * worker ends. ./pool.ts keeps its own loop for customer code, whose steps each have their limit.
 */
import { availableParallelism } from 'node:os';
import type { Transferable, Worker, WorkerOptions } from 'node:worker_threads';
import { RenderCapacity } from '#lib/render/capacity.ts';
import { startBoundedWorker, type BoundedWorker } from './bounded-worker.ts';
import { IdleWorkers } from './idle-workers.ts';

/** What a pooled worker answers to one message: its result, a refusal it chose, or a bug's text. */
export type WorkerAnswer<T> = { readonly type: 'done'; readonly value: T } | { readonly type: 'refused'; readonly code: string; readonly message: string } | { readonly type: 'failed'; readonly error: string };

/** Why a worker did not answer: its time ran out, its caller gave up, its heap ran out, or it failed. */
export class WorkerStoppedError extends Error {
  override readonly name = 'WorkerStoppedError';
  readonly reason: 'late' | 'aborted' | 'out-of-memory' | 'failed';
  constructor(reason: WorkerStoppedError['reason'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** A refusal the worker's own code decided (e.g. a merged file past the size limit), as plain data. */
export class WorkerRefusalError extends Error {
  override readonly name = 'WorkerRefusalError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Sends `message` to `thread` and waits for its one answer. Past `timeLimitMs`, or once `signal`
 * aborts, the worker is terminated and this rejects with WorkerStoppedError (the pool replaces it).
 */
export function ask<T>(
  thread: Worker,
  message: unknown,
  { transfer = [], timeLimitMs, signal }: { transfer?: readonly Transferable[]; timeLimitMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: { value: T } | Error) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
      if (result instanceof Error) reject(result);
      else resolve(result.value);
    };
    const stop = (error: WorkerStoppedError) => {
      void thread.terminate();
      finish(error);
    };
    const onAbort = () => stop(new WorkerStoppedError('aborted', 'its caller gave up'));
    const onMessage = (answer: WorkerAnswer<T>) => {
      if (answer.type === 'done') finish({ value: answer.value });
      else if (answer.type === 'refused') finish(new WorkerRefusalError(answer.code, answer.message));
      else if (answer.type === 'failed') finish(new WorkerStoppedError('failed', `the worker failed: ${answer.error}`));
    };
    const onError = (error: Error & { code?: string }) =>
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? stop(new WorkerStoppedError('out-of-memory', 'the worker ran out of its heap', { cause: error }))
        : finish(new WorkerStoppedError('failed', 'the worker failed', { cause: error }));
    const onExit = () => finish(new WorkerStoppedError('failed', 'the worker exited during its task'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', onMessage);
    thread.on('error', onError);
    thread.on('exit', onExit);
    if (timeLimitMs !== undefined) timer = setTimeout(() => stop(new WorkerStoppedError('late', `the worker took longer than ${timeLimitMs} ms`)), timeLimitMs);
    thread.postMessage(message, transfer);
  });
}

/** Resolves once `worker` has loaded; rejects at once if `signal` aborts first (the worker is then replaced). */
function untilReady(worker: BoundedWorker, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return worker.ready;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(new WorkerStoppedError('aborted', 'its caller gave up'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    worker.ready.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Tasks waiting for a worker at most, all keys together. */
const MAX_WAITING = 256;

export class BoundedWorkerPool {
  readonly workers: number;
  readonly heapMb: number;
  readonly #file: URL;
  readonly #youngHeapMb: number;
  readonly #env: WorkerOptions['env'] | undefined;
  readonly #maxWaitMs: number;
  readonly #slots: RenderCapacity;
  readonly #idle = new IdleWorkers<BoundedWorker>();
  #closed = false;

  constructor({
    file,
    heapMb,
    youngHeapMb,
    workers = Math.max(2, availableParallelism()),
    maxWaitMs,
    env,
  }: {
    file: URL;
    heapMb: number;
    youngHeapMb: number;
    workers?: number;
    /** Longest a task waits for a worker before it is refused with ServiceBusyError (Infinity: until its signal). */
    maxWaitMs: number;
    env?: WorkerOptions['env'];
  }) {
    this.#file = file;
    this.workers = workers;
    this.heapMb = heapMb;
    this.#youngHeapMb = youngHeapMb;
    this.#env = env;
    this.#maxWaitMs = maxWaitMs;
    this.#slots = new RenderCapacity({ slots: workers, maxQueued: MAX_WAITING, maxQueueWaitMs: Number.isFinite(maxWaitMs) ? maxWaitMs : 60_000 });
  }

  /** Tasks running and waiting now (tests). */
  get state(): { readonly workers: number; readonly running: number; readonly waiting: number } {
    const { running, waiting } = this.#slots.state;
    return { workers: this.workers, running, waiting };
  }

  /**
   * Runs `task` on a worker of its own, on `keyId`'s share, once one is free (waiting at most until
   * `signal` aborts). The worker goes back to the pool only if `task` resolved.
   */
  async use<T>(keyId: string, task: (thread: Worker) => Promise<T>, { signal }: { signal?: AbortSignal } = {}): Promise<T> {
    // A key's share: finite, so never every worker (RenderCapacity caps it at all but one).
    using _slot = await this.#slots.acquire(keyId, { maxRunning: this.workers, maxWaitMs: this.#maxWaitMs, ...(signal && { signal }) });
    const worker = this.#idle.take() ?? this.#spawn();
    let reusable = false;
    try {
      await untilReady(worker, signal);
      const value = await task(worker.thread);
      reusable = true;
      return value;
    } finally {
      if (reusable && !this.#closed) this.#idle.put(worker);
      else {
        void worker.thread.terminate();
        // Replaced at once, so the next task finds a worker loaded.
        if (!this.#closed && this.#idle.size === 0) this.#idle.put(this.#spawn());
      }
    }
  }

  /** Terminates every idle worker (tests; a process that ends needs nothing, its workers are unref'd). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#idle.endAll();
  }

  #spawn(): BoundedWorker {
    return startBoundedWorker(this.#file, { heapMb: this.heapMb, youngHeapMb: this.#youngHeapMb, ...(this.#env !== undefined && { env: this.#env }) });
  }
}
