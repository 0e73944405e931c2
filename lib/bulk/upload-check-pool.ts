/**
 * A bulk job's input is read and checked here, in worker threads, never on the event loop that
 * serves every key: a million lines take seconds of CPU (12 to 14 s for 2 MB of invalid lines when
 * this ran on the event loop, while another key's GET /v1/usage waited 5 to 6 s).
 *
 * - Streamed: this thread reads the upload from S3 and hands its bytes to the worker as they come,
 *   at most UPLOAD_CHECK_WINDOW pieces ahead of what the worker has read, so neither thread holds
 *   the file; the worker answers as soon as it knows (./upload-check.ts stops reading an input
 *   refused whatever follows) and the rest of the upload is never read.
 * - Bounded from outside: a worker's heap is capped (UPLOAD_CHECK_HEAP_MB) and the whole read has a
 *   wall-clock limit (UPLOAD_CHECK_TIME_LIMIT_MS); past either the worker is terminated and the
 *   submission refused (400: split the upload), and the worker replaced.
 * - Shared per key like render slots (lib/render/capacity.ts, the same class): a key never holds
 *   every worker, so eight submissions of one key leave another key's submission a worker.
 * - A worker that waits WORKER_IDLE_MS for a submission is ended (lib/customer-code/idle-workers.ts),
 *   its heap given back: submissions come seldom, and a worker that read little still holds tens
 *   of MB.
 *
 * In AWS the bulk function serves one submission per execution environment; the same code runs
 * there, the worker's file bundled beside the function's index.mjs (cdk/bundling.ts).
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startBoundedWorker, workerFile } from '#lib/customer-code/bounded-worker.ts';
import { IdleWorkers } from '#lib/customer-code/idle-workers.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { RenderCapacity } from '#lib/render/capacity.ts';
import type { UploadCheck } from './upload-check.ts';
import { BUNDLED_UPLOAD_CHECK_WORKER_NAME, UPLOAD_CHECK_WORKER_SOURCE } from './upload-check-worker-file.ts';
import type { UploadCheckReply, UploadCheckRequest } from './upload-check-worker.ts';

/**
 * A worker's JavaScript heap (old generation), in MB. What it keeps: the plan (a chunk per 10 valid
 * lines: about 10 MB for a million), refused lines past the first thousand as numbers (8 bytes
 * each), one line being checked (at most 5 MiB, its text and its parsed item).
 */
export const UPLOAD_CHECK_HEAP_MB = 256;
const YOUNG_HEAP_MB = 32;
/**
 * Wall-clock time one input may take to read and check, its streaming from S3 included: a million
 * lines (256 MiB) take 8 to 20 s on a core shared with others.
 */
export const UPLOAD_CHECK_TIME_LIMIT_MS = 120_000;
/** Pieces of the upload handed to the worker ahead of what it has read (S3's pieces are 16 to 64 KB). */
export const UPLOAD_CHECK_WINDOW = 8;
/**
 * A worker that read more than this is replaced after its task rather than kept: V8 keeps the heap
 * a large read grew (the plan of a million lines, the garbage of its checks) long after, and a fresh
 * worker costs about 20 MB and a fraction of a second, so the process returns to its size.
 */
export const RECYCLE_AFTER_BYTES = 1024 * 1024;
/** Longest a submission waits for a worker before it is refused (503). */
const MAX_WAIT_MS = 30_000;
const MAX_WAITING = 64;

const WORKER_FILE = workerFile(import.meta.url, BUNDLED_UPLOAD_CHECK_WORKER_NAME, UPLOAD_CHECK_WORKER_SOURCE);

export interface UploadCheckOptions {
  /** The job's shared options, under each line's own. */
  readonly shared?: Readonly<Record<string, unknown>> | undefined;
  readonly skipInvalid: boolean;
}

type Body = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

class UploadCheckWorker {
  readonly thread: Worker;
  readonly ready: Promise<void>;

  constructor(heapMb: number) {
    ({ thread: this.thread, ready: this.ready } = startBoundedWorker(WORKER_FILE, { heapMb, youngHeapMb: YOUNG_HEAP_MB }));
  }

