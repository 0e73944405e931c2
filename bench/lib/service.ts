/**
 * The service through the local stack over HTTP, as a customer sees it:
 * 1. first boot on a fresh data directory (creates table and bucket), then a key from the key tool;
 * 2. cold start: the stack restarted on that directory, timed from spawn to the first successful
 *    generate response (the key exists already, so nothing but the service is on the clock);
 * 3. single generate, each corpus document one after another (client-side latency, and the
 *    server's own generation_time_ms to split rendering from everything around it), each document
 *    followed by the floor's latency of it when a paired floor is given;
 * 4. batches of N invoices (documents per second = N / wall time of the request), each followed by
 *    a floor pass of N invoices when a paired floor is given (lib/floor.ts, "Paired measurements").
 * Every PDF is downloaded through its link and checked with pdf-lib, outside the timed parts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { batch, generate, verifyDownloads } from './api-client.ts';
import type { BenchConfig } from './config.ts';
import type { PairedFloor } from './floor.ts';
import { CORPUS, corpusDocument, THROUGHPUT_DOCUMENT } from './corpus.ts';
import { watchForeignLoad } from './machine.ts';
import type { RssPeak, TreeRssSampler } from './rss.ts';
import { createBenchKey, startStackProcess, stopStackProcess, type StackProcess } from './stack-process.ts';
import { median, round, summarize, type LatencySummary } from './stats.ts';

export interface ServiceResult {
  readonly firstBoot: { readonly readyMs: number; readonly reportedFirstPdfMs: number | undefined };
  readonly coldStart: {
    /** Spawn until the first successful generate response: the headline figure. */
    readonly firstPdfMs: number;
    /** Spawn until stack.json (API listening, warm-up PDF rendered). */
    readonly readyMs: number;
    /** The stack's own figure, from inside the process. */
    readonly reportedFirstPdfMs: number | undefined;
    /** The first generate request alone. */
    readonly firstRequestMs: number;
  };
  readonly single: Record<
    string,
    {
      latency: LatencySummary;
      serverGenerationMs: LatencySummary;
      pages: number;
      /** The floor's latency of the same document, measured right after (with a paired floor). */
      pairedFloor: LatencySummary | undefined;
    }
  >;
  readonly batch: {
    readonly document: string;
    readonly size: number;
    readonly docsPerSecond: number[];
    readonly best: number;
    readonly median: number;
    readonly wallMs: number[];
    readonly serverProcessingMs: (number | undefined)[];
    /** Share of the cores other work kept busy during each batch (percent). */
    readonly foreignLoadPercent: number[];
    /** The floor pass run right after each batch, same document and count (docs/s); empty without a paired floor. */
    readonly pairedFloor: { readonly docsPerSecond: number[]; readonly best: number; readonly median: number } | undefined;
  };
  readonly rss: Record<string, RssPeak>;
  readonly key: { readonly rateLimitPerMinute: number; readonly monthlyQuota: number };
}

