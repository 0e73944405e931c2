/**
 * Bench phase `bulk-memory` (issue #40): a 5,000-line job leaves the stack's memory within 10 % of
 * what it was before the job. On a fresh local stack, as a customer's job finds it:
 * - warm-up: a small job of the same input (BENCH_BULK_MEMORY_WARMUP_LINES, 100) to its end, so the
 *   stack has launched Chromium, compiled its code and sized its pools (a stack that has served
 *   nothing yet is smaller than any stack a second job meets), then SETTLE_MS of rest;
 * - before: the stack process's resident memory (RSS, the Node process that is the service: the
 *   API, the Lambda functions' handlers and their worker threads; its Chromiums are children and
 *   counted apart, and so is the AWS stand-ins' process, lib/local/standins-process.ts, which
 *   plays DynamoDB, S3 and SQS, AWS's services and not ours: its RSS is reported beside);
 * - the job: the bulk phase's input (invoices, a fourth template lines, 1 % invalid and skipped,
 *   `archive: true`) of BENCH_BULK_MEMORY_LINES (5,000) lines, submitted and followed to its end,
 *   the stack process and the whole tree sampled every 250 ms for their peaks;
 * - after: the stack process's RSS once it has rested SETTLE_MS after the job ended, before the
 *   checks (which download every PDF through the stack, and would measure those downloads too);
 * - then the bulk phase's checks: quota used == listed == downloadable == manifest == ZIP.
 * The target: after ≤ before × 1.10. Nothing forces a garbage collection: what is measured is what
 * the process holds on to by itself.
 *
 * Diagnosis, BENCH_BULK_MEMORY_DIAGNOSE=<directory>: the stack runs with --expose-gc (which changes
 * nothing until called); once *after* is read, the probe collects garbage, reads again and writes a
 * heap snapshot into the directory, beside the probe's log (heap-log.jsonl): what after a job is
 * garbage not yet collected, and what is held, by whom.
 *
 * Alone: `BENCH_PHASES=bulk-memory npm run bench` or `node bench/lib/bulk-memory.ts`.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BulkClient, checkBulkJob, jobFigures, submitAndWait, uploadBulkInput, type BulkCounts, type BulkJobFigures } from './bulk-job.ts';
import { ProcessPeaks, rssMiB } from './bulk.ts';
import { processTree } from './rss.ts';
import type { StackHeapLine } from './stack-heap-log.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';

/** Rest before each reading: long enough for the job's last work (the completion's files, the webhook) to end and V8 to collect on its own. */
const SETTLE_MS = 30_000;
/** after / before at most. */
export const BULK_MEMORY_TARGET_RATIO = 1.1;

export interface BulkMemoryResult extends BulkJobFigures {
  readonly warmupLines: number;
  /** The stack process's RSS just after it started, after the warm-up job and its rest (before), at most during the job, and after the job and its rest (MiB). */
  readonly stackStartMiB: number;
  readonly stackBeforeMiB: number;
  readonly stackPeakMiB: number;
  readonly stackAfterMiB: number;
  /** after / before. */
  readonly afterOverBefore: number;
  /** The AWS stand-ins' process, before and after as the stack process (MiB; not the service's, reported beside it). */
  readonly standInsBeforeMiB: number;
  readonly standInsAfterMiB: number;
  /**
   * Inside the stack process just before each reading (bench/lib/stack-heap-log.ts, every 2 s): its
   * main isolate's heap, its workers' heaps, and its resident memory by kind (V8's pages, glibc's
   * heap...), which tell what the service keeps from what V8 and the allocator keep around it.
   */
  readonly insideBefore: StackReading | undefined;
  readonly insideAfter: StackReading | undefined;
  /** The whole tree (the stack process and its Chromiums) at its peak during the job (MiB). */
  readonly treePeakMiB: number;
  readonly settleSeconds: number;
  readonly counts: BulkCounts;
  readonly exact: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (value: number) => Math.round(value * 10) / 10;

/** A reading of the stack process: the probe's last line from inside, and its resident memory by kind of mapping, read from outside. */
export interface StackReading extends StackHeapLine {
  readonly residentMiB: { readonly v8Pages: number; readonly mallocHeap: number; readonly otherAnonymous: number; readonly files: number };
}

/**
 * A process's resident memory by kind of mapping, from /proc/<pid>/smaps: V8's 256 KiB heap pages,
 * glibc's main heap (`[heap]`), other anonymous memory (thread arenas and stacks, large buffers,
 * V8's larger mappings), files.
 */
function residentByKind(pid: number): StackReading['residentMiB'] {
  const kib = { v8Pages: 0, mallocHeap: 0, otherAnonymous: 0, files: 0 };
  let kind: keyof typeof kib | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const sizeKiB = (parseInt(mapping[2]!, 16) - parseInt(mapping[1]!, 16)) / 1024;
      const name = mapping[3]!.trim();
      kind = name === '[heap]' ? 'mallocHeap' : name.startsWith('/') ? 'files' : name === '' ? (sizeKiB === 256 ? 'v8Pages' : 'otherAnonymous') : undefined;
    } else if (kind && line.startsWith('Rss:')) kib[kind] += Number(line.split(/\s+/)[1]);
  }
  return { v8Pages: round1(kib.v8Pages / 1024), mallocHeap: round1(kib.mallocHeap / 1024), otherAnonymous: round1(kib.otherAnonymous / 1024), files: round1(kib.files / 1024) };
}

