/**
 * Customer code (a stored template filled with data, a data_schema compiled and checked) runs here:
 * in worker threads, never on the event loop that serves every customer.
 *
 * - Bounded from outside: each step of a task has a wall-clock limit (./limits.ts), and a worker
 *   still busy at it is terminated (V8 stops whatever JavaScript it runs: a filter call, a regular
 *   expression, a schema's compiled code); its heap is capped (`resourceLimits`), so a template that
 *   builds gigabytes ends its worker, not the process. Either way the caller gets a refusal naming
 *   the limit, and the worker is replaced at once, before the next task needs it.
 * - Shared per key like render slots (lib/render/capacity.ts, the same class): a task waits its
 *   key's turn, a key never holds every worker (one is always left for the others), and one that
 *   cannot get a worker in time is refused with ServiceBusyError (503, nothing charged).
 * - One task per worker at a time, sized to the cores (at least two); a worker that waits
 *   WORKER_IDLE_MS for a task is ended (./idle-workers.ts), its heap given back. The workers get no
 *   environment variables: nothing of the process's configuration or credentials is in reach of
 *   the code they run.
 *
 * Why not piscina or tinypool: both start their worker through a file of their own resolved beside
 * their module, which a single-file Lambda bundle does not have; and the fairness and the refusals
 * are ours anyway. This is one worker file, bundled as a second entry of each asset that needs it.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { RenderCapacity } from '#lib/render/capacity.ts';
import { inspectHtml, type HtmlInspection } from '#lib/render/html.ts';
import { markdownToHtml } from '#lib/render/markdown.ts';
import type { TemplateSources } from '#lib/templates/engine.ts';
import {
  CUSTOMER_CODE_HEAP_MB,
  CUSTOMER_CODE_YOUNG_HEAP_MB,
  HTML_READING_HEAP_MB,
  DATA_CHECK_TIME_LIMIT_MS,
  HTML_INSPECTION_TIME_LIMIT_MS,
  INLINE_HTML_INSPECTION_CHARS,
  TEMPLATE_FILL_TIME_LIMIT_MS,
  TEMPLATE_SAVE_CHECK_TIME_LIMIT_MS,
} from './limits.ts';
import type { CustomerCodeTask, Refusal, TaskOutcome, TaskStep } from './tasks.ts';
import type { WorkerMessage } from './worker.ts';
import { BUNDLED_WORKER_NAME, WORKER_SOURCE } from './worker-file.ts';
import { startBoundedWorker, workerFile } from './bounded-worker.ts';
import { IdleWorkers } from './idle-workers.ts';

export type { Refusal } from './tasks.ts';

/**
 * The worker's file: bundled beside the function's index.mjs in a Lambda asset (cdk/bundling.ts;
 * `import.meta.url` is then the bundle's), else this directory's TypeScript, which Node runs as is.
 * The bundle carries the name, which is how the build knows to add the worker.
 */
const WORKER_FILE = workerFile(import.meta.url, BUNDLED_WORKER_NAME, WORKER_SOURCE);

/** Each step's time limit (./limits.ts). */
export type StepLimits = Readonly<Record<TaskStep, number>>;

const STEP_LIMITS: StepLimits = {
  'data-check': DATA_CHECK_TIME_LIMIT_MS,
  fill: TEMPLATE_FILL_TIME_LIMIT_MS,
  inspect: HTML_INSPECTION_TIME_LIMIT_MS,
  'save-check': TEMPLATE_SAVE_CHECK_TIME_LIMIT_MS,
};

/** What is said when a task outlives its step's limit or outgrows its heap. */
const STEPS: Readonly<Record<TaskStep, { refusal: Refusal['refusal']; late: (limitMs: number) => string; large: (heapMb: number) => string }>> = {
  'data-check': {
    refusal: 'data',
    late: (limitMs) => `(root): checking the data against the data_schema took longer than ${limitMs} ms; simplify the schema (a pattern that backtracks?) or the data`,
    large: (heapMb) => `(root): checking the data against the data_schema needed more than ${heapMb} MB of memory; simplify the schema or the data`,
  },
  fill: {
    refusal: 'template',
    late: (limitMs) => `filling the template took longer than ${limitMs} ms, its time limit (a loop or filter that works over too much?)`,
    large: (heapMb) => `filling the template needed more than ${heapMb} MB of memory, its limit (a loop or filter that builds too much?)`,
  },
  inspect: {
    refusal: 'html',
    late: (limitMs) => `html took longer than ${limitMs} ms to read; simplify its markup`,
    large: (heapMb) => `html needed more than ${heapMb} MB of memory to read; simplify its markup`,
  },
  'save-check': {
    refusal: 'schema',
    late: (limitMs) => `checking the template (its Liquid, its data_schema and its sample_data) took longer than ${limitMs} ms; simplify the data_schema`,
    large: (heapMb) => `checking the template (its Liquid, its data_schema and its sample_data) needed more than ${heapMb} MB of memory; simplify the data_schema`,
  },
};

