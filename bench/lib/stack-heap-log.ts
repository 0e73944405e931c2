/**
 * Preloaded into the stack process by bench phase `bulk-memory` (`node --import
 * ./bench/lib/stack-heap-log.ts lib/local/start.ts`, with STACK_HEAP_LOG=<file>): every
 * STACK_HEAP_LOG_MS it appends one JSON line of where the process's memory is, so that the phase can
 * tell what the service keeps (live objects) from what V8 and the C allocator keep around them:
 * - the main isolate's heap: committed (`totalMiB`), used (live and not yet collected garbage), its
 *   young generation's committed size, and `ArrayBuffer` memory;
 * - each worker thread's heap (committed, used), by the worker's file.
 * Its resident memory by kind of mapping is read by the phase, from outside (bulk-memory.ts,
 * `residentByKind`): parsing /proc/self/smaps in here every 2 s allocated about 1 MB a second, which
 * V8's memory reducer counts as work under way and so never runs while the probe watches.
 * On SIGUSR2 (the phase's diagnosis, BENCH_BULK_MEMORY_DIAGNOSE) it collects garbage when Node runs
 * with --expose-gc, appends one more line marked `afterCollection`, and writes a heap snapshot into
 * STACK_HEAP_SNAPSHOT_DIR: what is still held once nothing waits for a collection, and by whom.
 * A bench tool only: the service never loads it.
 */
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';
import type { Worker as WorkerThread } from 'node:worker_threads';

export interface StackHeapLine {
  /** Seconds since the stack process started. */
  readonly s: number;
  readonly rssMiB: number;
  readonly main: { readonly totalMiB: number; readonly usedMiB: number; readonly youngMiB: number; readonly arrayBuffersMiB: number };
  readonly workers: Record<string, { readonly totalMiB: number; readonly usedMiB: number }>;
  /** The line written on SIGUSR2 after a forced collection. */
  readonly afterCollection?: true;
}

const INTERVAL_MS = Number(process.env.STACK_HEAP_LOG_MS ?? 5_000);
const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;

const logFile = process.env.STACK_HEAP_LOG;
const threads = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
if (logFile && threads.isMainThread) {
  // Every worker the service starts, by its file's name, for its heap's statistics.
  const workers = new Map<WorkerThread, string>();
  let started = 0;
  const Original = threads.Worker;
  threads.Worker = class extends Original {
    constructor(...args: ConstructorParameters<typeof Original>) {
      super(...args);
      workers.set(this, `${String(args[0]).split('/').pop()}#${++started}`);
      this.once('exit', () => workers.delete(this));
    }
  };
  syncBuiltinESMExports();
  const t0 = Date.now();
  const readLine = async (): Promise<StackHeapLine> => {
    const heap = v8.getHeapStatistics();
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    const perWorker: StackHeapLine['workers'] = {};
    for (const [worker, name] of workers) {
      const stats = await worker.getHeapStatistics().catch(() => undefined);
      if (stats) perWorker[name] = { totalMiB: mib(stats.total_heap_size), usedMiB: mib(stats.used_heap_size) };
    }
    return {
      s: Math.round((Date.now() - t0) / 1000),
      rssMiB: mib(process.memoryUsage.rss()),
      main: { totalMiB: mib(heap.total_heap_size), usedMiB: mib(heap.used_heap_size), youngMiB: mib(young?.space_size ?? 0), arrayBuffersMiB: mib(process.memoryUsage().arrayBuffers) },
      workers: perWorker,
    };
  };
  setInterval(async () => appendFileSync(logFile, `${JSON.stringify(await readLine())}\n`), INTERVAL_MS).unref();
  process.on('SIGUSR2', async () => {
    (globalThis as { gc?: () => void }).gc?.();
    appendFileSync(logFile, `${JSON.stringify({ ...(await readLine()), afterCollection: true })}\n`);
    // Later, once the phase has read the resident memory this line goes with: writing a snapshot takes memory of its own.
    const snapshotDir = process.env.STACK_HEAP_SNAPSHOT_DIR;
    if (snapshotDir) setTimeout(() => v8.writeHeapSnapshot(`${snapshotDir}/stack-after-job.heapsnapshot`), 3_000);
  });
}