export async function runService(
  config: BenchConfig,
  sampler: TreeRssSampler,
  mismatches: string[],
  log: (line: string) => void,
  pairedFloor?: PairedFloor,
): Promise<ServiceResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdf-bench-stack-'));
  let stack: StackProcess | undefined;
  try {
    // 1. First boot and the key.
    stack = await startStackProcess(dataDir, (pid) => sampler.watch(pid, 'first boot'));
    const firstBoot = { readyMs: round(stack.readyMs), reportedFirstPdfMs: await stack.reportedFirstPdfMs };
    log(`first boot (fresh data dir): ready after ${firstBoot.readyMs} ms (stack reports first PDF after ${firstBoot.reportedFirstPdfMs} ms)`);
    const key = await createBenchKey(dataDir);
    log(`enterprise key ${key.keyId}: ${key.rateLimitPerMinute}/min, ${key.monthlyQuota}/month`);
    sampler.watch(undefined, 'idle');
    await stopStackProcess(stack);
    stack = undefined;

    // 2. Cold start to the first PDF over HTTP.
    const invoice = corpusDocument(THROUGHPUT_DOCUMENT);
    stack = await startStackProcess(dataDir, (pid) => sampler.watch(pid, 'cold start'));
    const requestStarted = performance.now();
    const first = await generate(stack.info.apiUrl, key.apiKey, invoice);
    const answered = performance.now();
    const coldStart = {
      firstPdfMs: round(answered - stack.spawnedAt),
      readyMs: round(stack.readyMs),
      reportedFirstPdfMs: await stack.reportedFirstPdfMs,
      firstRequestMs: round(answered - requestStarted),
    };
    log(`cold start: first PDF over HTTP ${coldStart.firstPdfMs} ms after spawn (ready ${coldStart.readyMs} ms, first request ${coldStart.firstRequestMs} ms)`);
    await verifyDownloads([{ url: first.url, reportedPages: first.pages }], invoice, mismatches);
    const apiUrl = stack.info.apiUrl;

    // 3. Single generate, sequentially.
    sampler.watch(stack.pid, 'single generate');
    const single: ServiceResult['single'] = {};
    for (const document of CORPUS) {
      const latencies: number[] = [];
      const serverMs: number[] = [];
      const links: { url: string; reportedPages: number }[] = [];
      for (let i = 0; i < config.warmup + config.runs; i++) {
        const started = performance.now();
        const record = await generate(apiUrl, key.apiKey, document);
        const ms = performance.now() - started;
        links.push({ url: record.url, reportedPages: record.pages });
        if (i < config.warmup) continue;
        latencies.push(ms);
        serverMs.push(record.generation_time_ms);
      }
      sampler.watch(undefined, 'single generate'); // the floor's browser is not the service's memory
      const floorLatency = pairedFloor ? await pairedFloor.latency(document, config) : undefined;
      sampler.watch(stack.pid, 'single generate');
      await verifyDownloads(links, document, mismatches);
      single[document.name] = {
        latency: summarize(latencies),
        serverGenerationMs: summarize(serverMs),
        pages: links[0]?.reportedPages ?? 0,
        pairedFloor: floorLatency,
      };
      const s = single[document.name];
      log(`single ${document.name}: p50 ${s?.latency.p50} ms, p95 ${s?.latency.p95} ms (server generation p50 ${s?.serverGenerationMs.p50} ms)`);
      if (s?.pairedFloor) log(`paired floor ${document.name}: p50 ${s.pairedFloor.p50} ms`);
    }

    // 4. Batches.
    sampler.watch(stack.pid, 'batch');
    const warmUp = await batch(apiUrl, key.apiKey, invoice, Math.min(10, config.batchSize)); // warms the invoke path
    await verifyDownloads(
      warmUp.results.map((result) => ({ url: result.download_url as string, reportedPages: result.pages as number })),
      invoice,
      mismatches,
    );
    const rates: number[] = [];
    const wallMs: number[] = [];
    const serverProcessingMs: (number | undefined)[] = [];
    const foreignLoadPercent: number[] = [];
    const pairedRates: number[] = [];
    for (let i = 0; i < config.batchRepeats; i++) {
      const foreignLoad = watchForeignLoad();
      const started = performance.now();
      const response = await batch(apiUrl, key.apiKey, invoice, config.batchSize);
      const ms = performance.now() - started;
      foreignLoadPercent.push(foreignLoad());
      sampler.watch(undefined, 'batch'); // downloads for verification are not the service's memory peak
      await verifyDownloads(
        response.results.map((result) => ({ url: result.download_url as string, reportedPages: result.pages as number })),
        invoice,
        mismatches,
      );
      sampler.watch(stack.pid, 'batch');
      wallMs.push(round(ms));
      rates.push(round((config.batchSize / ms) * 1000, 2));
      serverProcessingMs.push(response.processing_time_ms);
      log(`batch of ${config.batchSize} ${invoice.name}s: ${round(ms)} ms, ${rates.at(-1)} docs/s (other work: ${foreignLoadPercent.at(-1)}% of the cores)`);
      if (pairedFloor) {
        sampler.watch(undefined, 'batch'); // the floor's browser is not the service's memory
        pairedRates.push(await pairedFloor.pass(config.batchSize));
        sampler.watch(stack.pid, 'batch');
        log(`paired floor pass of ${config.batchSize} ${invoice.name}s: ${pairedRates.at(-1)} docs/s`);
      }
    }
    sampler.watch(undefined, 'idle');

    return {
      firstBoot,
      coldStart,
      single,
      batch: {
        document: invoice.name,
        size: config.batchSize,
        docsPerSecond: rates,
        best: Math.max(...rates),
        median: round(median(rates), 2),
        wallMs,
        serverProcessingMs,
        foreignLoadPercent,
        pairedFloor: pairedRates.length
          ? { docsPerSecond: pairedRates, best: Math.max(...pairedRates), median: round(median(pairedRates), 2) }
          : undefined,
      },
      rss: sampler.peaks(),
      key: { rateLimitPerMinute: key.rateLimitPerMinute, monthlyQuota: key.monthlyQuota },
    };
  } finally {
    sampler.watch(undefined, 'idle');
    if (stack) await stopStackProcess(stack);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
