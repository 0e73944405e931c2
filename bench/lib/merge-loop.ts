/**
 * Bench phase `merge-loop` (issue #39): what joining a batch's PDFs costs the event loop that serves
 * every customer. The same join, 100 items of a 300-page document Chromium printed (as the service
 * prints it: tagged, with links), made twice in this process:
 * 1. on the loop: MergedPdfWriter on this thread, an item at a time, as lib/documents/merge.ts ran it
 *    before the merge workers (each item parsed and copied in one block of CPU);
 * 2. in a worker: lib/documents/pdf-workers.ts mergeInWorker, as storeMergedPdf runs it now (this
 *    thread only hands each item over).
 * Reported for each: the event loop's delay p99 and max (perf_hooks.monitorEventLoopDelay, 5 ms
 * resolution), the wall time, and the merged file's pages (the same both ways).
 *
 * Target: the loop's delay p99 during the worker's merge under 50 ms (the "no more than about
 * 50 ms of CPU on the loop"). Through the API a merged file has at most MAX_PDF_PAGES (2,000) pages;
 * 100 × 300 is the writer's cost measured on its own, the figure.
 *
 * Run alone: `BENCH_PHASES=merge-loop npm run bench`.
 */
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MergedPdfWriter } from '../../lib/documents/merged-pdf-writer.ts';
import { mergeInWorker, mergePool } from '../../lib/documents/pdf-workers.ts';
import { launchLikeService, serviceExecutablePath } from './chromium.ts';
import { round } from './stats.ts';

export const MERGE_LOOP_TARGET_P99_MS = 50;
const ITEMS = 100;
const PAGES = 300;

export interface MergeLoopRun {
  readonly delayP99Ms: number;
  readonly delayMaxMs: number;
  readonly wallMs: number;
  readonly pages: number;
  readonly bytes: number;
}

export interface MergeLoopResults {
  readonly items: number;
  readonly itemPages: number;
  readonly itemBytes: number;
  readonly onTheLoop: MergeLoopRun;
  readonly inAWorker: MergeLoopRun;
}

/** A 300-page report: a heading, two paragraphs and a link on every page. */
function report(): string {
  const page = (n: number) => `<section><h2>Section ${n}</h2>
<p>${'Quarterly figures for the region, with notes on each line item and the assumptions behind them. '.repeat(8)}</p>
<p>${'The totals are carried over to the summary, where they are compared with the plan. '.repeat(8)} <a href="https://example.com/notes/${n}">Notes</a></p></section>`;
  return `<!doctype html><html lang="en"><style>section { break-after: page }</style>
<body>${Array.from({ length: PAGES }, (_, n) => page(n + 1)).join('')}</body></html>`;
}

async function printReport(): Promise<Uint8Array> {
  const browser = await launchLikeService(await serviceExecutablePath());
  try {
    const page = await browser.newPage();
    await page.setContent(report(), { waitUntil: 'load' });
    return await page.pdf({ format: 'A4', printBackground: true, tagged: true, margin: { top: '1cm', bottom: '1cm', left: '1cm', right: '1cm' }, timeout: 120_000 });
  } finally {
    await browser.close();
  }
}

async function measured(work: (file: FileHandle) => Promise<{ pages: number; size: number }>): Promise<MergeLoopRun> {
  const directory = await mkdtemp(join(tmpdir(), 'bench-merge-'));
  const file = await open(join(directory, 'merged.pdf'), 'w');
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  try {
    histogram.enable();
    const started = performance.now();
    const { pages, size } = await work(file);
    const wallMs = performance.now() - started;
    histogram.disable();
    return { delayP99Ms: round(histogram.percentile(99) / 1e6), delayMaxMs: round(histogram.max / 1e6), wallMs: round(wallMs), pages, bytes: size };
  } finally {
    await file.close();
    await rm(directory, { recursive: true, force: true });
  }
}

export async function runMergeLoop(log: (line: string) => void): Promise<MergeLoopResults> {
  const item = await printReport();
  log(`printed a ${PAGES}-page report: ${item.byteLength} bytes`);

  const onTheLoop = await measured(async (file) => {
    const writer = new MergedPdfWriter(async (chunk) => void (await file.write(chunk)));
    for (let n = 0; n < ITEMS; n++) await writer.append(item);
    await writer.finish();
    return { pages: writer.pages, size: writer.size };
  });
  log(`on the loop: delay p99 ${onTheLoop.delayP99Ms} ms, max ${onTheLoop.delayMaxMs} ms, ${onTheLoop.wallMs} ms, ${onTheLoop.pages} pages`);

  // A worker loaded first, as in a process that has served a merge.
  await mergePool().use('bench', async () => undefined);
  const inAWorker = await measured(async (file) => {
    async function* items() {
      // A copy each: mergeInWorker hands each item's buffer over to the worker.
      for (let n = 0; n < ITEMS; n++) yield item.slice();
    }
    return mergeInWorker('bench', file.fd, items(), { maxBytes: Number.POSITIVE_INFINITY });
  });
  log(`in a worker: delay p99 ${inAWorker.delayP99Ms} ms, max ${inAWorker.delayMaxMs} ms, ${inAWorker.wallMs} ms, ${inAWorker.pages} pages`);
  await mergePool().close();
  return { items: ITEMS, itemPages: PAGES, itemBytes: item.byteLength, onTheLoop, inAWorker };
}

if (import.meta.main) {
  console.log(JSON.stringify(await runMergeLoop(console.log), null, 2));
}
