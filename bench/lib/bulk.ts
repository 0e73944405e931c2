/**
 * Bench phase `bulk` (issue #32): a bulk job through the local stack, as a customer sends one: a JSON
 * Lines upload (`POST /v1/uploads`, then PUT) of invoices, html and template lines mixed, 1 % invalid
 * and skipped (`skip_invalid`), with `archive: true`; then `POST /v1/pdf/bulk` and polling until the
 * job ends. Measured per job size (500 and 2,000 lines by default, BENCH_BULK_SIZES): the time from
 * submission to the end, lines per second, and the peak resident memory of every process of the
 * stack's tree (the stack's own Node process, and each kind of Chromium process: its largest one),
 * sampled from /proc every 250 ms, with the tree's peak sum. Memory must not grow with the job.
 *
 * After each job, outside the timed part: manifest lines == input lines in order, quota used == PDFs
 * listed == downloadable (every one fetched through its link) == manifest successes, and the ZIP
 * holds every stored PDF.
 *
 * Run alone: `node bench/lib/bulk.ts` (BENCH_BULK_SIZES=500,2000 by default).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BulkClient, checkBulkJob, jobFigures, submitAndWait, uploadBulkInput, type BulkCounts, type BulkJobFigures } from './bulk-job.ts';
import { ProcessTable } from './rss.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';

export interface ProcessPeak {
  /** The largest resident set of one process of this kind, in MiB. */
  readonly peakMiB: number;
  /** The most processes of this kind seen at once. */
  readonly most: number;
}

export interface BulkRun extends BulkJobFigures {
  /** Peak of the stack's whole tree (the sum over its processes), in MiB, and of each kind of process. */
  readonly treePeakMiB: number;
  readonly processes: Record<string, ProcessPeak>;
  /** quota used, PDFs listed, downloadable, manifest successes, ZIP entries: all equal when exact. */
  readonly counts: BulkCounts;
  readonly manifestInOrder: boolean;
  readonly exact: boolean;
}

/** What kind of process a pid of the stack's tree is, from its command line. */
function kindOf(pid: number, root: number): string {
  if (pid === root) return 'stack (node)';
  let command: string;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return 'gone';
  }
  // The AWS stand-ins' process (lib/local/standins-process.ts): AWS's services, not the service's.
  if (command.includes('standins-process')) return 'AWS stand-ins (node)';
  const type = /--type=([\w-]+)/.exec(command)?.[1];
  if (type) return `Chromium ${type}`;
  if (/chrom|headless/i.test(command)) return 'Chromium browser';
  const name = command.split(' ')[0]!.split('/').pop();
  if (name) return name;
  // No command line (yet): a process just forked, named by its thread name.
  try {
    return `${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()} (forked)`;
  } catch {
    return 'gone';
  }
}

export function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a tree every `intervalMs`: each kind of process's largest resident set, and the tree's sum. */
export class ProcessPeaks {
  readonly #table = new ProcessTable();
  readonly #kinds = new Map<number, string>();
  readonly peaks = new Map<string, { peakMiB: number; most: number }>();
  treePeakMiB = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly root: number;

  constructor(root: number) {
    this.root = root;
  }

  start(intervalMs: number): void {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.sample();
  }

  sample(): void {
    this.#table.refresh();
    let sum = 0;
    const counts = new Map<string, number>();
    for (const pid of this.#table.tree(this.root)) {
      let kind = this.#kinds.get(pid);
      if (!kind) this.#kinds.set(pid, (kind = kindOf(pid, this.root)));
      const mib = rssMiB(pid);
      if (mib === 0) continue;
      sum += mib;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      const peak = this.peaks.get(kind) ?? { peakMiB: 0, most: 0 };
      peak.peakMiB = Math.max(peak.peakMiB, mib);
      this.peaks.set(kind, peak);
    }
    for (const [kind, count] of counts) this.peaks.get(kind)!.most = Math.max(this.peaks.get(kind)!.most, count);
    this.treePeakMiB = Math.max(this.treePeakMiB, sum);
  }
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** One bulk job of `lines` lines on a fresh stack. */
export async function runBulkJob(lines: number, log: (line: string) => void): Promise<BulkRun> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-bulk-'));
  let peaks: ProcessPeaks | undefined;
  const stack = await startStackProcess(dataDir, (pid) => {
    peaks = new ProcessPeaks(pid);
    peaks.start(250);
  });
  try {
    const client = new BulkClient(stack.info.apiUrl, (await createBenchKey(dataDir)).apiKey);
    const uploadId = await uploadBulkInput(client, lines);
    const finished = await submitAndWait(client, uploadId, lines, log);
    peaks!.stop();
    const { counts, manifestInOrder, exact } = await checkBulkJob(client, finished, lines);
    const processes = Object.fromEntries([...peaks!.peaks].map(([kind, peak]) => [kind, { peakMiB: round1(peak.peakMiB), most: peak.most }]));
    const run: BulkRun = {
      ...jobFigures(lines, finished),
      treePeakMiB: round1(peaks!.treePeakMiB),
      processes,
      counts,
      manifestInOrder,
      exact,
    };
    log(
      `${lines} lines: ${run.status} in ${run.seconds} s (${run.linesPerSecond} lines/s, submission ${run.submitMs} ms), ${run.succeeded} succeeded, ${run.failed} failed; ` +
        `peak RSS: tree ${run.treePeakMiB} MiB, ${Object.entries(processes).map(([kind, peak]) => `${kind} ${peak.peakMiB} MiB (×${peak.most})`).join(', ')}; ` +
        `quota ${counts.quotaUsed} == listed ${counts.listed} == downloadable ${counts.downloadable} == manifest ${counts.manifestSuccesses} == ZIP ${counts.archiveEntries}: ${exact}`,
    );
    return run;
  } finally {
    peaks?.stop();
    await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  }
}

export interface BulkResults {
  readonly runs: readonly BulkRun[];
}

/** The job sizes (BENCH_BULK_SIZES, comma separated; 500 and 2,000 by default). */
export function bulkSizes(): number[] {
  const raw = process.env.BENCH_BULK_SIZES ?? '500,2000';
  const sizes = raw.split(',').map((size) => Number(size.trim()));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1 || size > 100_000)) throw new Error(`BENCH_BULK_SIZES must be sizes from 1 to 100000, got "${raw}"`);
  return sizes;
}

export async function runBulk(log: (line: string) => void): Promise<BulkResults> {
  const runs: BulkRun[] = [];
  for (const lines of bulkSizes()) runs.push(await runBulkJob(lines, log));
  return { runs };
}

if (import.meta.main) {
  const results = await runBulk((line) => console.log(line));
  console.log(JSON.stringify(results, null, 2));
}
