/**
 * The floor: raw puppeteer-core on a warm browser launched like the service's, each document
 * printed with nothing around it. Two shapes:
 * - latency: one page, reused, documents one after another (the absolute best single-document time);
 * - throughput: N pages in parallel, each reused, for N = 1..max; the best N is the floor.
 * Also measured for context (not a target): the same with a fresh browser context per document, the
 * isolation the service keeps, to show what isolation itself costs.
 *
 * Paired measurements: the machine is shared and its speed drifts over a run, so a comparison
 * between a floor measured now and a service measured a minute later also measures the drift. The
 * service phase therefore follows each document's single generates with the floor's latency of that
 * document, and each batch with a floor pass of the same size at the floor's best concurrency
 * (openPairedFloor); the targets compare the two under the same conditions.
 */
import type { Browser, Page } from 'puppeteer-core';
import type { BenchConfig } from './config.ts';
import { CORPUS, corpusDocument, THROUGHPUT_DOCUMENT, type CorpusDocument } from './corpus.ts';
import { launchLikeService, prepare, printOnPage, type PreparedDocument } from './chromium.ts';
import { checkPdf } from './pdf.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

export interface ThroughputLevel {
  readonly concurrency: number;
  /** Documents per second of each pass. */
  readonly passes: number[];
  readonly best: number;
}

export interface FloorResult {
  readonly browserVersion: string;
  readonly launchMs: number;
  readonly latency: Record<string, LatencySummary & { pages: number }>;
  /** The concurrency sweep on the throughput document. */
  readonly throughputLevels: ThroughputLevel[];
  readonly best: { readonly document: string; readonly concurrency: number; readonly docsPerSecond: number };
  /** Every document's throughput at that best concurrency. */
  readonly throughputByDocument: Record<string, number>;
  /** A new browser context (and page) per document, as the service isolates documents. */
  readonly isolated: { readonly document: string; readonly latency: LatencySummary; readonly docsPerSecond: number; readonly concurrency: number };
  /** The same for the scripted document: what the service's one-workspace-per-scripted-document costs. */
  readonly isolatedScripted: { readonly document: string; readonly latency: LatencySummary };
}

type PrintOne = (prepared: PreparedDocument) => Promise<Uint8Array>;
/** A worker prints documents one after another; it gets its page (or whatever it needs) once. */
type WorkerFactory = (browser: Browser) => Promise<{ print: PrintOne; close(): Promise<void> }>;

const reusedPage: WorkerFactory = async (browser) => {
  const page: Page = await browser.newPage();
  return { print: (prepared) => printOnPage(page, prepared), close: () => page.close() };
};

const contextPerDocument: WorkerFactory = async (browser) => ({
  async print(prepared) {
    const context = await browser.createBrowserContext();
    try {
      return await printOnPage(await context.newPage(), prepared);
    } finally {
      await context.close();
    }
  },
  close: async () => undefined,
});

/** Sequential latency of one document: warm-ups, then measured runs. Every PDF is checked (untimed). */
async function latency(print: PrintOne, prepared: PreparedDocument, config: BenchConfig, mismatches: string[]) {
  const times: number[] = [];
  let pages = 0;
  for (let i = 0; i < config.warmup + config.runs; i++) {
    const started = performance.now();
    const bytes = await print(prepared);
    const ms = performance.now() - started;
    if (i >= config.warmup) times.push(ms);
    pages = await checkPdf(bytes, prepared.document.expectedPages, `floor ${prepared.document.name}`, mismatches);
  }
  return { ...summarize(times), pages };
}

/**
 * Documents per second with `concurrency` workers sharing `docs` documents. Each worker renders one
 * unmeasured document first; the clock runs from when all are warm until the last PDF is out.
 */
