/**
 * Preloaded into the stack process by bench phase `bulk-memory` (`node --import
 * ./bench/lib/stack-heap-log.ts lib/local/start.ts`, with STACK_HEAP_LOG=<file>): every
 * STACK_HEAP_LOG_MS it appends one JSON line of where the process's memory is, so that the phase can
 * tell what the service keeps (live objects) from what V8 and the C allocator keep around them:
 * - the main isolate's heap: committed (`totalMiB`), used (live and not yet collected garbage), its
 *   young generation's committed size, and `ArrayBuffer` memory;
 * - each worker thread's heap (committed, used), by the worker's file;
 * - the resident memory by kind of mapping (/proc/self/smaps): V8's 256 KiB heap pages, glibc's
 *   main heap (`[heap]`), other anonymous memory (thread arenas and stacks, Chromium's pipes'
 *   buffers), files.
 * A bench tool only: the service never loads it.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';
import type { Worker as WorkerThread } from 'node:worker_threads';

export interface StackHeapLine {
  /** Seconds since the stack process started. */
  readonly s: number;
  readonly rssMiB: number;
  readonly main: { readonly totalMiB: number; readonly usedMiB: number; readonly youngMiB: number; readonly arrayBuffersMiB: number };
  readonly workers: Record<string, { readonly totalMiB: number; readonly usedMiB: number }>;
  readonly residentMiB: { readonly v8Pages: number; readonly mallocHeap: number; readonly otherAnonymous: number; readonly files: number };
}

const INTERVAL_MS = Number(process.env.STACK_HEAP_LOG_MS ?? 5_000);
const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;

/** Resident memory by kind of mapping, from /proc/self/smaps. */
function residentByKind(): StackHeapLine['residentMiB'] {
  const kib = { v8Pages: 0, mallocHeap: 0, otherAnonymous: 0, files: 0 };
  let kind: keyof typeof kib | undefined;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const sizeKiB = (parseInt(mapping[2]!, 16) - parseInt(mapping[1]!, 16)) / 1024;
      const name = mapping[3]!.trim();
      kind = name === '[heap]' ? 'mallocHeap' : name.startsWith('/') ? 'files' : name === '' ? (sizeKiB === 256 ? 'v8Pages' : 'otherAnonymous') : undefined;
    } else if (kind && line.startsWith('Rss:')) kib[kind] += Number(line.split(/\s+/)[1]);
  }
  return { v8Pages: mib(kib.v8Pages * 1024), mallocHeap: mib(kib.mallocHeap * 1024), otherAnonymous: mib(kib.otherAnonymous * 1024), files: mib(kib.files * 1024) };
}

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
  setInterval(async () => {
    const heap = v8.getHeapStatistics();
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    const perWorker: StackHeapLine['workers'] = {};
    for (const [worker, name] of workers) {
      const stats = await worker.getHeapStatistics().catch(() => undefined);
      if (stats) perWorker[name] = { totalMiB: mib(stats.total_heap_size), usedMiB: mib(stats.used_heap_size) };
    }
    const line: StackHeapLine = {
      s: Math.round((Date.now() - t0) / 1000),
      rssMiB: mib(process.memoryUsage.rss()),
      main: { totalMiB: mib(heap.total_heap_size), usedMiB: mib(heap.used_heap_size), youngMiB: mib(young?.space_size ?? 0), arrayBuffersMiB: mib(process.memoryUsage().arrayBuffers) },
      workers: perWorker,
      residentMiB: residentByKind(),
    };
    appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  }, INTERVAL_MS).unref();
}