const firstStep = (task: CustomerCodeTask): TaskStep =>
  task.kind === 'inspect-html' || task.kind === 'read-markdown' ? 'inspect' : task.kind === 'check-template' ? 'save-check' : task.schema ? 'data-check' : 'fill';

/** Longest a task waits for a worker before it is refused (503): several tasks' full limits. */
const MAX_WAIT_MS = 4 * TEMPLATE_FILL_TIME_LIMIT_MS;
/** Tasks waiting at most (a batch of 100 template items, and other keys' beside it). */
const MAX_WAITING = 256;

class PooledWorker {
  readonly thread: Worker;
  /** Resolves once its modules are loaded; rejects if it could not start. */
  readonly ready: Promise<void>;
  readonly #heapMb: number;
  readonly #limitsMs: StepLimits;

  constructor(heapMb: number, limitsMs: StepLimits) {
    this.#heapMb = heapMb;
    this.#limitsMs = limitsMs;
    ({ thread: this.thread, ready: this.ready } = startBoundedWorker(WORKER_FILE, { heapMb, youngHeapMb: CUSTOMER_CODE_YOUNG_HEAP_MB, env: {} }));
  }

  /** Runs one task, holding each step to its limit; settles once, however the worker ends. */
  run(task: CustomerCodeTask): Promise<{ outcome: TaskOutcome; reusable: boolean }> {
    return new Promise((resolve, reject) => {
      let step = firstStep(task);
      let timer: NodeJS.Timeout | undefined;
      const finish = (result: { outcome: TaskOutcome; reusable: boolean } | Error) => {
        clearTimeout(timer);
        this.thread.off('message', onMessage);
        this.thread.off('error', onError);
        this.thread.off('exit', onExit);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const refuse = (why: 'late' | 'large') => {
        const { refusal, late, large } = STEPS[step];
        finish({ outcome: { refusal, detail: why === 'late' ? late(this.#limitsMs[step]) : large(this.#heapMb) }, reusable: false });
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          void this.thread.terminate();
          refuse('late');
        }, this.#limitsMs[step]);
      };
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'step') {
          step = message.step;
          arm();
        } else if (message.type === 'done') {
          finish({ outcome: message.outcome, reusable: true });
        } else if (message.type === 'failed') {
          logger.error('a customer-code task failed', { task: task.kind, error: message.error });
          finish(new Error('a customer-code task failed'));
        }
      };
      const onError = (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return refuse('large');
        logger.error('a customer-code worker failed', { task: task.kind, ...errorFields(error) });
        finish(new Error('a customer-code worker failed', { cause: error }));
      };
      const onExit = () => finish(new Error('a customer-code worker exited during its task'));
      this.thread.on('message', onMessage);
      this.thread.on('error', onError);
      this.thread.on('exit', onExit);
      arm();
      this.thread.postMessage(task);
    });
  }
}

export class CustomerCodePool {
  readonly workers: number;
  /** Each worker's JavaScript heap (old generation), in MB. */
  readonly heapMb: number;
  /** Each step's time limit: ./limits.ts's, unless given (tests). */
  readonly limitsMs: StepLimits;
  readonly #slots: RenderCapacity;
  // A worker ended idle is one less alive.
  readonly #idle = new IdleWorkers<PooledWorker>({ onEnded: () => void this.#alive-- });
  #alive = 0;
  #closed = false;

  constructor({
    workers = Math.max(2, availableParallelism()),
    heapMb = CUSTOMER_CODE_HEAP_MB,
    limitsMs = {},
  }: { workers?: number; heapMb?: number; limitsMs?: Partial<StepLimits> } = {}) {
    this.workers = workers;
    this.heapMb = heapMb;
    this.limitsMs = { ...STEP_LIMITS, ...limitsMs };
    this.#slots = new RenderCapacity({ slots: workers, maxQueued: MAX_WAITING, maxQueueWaitMs: MAX_WAIT_MS });
  }

  /** Tasks running and waiting now (/health, tests). */
  get state(): { readonly workers: number; readonly running: number; readonly waiting: number } {
    const { running, waiting } = this.#slots.state;
    return { workers: this.workers, running, waiting };
  }

  /** Fills a template with data for `keyId`: its sources, or who is at fault and why. */
  async fill(keyId: string, task: Omit<Extract<CustomerCodeTask, { kind: 'fill-template' }>, 'kind'>, signal?: AbortSignal): Promise<{ sources: TemplateSources } | Refusal> {
    const outcome = await this.#run(keyId, { kind: 'fill-template', ...task }, signal);
    if ('sources' in outcome || 'refusal' in outcome) return outcome;
    throw new Error('a fill task answered as another');
  }

  /**
   * Reads `html` for `keyId` (lib/render/html.ts's inspection): on this thread when it is short,
   * else in a worker. A document past the worker's limits is refused as html (INVALID_HTML).
   */
  async inspectHtml(keyId: string, html: unknown): Promise<HtmlInspection> {
    if (typeof html !== 'string' || html.length < INLINE_HTML_INSPECTION_CHARS) return inspectHtml(html);
    const outcome = await this.#run(keyId, { kind: 'inspect-html', html });
    if ('inspection' in outcome) return outcome.inspection;
    if ('refusal' in outcome) return { problem: outcome.detail };
    throw new Error('an inspect task answered as another');
  }

  /**
   * Turns `markdown` into its HTML document (lib/render/markdown.ts) and reads that as inspectHtml
   * does, for `keyId`: on this thread when it is short, else in a worker, so a huge Markdown body is
   * parsed under the worker's time and memory limits, never on the thread that answers everyone.
   */
  async readMarkdown(keyId: string, markdown: string, css?: string): Promise<{ html: string; inspection: HtmlInspection }> {
    if (markdown.length < INLINE_HTML_INSPECTION_CHARS / 2) {
      const html = await markdownToHtml(markdown, css);
      return { html, inspection: inspectHtml(html) };
    }
    const outcome = await this.#run(keyId, { kind: 'read-markdown', markdown, ...(css !== undefined && { css }) });
    if ('inspection' in outcome && outcome.html !== undefined) return { html: outcome.html, inspection: outcome.inspection };
    if ('refusal' in outcome) return { html: '', inspection: { problem: outcome.detail.replace(/^html/, 'markdown') } };
    throw new Error('a markdown task answered as another');
  }

  /** Checks a template being saved for `keyId`: undefined when it may be saved, else why not. */
  async check(keyId: string, task: Omit<Extract<CustomerCodeTask, { kind: 'check-template' }>, 'kind'>): Promise<Refusal | undefined> {
    const outcome = await this.#run(keyId, { kind: 'check-template', ...task });
    if ('checked' in outcome) return undefined;
    if ('refusal' in outcome) return outcome;
    throw new Error('a check task answered as another');
  }

  /** Terminates every idle worker (tests; a process that ends needs nothing, its workers are unref'd). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#idle.endAll();
  }

  async #run(keyId: string, task: CustomerCodeTask, signal?: AbortSignal): Promise<TaskOutcome> {
    // A customer's share: finite, so never every worker (see RenderCapacity's cap).
    using _slot = await this.#slots.acquire(keyId, { maxRunning: this.workers, ...(signal && { signal }) });
    const worker = this.#idle.take() ?? this.#spawn();
    let reusable = false;
    try {
      await worker.ready;
      const result = await worker.run(task);
      reusable = result.reusable;
      return result.outcome;
    } finally {
      if (reusable && !this.#closed) {
        this.#idle.put(worker);
      } else {
        this.#alive--;
        void worker.thread.terminate();
        // Replaced at once, so the next task finds a worker loaded (unless as many are still idle).
        if (!this.#closed && this.#alive < this.workers && this.#idle.size === 0) this.#idle.put(this.#spawn());
      }
    }
  }

  #spawn(): PooledWorker {
    this.#alive++;
    return new PooledWorker(this.heapMb, this.limitsMs);
  }
}

let shared: CustomerCodePool | undefined;
let documentReading: CustomerCodePool | undefined;

/** This process's pool for templates and data schemas, made on first use. */
export function customerCodePool(): CustomerCodePool {
  shared ??= new CustomerCodePool();
  return shared;
}

/**
 * This process's pool for reading large html documents, made on first use: the same workers and
 * shares, with the larger heap a 5 MB document's tree needs (HTML_READING_HEAP_MB). Apart from the
 * template workers, so templates keep their smaller heap, and one key's large documents and its
 * templates never add up to more than a share of either.
 */
export function documentReadingPool(): CustomerCodePool {
  documentReading ??= new CustomerCodePool({ heapMb: HTML_READING_HEAP_MB });
  return documentReading;
}