  /** Reads `body` through the worker; settles once, however the worker ends. `reusable` is false when it was terminated or read much. */
  run(body: Body, options: UploadCheckOptions, { heapMb, timeLimitMs }: { heapMb: number; timeLimitMs: number }): Promise<{ check: UploadCheck; reusable: boolean }> {
    return new Promise((resolve, reject) => {
      let finished = false;
      let sent = 0;
      let credits = UPLOAD_CHECK_WINDOW;
      let wakePump: (() => void) | undefined;
      const iterator = (Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : body[Symbol.iterator]()) as AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
      const finish = (result: { check: UploadCheck; reusable: boolean } | Error) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        this.thread.off('message', onMessage);
        this.thread.off('error', onError);
        this.thread.off('exit', onExit);
        wakePump?.();
        // The rest of the upload is not read: its stream ends here.
        (body as { destroy?: () => void }).destroy?.();
        void Promise.resolve(iterator.return?.()).catch(() => {});
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const terminate = (check: UploadCheck) => {
        void this.thread.terminate();
        finish({ check, reusable: false });
      };
      const timer = setTimeout(
        () => terminate({ refused: `Reading the upload took longer than ${timeLimitMs / 1000} s, the most one submission may take; split it into several jobs.` }),
        timeLimitMs,
      );
      const onMessage = (message: UploadCheckReply) => {
        if (message.type === 'more') {
          credits++;
          const wake = wakePump;
          wakePump = undefined;
          wake?.();
        } else if (message.type === 'done') finish({ check: message.check, reusable: sent <= RECYCLE_AFTER_BYTES });
        else if (message.type === 'failed') {
          logger.error('an upload check failed', { error: message.error });
          void this.thread.terminate();
          finish(new Error('an upload check failed'));
        }
      };
      const onError = (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          return terminate({ refused: `Reading the upload needed more than ${heapMb} MB of memory, the most one submission may take; split it into several jobs.` });
        }
        logger.error('an upload-check worker failed', errorFields(error));
        finish(new Error('an upload-check worker failed', { cause: error }));
      };
      const onExit = () => finish(new Error('an upload-check worker exited during its task'));
      this.thread.on('message', onMessage);
      this.thread.on('error', onError);
      this.thread.on('exit', onExit);

      const post = (message: UploadCheckRequest, transfer?: ArrayBuffer[]) => this.thread.postMessage(message, transfer);
      post({ type: 'start', shared: options.shared, skipInvalid: options.skipInvalid });
      const pump = async () => {
        for (;;) {
          while (credits === 0 && !finished) await new Promise<void>((resolve) => (wakePump = resolve));
          if (finished) return;
          const next = await iterator.next();
          if (finished) return;
          if (next.done) return post({ type: 'end' });
          // A copy of its own, handed over (not copied again) to the worker.
          const bytes = new Uint8Array(next.value);
          credits--;
          sent += bytes.byteLength;
          post({ type: 'bytes', bytes }, [bytes.buffer]);
        }
      };
      pump().catch((error: unknown) => {
        // After the answer, the stream's end (destroyed above) is no one's concern.
        if (finished) return;
        // The upload could not be read (S3 failed mid-stream): the worker waits for bytes that will not come.
        void this.thread.terminate();
        finish(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }
}

/** Workers that read bulk jobs' inputs, shared per key. */
export class UploadCheckPool {
  readonly workers: number;
  readonly heapMb: number;
  readonly timeLimitMs: number;
  readonly #slots: RenderCapacity;
  readonly #idle = new IdleWorkers<UploadCheckWorker>();
  #closed = false;

  constructor({
    workers = Math.max(2, availableParallelism()),
    heapMb = UPLOAD_CHECK_HEAP_MB,
    timeLimitMs = UPLOAD_CHECK_TIME_LIMIT_MS,
  }: { workers?: number; heapMb?: number; timeLimitMs?: number } = {}) {
    this.workers = workers;
    this.heapMb = heapMb;
    this.timeLimitMs = timeLimitMs;
    this.#slots = new RenderCapacity({ slots: workers, maxQueued: MAX_WAITING, maxQueueWaitMs: MAX_WAIT_MS });
  }

  /** Submissions being read and waiting now (tests). */
  get state(): { readonly workers: number; readonly running: number; readonly waiting: number } {
    const { running, waiting } = this.#slots.state;
    return { workers: this.workers, running, waiting };
  }

  /**
   * Reads and checks a bulk job's input for `keyId` in a worker: its plan, or why it cannot be a job.
   * `input` is its bytes, or opens them (the upload's GET from S3): opened only once a worker is
   * free, so a submission waiting its turn holds no connection to S3.
   */
  async check(keyId: string, input: Body | (() => Promise<Body>), options: UploadCheckOptions): Promise<UploadCheck> {
    using _slot = await this.#slots.acquire(keyId, { maxRunning: this.workers });
    const worker = this.#idle.take() ?? new UploadCheckWorker(this.heapMb);
    let reusable = false;
    try {
      await worker.ready;
      let body: Body;
      try {
        body = typeof input === 'function' ? await input() : input;
      } catch (error) {
        // Nothing was sent to the worker: it serves the next submission.
        reusable = true;
        throw error;
      }
      const result = await worker.run(body, options, { heapMb: this.heapMb, timeLimitMs: this.timeLimitMs });
      reusable = result.reusable;
      return result.check;
    } finally {
      if (reusable && !this.#closed) this.#idle.put(worker);
      else {
        void worker.thread.terminate();
        // Replaced at once, so the next submission finds a worker loaded.
        if (!this.#closed && this.#idle.size === 0) this.#idle.put(new UploadCheckWorker(this.heapMb));
      }
    }
  }

  /** Terminates every idle worker (tests; idle workers never keep a process alive). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#idle.endAll();
  }
}

let shared: UploadCheckPool | undefined;

/** This process's upload-check workers, made on first use. */
export function uploadCheckPool(): UploadCheckPool {
  shared ??= new UploadCheckPool();
  return shared;
}
