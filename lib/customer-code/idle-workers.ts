/**
 * The idle workers of a pool (customer code, PDF work, upload checks): a worker that has waited
 * WORKER_IDLE_MS for a task is terminated, so a process that was busy and is now quiet gives back
 * what its workers held (each worker's V8 heap, sized by its busiest task, and the memory of its
 * thread; issue #40: the stack process after a bulk job). A task that finds none starts one (its
 * start is measured in docs/bulk-jobs.md); tasks that come steadily always find one, since the most
 * recently used worker is taken first and only the ones left over age out.
 *
 * Only workers without a task are ever here: ending one never ends any work.
 *
 * Not in Lambda: an execution environment has its memory size whatever its workers hold, and it is
 * frozen between invocations, so a timer due during the freeze would fire as the next invocation
 * starts and end the worker it is about to use (a worker start on every request after a pause,
 * for no memory anyone gets back). There the workers stay for the environment's life.
 */
import type { Worker } from 'node:worker_threads';
import { settings } from '#lib/settings.ts';

/** How long a worker waits for a task before it is ended, in a process that lives on (the local stack, a server). */
export const WORKER_IDLE_MS = 10_000;

/** WORKER_IDLE_MS, or never in Lambda (see above). */
export const workerIdleMs = (): number => (settings.runsOnLambda ? Number.POSITIVE_INFINITY : WORKER_IDLE_MS);

export class IdleWorkers<W extends { readonly thread: Worker }> {
  readonly #idleMs: number;
  readonly #onEnded: (worker: W) => void;
  /** Oldest first: a worker is taken from the end, put back at the end. */
  readonly #waiting: { readonly worker: W; readonly since: number }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor({ idleMs = workerIdleMs(), onEnded = () => {} }: { idleMs?: number; onEnded?: (worker: W) => void } = {}) {
    this.#idleMs = idleMs;
    this.#onEnded = onEnded;
  }

  get size(): number {
    return this.#waiting.length;
  }

  /** The most recently used worker, if one waits. */
  take(): W | undefined {
    return this.#waiting.pop()?.worker;
  }

  /** A worker whose task ended cleanly (or a fresh one), waiting for the next task from now. */
  put(worker: W): void {
    this.#waiting.push({ worker, since: Date.now() });
    this.#schedule();
  }

  /** Terminates every waiting worker (the pool is closed). */
  async endAll(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await Promise.all(this.#waiting.splice(0).map(({ worker }) => this.#end(worker)));
  }

  #schedule(): void {
    const oldest = this.#waiting[0];
    if (this.#timer || !oldest || !Number.isFinite(this.#idleMs)) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const now = Date.now();
      while (this.#waiting[0] && now - this.#waiting[0].since >= this.#idleMs) void this.#end(this.#waiting.shift()!.worker);
      this.#schedule();
    }, Math.max(0, oldest.since + this.#idleMs - Date.now()));
    // Waiting workers never keep a process alive, nor does their timer.
    this.#timer.unref();
  }

  async #end(worker: W): Promise<void> {
    this.#onEnded(worker);
    await worker.thread.terminate();
  }
}
