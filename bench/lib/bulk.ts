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
import { ProcessTable } from './rss.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';

const invoice = (n: number) =>
  `<!doctype html><html lang="en"><h1>Invoice INV-${1000 + n}</h1><p>Billed to: Customer ${n}</p>` +
  `<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr><tr><td>Consulting</td><td>${(n % 7) + 1}</td><td>${((n % 7) + 1) * 120}.00</td></tr></table>`;
const INVOICE_TEMPLATE =
  '<!doctype html><html lang="en"><h1>Invoice {{ number }}</h1><p>Billed to: {{ customer }}</p>' +
  '<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>{% for line in lines %}<tr><td>{{ line.item }}</td><td>{{ line.qty }}</td><td>{{ line.price }}</td></tr>{% endfor %}</table>';

/** Every fourth line names the template; every hundredth is invalid (an unknown field). */
function inputLine(n: number, templateId: string): unknown {
  if (n % 100 === 0) return { html: '<p>x</p>', colour: 'red' };
  if (n % 4 === 0) return { template_id: templateId, data: { number: `INV-${1000 + n}`, customer: `Customer ${n}`, lines: [{ item: 'Consulting', qty: (n % 7) + 1, price: ((n % 7) + 1) * 120 }] }, metadata: { n } };
  return { html: invoice(n), metadata: { n } };
}

export interface ProcessPeak {
  /** The largest resident set of one process of this kind, in MiB. */
  readonly peakMiB: number;
  /** The most processes of this kind seen at once. */
  readonly most: number;
}

export interface BulkRun {
  readonly lines: number;
  readonly invalid: number;
  readonly templateLines: number;
  /** Submission (POST /v1/pdf/bulk, the upload already PUT) to the job's end, as polled once a second. */
  readonly seconds: number;
  readonly linesPerSecond: number;
  /** POST /v1/pdf/bulk's answer: every line read and checked, the quota reserved, the chunks queued. */
  readonly submitMs: number;
  readonly status: string;
  readonly succeeded: number;
  readonly failed: number;
  /** Peak of the stack's whole tree (the sum over its processes), in MiB, and of each kind of process. */
  readonly treePeakMiB: number;
  readonly processes: Record<string, ProcessPeak>;
  /** quota used, PDFs listed, downloadable, manifest successes, ZIP entries: all equal when exact. */
  readonly counts: { readonly quotaUsed: number; readonly listed: number; readonly downloadable: number; readonly manifestSuccesses: number; readonly archiveEntries: number };
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

function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples a tree every `intervalMs`: each kind of process's largest resident set, and the tree's sum. */
class ProcessPeaks {
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (value: number) => Math.round(value * 10) / 10;

async function api(apiUrl: string, apiKey: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(apiUrl + path, {
    method,
    redirect: 'manual',
    headers: { Authorization: `Bearer ${apiKey}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) };
}

/** Entries of a ZIP, from its end of central directory record (no comment; below 65,535 entries). */
function zipEntries(bytes: Uint8Array): number {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = view.length - 22;
  if (end < 0 || view.readUInt32LE(end) !== 0x06054b50) throw new Error('no end of central directory record where expected');
  return view.readUInt16LE(end + 10);
}

/** One bulk job of `lines` lines on a fresh stack. */
export async function runBulkJob(lines: number, log: (line: string) => void): Promise<BulkRun> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-bulk-'));
  let peaks: ProcessPeaks | undefined;
  const stack = await startStackProcess(dataDir, (pid) => {
    peaks = new ProcessPeaks(pid);
    peaks.start(250);
  });
  try {
    const { apiUrl } = stack.info;
    const key = await createBenchKey(dataDir);
    const template = await api(apiUrl, key.apiKey, 'POST', '/v1/templates', { name: 'Invoice', html: INVOICE_TEMPLATE });
    if (template.status !== 201) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`);
    const file = Array.from({ length: lines }, (_, i) => JSON.stringify(inputLine(i + 1, template.body.template_id)) + '\n').join('');
    const upload = await api(apiUrl, key.apiKey, 'POST', '/v1/uploads');
    const put = await fetch(upload.body.url, { method: 'PUT', body: file });
    if (put.status !== 200) throw new Error(`upload PUT: ${put.status}`);

    // Timed: submission to the job's end.
    const started = performance.now();
    const accepted = await api(apiUrl, key.apiKey, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id, skip_invalid: true, archive: true });
    const submitMs = performance.now() - started;
    if (accepted.status !== 202) throw new Error(`bulk: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    const jobId = accepted.body.job_id as string;
    let job: any;
    for (let lastLog = 0; ; await sleep(1_000)) {
      job = (await api(apiUrl, key.apiKey, 'GET', `/v1/jobs/${jobId}`)).body;
      if (job.completed_at) break;
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        log(`${lines} lines: ${job.succeeded + job.failed} of ${lines} done after ${Math.round((performance.now() - started) / 1000)} s`);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    peaks!.stop();

    // Checked outside the timed part.
    const manifestLines = (await (await fetch((await api(apiUrl, key.apiKey, 'GET', `/v1/jobs/${jobId}/manifest`)).headers.get('location')!)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; success: boolean; pdf_id?: string; download_url?: string });
    const successes = manifestLines.filter((line) => line.success);
    const listed = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = (await api(apiUrl, key.apiKey, 'GET', `/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      for (const record of page.data as { id: string }[]) listed.add(record.id);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    const quotaUsed = (await api(apiUrl, key.apiKey, 'GET', '/v1/usage')).body.quota_used as number;
    let downloadable = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < successes.length) {
          const line = successes[next++]!;
          const bytes = new Uint8Array(await (await fetch(line.download_url!)).arrayBuffer());
          if (Buffer.from(bytes.subarray(0, 5)).toString() === '%PDF-') downloadable++;
        }
      }),
    );
    const archive = new Uint8Array(await (await fetch((await api(apiUrl, key.apiKey, 'GET', `/v1/jobs/${jobId}/archive`)).headers.get('location')!)).arrayBuffer());
    const archiveEntries = zipEntries(archive);
    const counts = { quotaUsed, listed: listed.size, downloadable, manifestSuccesses: successes.length, archiveEntries };
    const manifestInOrder = manifestLines.length === lines && manifestLines.every((line, i) => line.line === i + 1);
    const exact =
      manifestInOrder &&
      successes.every((line) => listed.has(line.pdf_id!)) &&
      Object.values(counts).every((count) => count === successes.length) &&
      successes.length === job.succeeded;
    const processes = Object.fromEntries([...peaks!.peaks].map(([kind, peak]) => [kind, { peakMiB: round1(peak.peakMiB), most: peak.most }]));
    const run: BulkRun = {
      lines,
      invalid: Math.floor(lines / 100),
      templateLines: Math.floor(lines / 4) - Math.floor(lines / 100),
      seconds: round1(seconds),
      linesPerSecond: round1(lines / seconds),
      submitMs: Math.round(submitMs),
      status: job.status,
      succeeded: job.succeeded,
      failed: job.failed,
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