/** The lines bench/lib/stack-heap-log.ts has written so far. */
function heapLines(file: string): StackHeapLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as StackHeapLine);
}

/** A probe's line, with the stack's resident memory by kind now. */
const reading = (line: StackHeapLine | undefined, pid: number): StackReading | undefined => line && { ...line, residentMiB: residentByKind(pid) };

const describeInside = (line: StackReading | undefined) =>
  line
    ? `main heap ${line.main.usedMiB} used of ${line.main.totalMiB} MiB (young generation ${line.main.youngMiB}, ArrayBuffers ${line.main.arrayBuffersMiB}); ` +
      `workers ${Object.entries(line.workers).map(([name, heap]) => `${name} ${heap.usedMiB}/${heap.totalMiB}`).join(', ')}; ` +
      `resident: V8 pages ${line.residentMiB.v8Pages}, glibc heap ${line.residentMiB.mallocHeap}, other anonymous ${line.residentMiB.otherAnonymous}, files ${line.residentMiB.files} MiB`
    : 'no heap log';

/** The RSS of the stack's AWS stand-ins' process (a child of the stack process), 0 if none is found. */
function standInsMiB(stackPid: number): number {
  for (const pid of processTree(stackPid)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('standins-process')) return rssMiB(pid);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

export async function runBulkMemory(options: { lines: number; warmupLines: number }, log: (line: string) => void): Promise<BulkMemoryResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-bulk-memory-'));
  const heapLog = join(dataDir, 'heap-log.jsonl');
  const diagnosisDir = process.env.BENCH_BULK_MEMORY_DIAGNOSE;
  if (diagnosisDir) mkdirSync(diagnosisDir, { recursive: true });
  const stack = await startStackProcess(
    dataDir,
    undefined,
    { STACK_HEAP_LOG: heapLog, STACK_HEAP_LOG_MS: '2000', ...(diagnosisDir && { STACK_HEAP_SNAPSHOT_DIR: diagnosisDir }) },
    ['--import', './bench/lib/stack-heap-log.ts', ...(diagnosisDir ? ['--expose-gc'] : [])],
  );
  const pid = stack.child.pid!;
  let peaks: ProcessPeaks | undefined;
  try {
    const stackStartMiB = rssMiB(pid);
    // The warm-up runs under a key of its own: the job's checks count the key's quota and PDFs.
    const warmupClient = new BulkClient(stack.info.apiUrl, (await createBenchKey(dataDir, { name: 'bench-warm-up' })).apiKey);
    const warmup = await submitAndWait(warmupClient, await uploadBulkInput(warmupClient, options.warmupLines), options.warmupLines, log);
    const client = new BulkClient(stack.info.apiUrl, (await createBenchKey(dataDir)).apiKey);
    log(`warm-up: ${options.warmupLines} lines ${warmup.job.status} in ${round1(warmup.seconds)} s; resting ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const stackBeforeMiB = rssMiB(pid);
    const standInsBeforeMiB = standInsMiB(pid);
    const insideBefore = reading(heapLines(heapLog).at(-1), pid);
    log(`inside before: ${describeInside(insideBefore)}`);
    log(`stack process: ${round1(stackStartMiB)} MiB at start, ${round1(stackBeforeMiB)} MiB before the job (AWS stand-ins' process ${round1(standInsBeforeMiB)} MiB)`);

    const uploadId = await uploadBulkInput(client, options.lines);
    peaks = new ProcessPeaks(pid);
    peaks.start(250);
    const finished = await submitAndWait(client, uploadId, options.lines, log);
    await sleep(SETTLE_MS);
    peaks.stop();
    const stackAfterMiB = rssMiB(pid);
    const standInsAfterMiB = standInsMiB(pid);
    const insideAfter = reading(heapLines(heapLog).at(-1), pid);
    log(`inside after: ${describeInside(insideAfter)}`);
    if (diagnosisDir) {
      process.kill(pid, 'SIGUSR2');
      const afterCollection = () => heapLines(heapLog).find((line) => line.afterCollection);
      for (let waited = 0; waited < 30_000 && !afterCollection(); waited += 100) await sleep(100);
      log(`inside after a forced collection: ${describeInside(reading(afterCollection(), pid))}`);
      const snapshot = join(diagnosisDir, 'stack-after-job.heapsnapshot');
      for (let waited = 0; waited < 120_000 && !existsSync(snapshot); waited += 1_000) await sleep(1_000);
      await sleep(5_000);
      log(`heap snapshot: ${snapshot}`);
      copyFileSync(heapLog, join(diagnosisDir, 'heap-log.jsonl'));
    }
    const { counts, exact } = await checkBulkJob(client, finished, options.lines);
    const result: BulkMemoryResult = {
      ...jobFigures(options.lines, finished),
      warmupLines: options.warmupLines,
      stackStartMiB: round1(stackStartMiB),
      stackBeforeMiB: round1(stackBeforeMiB),
      stackPeakMiB: round1(peaks.peaks.get('stack (node)')?.peakMiB ?? 0),
      stackAfterMiB: round1(stackAfterMiB),
      afterOverBefore: Math.round((stackAfterMiB / stackBeforeMiB) * 1000) / 1000,
      standInsBeforeMiB: round1(standInsBeforeMiB),
      standInsAfterMiB: round1(standInsAfterMiB),
      insideBefore,
      insideAfter,
      treePeakMiB: round1(peaks.treePeakMiB),
      settleSeconds: SETTLE_MS / 1000,
      counts,
      exact,
    };
    log(
      `${options.lines} lines: ${result.status} in ${result.seconds} s (${result.linesPerSecond} lines/s); stack process ${result.stackBeforeMiB} MiB before, ` +
        `${result.stackPeakMiB} MiB at most, ${result.stackAfterMiB} MiB ${result.settleSeconds} s after (×${result.afterOverBefore}); ` +
        `AWS stand-ins' process ${result.standInsBeforeMiB} → ${result.standInsAfterMiB} MiB; tree peak ${result.treePeakMiB} MiB; ` +
        `quota ${counts.quotaUsed} == listed ${counts.listed} == downloadable ${counts.downloadable} == manifest ${counts.manifestSuccesses} == ZIP ${counts.archiveEntries}: ${exact}`,
    );
    return result;
  } finally {
    peaks?.stop();
    await stopStackProcess(stack);
    // With BENCH_STACK_NODE_ARGS="--trace-gc --trace-memory-reducer", V8's own account of its collections.
    if (diagnosisDir) writeFileSync(join(diagnosisDir, 'stack-output.log'), stack.output.join(''));
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Fails the phase when the job was not exact (the memory target is the report's, as every target). */
export function assertBulkMemoryExact(result: BulkMemoryResult): void {
  if (!result.exact) throw new Error(`the ${result.lines}-line job was not exact: ${JSON.stringify(result.counts)}`);
}

if (import.meta.main) {
  const lines = Number(process.env.BENCH_BULK_MEMORY_LINES ?? 5_000);
  const warmupLines = Number(process.env.BENCH_BULK_MEMORY_WARMUP_LINES ?? 100);
  const result = await runBulkMemory({ lines, warmupLines }, (line) => console.log(line));
  console.log(JSON.stringify(result, null, 2));
  assertBulkMemoryExact(result);
}