async function throughput(
  browser: Browser,
  factory: WorkerFactory,
  prepared: PreparedDocument,
  concurrency: number,
  docs: number,
  mismatches: string[],
): Promise<number> {
  const workers = await Promise.all(Array.from({ length: concurrency }, () => factory(browser)));
  await Promise.all(workers.map((worker) => worker.print(prepared)));
  const outputs: Uint8Array[] = [];
  let claimed = 0;
  const started = performance.now();
  await Promise.all(
    workers.map(async (worker) => {
      while (claimed < docs) {
        claimed++;
        outputs.push(await worker.print(prepared));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map((worker) => worker.close()));
  for (const bytes of outputs) await checkPdf(bytes, prepared.document.expectedPages, `floor ${prepared.document.name}`, mismatches);
  return docs / seconds;
}

export async function runFloor(executablePath: string, config: BenchConfig, mismatches: string[], log: (line: string) => void): Promise<FloorResult> {
  const launchStarted = performance.now();
  const browser = await launchLikeService(executablePath);
  const launchMs = round(performance.now() - launchStarted);
  try {
    const browserVersion = await browser.version();
    log(`browser ${browserVersion} launched in ${launchMs} ms`);

    const page = await browser.newPage();
    const latencies: FloorResult['latency'] = {};
    for (const document of CORPUS) {
      latencies[document.name] = await latency((prepared) => printOnPage(page, prepared), prepare(document), config, mismatches);
      const l = latencies[document.name];
      log(`latency ${document.name}: p50 ${l?.p50} ms, p95 ${l?.p95} ms (${l?.pages} pages)`);
    }
    await page.close();

    const throughputDoc = prepare(corpusDocument(THROUGHPUT_DOCUMENT));
    const levels: ThroughputLevel[] = [];
    for (let concurrency = 1; concurrency <= config.maxConcurrency; concurrency++) {
      const passes: number[] = [];
      for (let pass = 0; pass < config.floorRepeats; pass++) {
        passes.push(round(await throughput(browser, reusedPage, throughputDoc, concurrency, config.floorDocs, mismatches)));
      }
      levels.push({ concurrency, passes, best: Math.max(...passes) });
      log(`throughput ${THROUGHPUT_DOCUMENT} x${concurrency}: ${passes.join(', ')} docs/s`);
    }
    const bestLevel = levels.reduce((a, b) => (b.best > a.best ? b : a));

    // The other documents at the concurrency found best, with fewer documents (the report is long).
    const byDocument: Record<string, number> = { [THROUGHPUT_DOCUMENT]: bestLevel.best };
    for (const document of CORPUS.filter((d) => d.name !== THROUGHPUT_DOCUMENT)) {
      const docs = Math.max(bestLevel.concurrency * 3, Math.ceil(config.floorDocs / 3));
      byDocument[document.name] = round(await throughput(browser, reusedPage, prepare(document), bestLevel.concurrency, docs, mismatches));
      log(`throughput ${document.name} x${bestLevel.concurrency}: ${byDocument[document.name]} docs/s`);
    }

    const isolatedWorker = await contextPerDocument(browser);
    const isolatedLatency = await latency(isolatedWorker.print, throughputDoc, config, mismatches);
    const isolatedRate = round(await throughput(browser, contextPerDocument, throughputDoc, bestLevel.concurrency, config.floorDocs, mismatches));
    log(`context per document ${THROUGHPUT_DOCUMENT}: p50 ${isolatedLatency.p50} ms, ${isolatedRate} docs/s x${bestLevel.concurrency}`);
    const scripted = corpusDocument('js-dashboard');
    const isolatedScriptedLatency = await latency(isolatedWorker.print, prepare(scripted), config, mismatches);
    log(`context per document ${scripted.name}: p50 ${isolatedScriptedLatency.p50} ms`);


    return {
      browserVersion,
      launchMs,
      latency: latencies,
      throughputLevels: levels,
      best: { document: THROUGHPUT_DOCUMENT, concurrency: bestLevel.concurrency, docsPerSecond: bestLevel.best },
      throughputByDocument: byDocument,
      isolated: { document: THROUGHPUT_DOCUMENT, latency: isolatedLatency, docsPerSecond: isolatedRate, concurrency: bestLevel.concurrency },
      isolatedScripted: { document: scripted.name, latency: isolatedScriptedLatency },
    };
  } finally {
    await browser.close();
  }
}

/** Floor measurements on demand, to alternate with the service's (single documents and batches). */
export interface PairedFloor {
  /** Sequential latency of one document on a reused page, measured as the floor phase measures it. */
  latency(document: CorpusDocument, config: BenchConfig): Promise<LatencySummary & { pages: number }>;
  /** One pass of `docs` documents at the floor's best concurrency: documents per second. */
  pass(docs: number): Promise<number>;
  close(): Promise<void>;
}

export async function openPairedFloor(executablePath: string, concurrency: number, mismatches: string[]): Promise<PairedFloor> {
  const browser = await launchLikeService(executablePath);
  const throughputDoc = prepare(corpusDocument(THROUGHPUT_DOCUMENT));
  const page = await browser.newPage();
  return {
    latency: (document, config) => latency((prepared) => printOnPage(page, prepared), prepare(document), config, mismatches),
    pass: async (docs) => round(await throughput(browser, reusedPage, throughputDoc, concurrency, docs, mismatches)),
    close: () => browser.close(),
  };
}
