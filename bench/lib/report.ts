/**
 * The results table: absolute figures, ratios to the floor measured in the same run, and the issue's
 * targets marked PASS or MISS; printed, and written as Markdown and JSON.
 */
import { IMAGE_BENCH_DOCUMENT, type ImageBenchRow } from './image.ts';
import type { CliResult } from './cli-tools.ts';
import { CORPUS, THROUGHPUT_DOCUMENT } from './corpus.ts';
import type { FreezingResult, LambdaResult } from './lambda.ts';
import type { LimitsResults } from './limits.ts';
import type { BurstResults } from './burst.ts';
import type { BulkResults } from './bulk.ts';
import type { BulkLambdaResults } from './bulk-lambda.ts';
import type { BulkCrashResult } from './bulk-crash.ts';
import type { BulkFairnessResult } from './bulk-fairness.ts';
import { BULK_MEMORY_TARGET_RATIO, type BulkMemoryResult } from './bulk-memory.ts';
import type { DecompressResult } from './decompress.ts';
import type { FloorResult } from './floor.ts';
import type { NaiveResult } from './naive.ts';
import { NEIGHBOURS_TARGETS, type NeighboursResults } from './neighbours.ts';
import { MERGE_LOOP_TARGET_P99_MS, type MergeLoopResults } from './merge-loop.ts';
import type { OverloadResults } from './overload.ts';
import type { CliStartRow } from './cli-start.ts';
import type { ServiceResult } from './service.ts';
import { round, type LatencySummary } from './stats.ts';

export interface BenchResults {
  readonly decompress?: DecompressResult;
  readonly floor?: FloorResult;
  readonly service?: ServiceResult;
  readonly naive?: NaiveResult;
  readonly cli?: CliResult[];
  readonly lambda?: LambdaResult;
  readonly freezing?: FreezingResult;
  /** Phase `limits`: the batch path under Lambda's concurrency limits, through the local stack (bench/lib/limits.ts). */
  readonly limits?: LimitsResults;
  /** Phase `burst`: a cold burst of 100 generates in the Lambda emulation behind a gateway (bench/lib/burst.ts). */
  readonly burst?: BurstResults;
  /** Phase `bulk`: bulk jobs of 500 and 2,000 lines through the local stack, time and every process's peak memory (bench/lib/bulk.ts). */
  readonly bulk?: BulkResults;
  /** Phase `bulk-lambda`: a bulk job in the Lambda emulation at account concurrency 10 and 1000, exact (bench/lib/bulk-lambda.ts). */
  readonly bulkLambda?: BulkLambdaResults;
  /** Phase `bulk-crash`: a bulk job through the local stack killed -9 three times, exact at the end (bench/lib/bulk-crash.ts). */
  readonly bulkCrash?: BulkCrashResult;
  /** Phase `bulk-fairness`: a large bulk job of one key and a small one of another sent right after (bench/lib/bulk-fairness.ts). */
  readonly bulkFairness?: BulkFairnessResult;
  /** Phase `bulk-memory`: the stack process's memory before and after a bulk job of 5,000 lines (bench/lib/bulk-memory.ts). */
  readonly bulkMemory?: BulkMemoryResult;
  /** Phase `neighbours`: one key's hostile templates at its rate limit, another key's generates and /health (bench/lib/neighbours.ts). */
  readonly neighbours?: NeighboursResults;
  /** Phase `merge-loop`: the event loop's delay while 100 items of 300 pages are joined, on the loop and in a merge worker (bench/lib/merge-loop.ts). */
  readonly mergeLoop?: MergeLoopResults;
  /** Phase `overload`: 400 simultaneous generates of one key, goodput against one client back to back (bench/lib/overload.ts). */
  readonly overload?: OverloadResults;
  /** Phase `cli-start`: the installed `pdfapi --version`, packed and installed as a customer gets it (bench/lib/cli-start.ts). */
  readonly cliStart?: readonly CliStartRow[];
  /** Phase `image`: a picture of a page against a PDF of it, one after the other (bench/lib/image.ts). */
  readonly image?: readonly ImageBenchRow[];
}

export type Status = 'PASS' | 'MISS' | 'n/a' | '';

export interface Row {
  readonly measure: string;
  readonly value: string;
  readonly ratio: string;
  readonly target: string;
  readonly status: Status;
}

/** The issue's targets (issue 7), in one place. */
export const TARGETS = {
  batchVsFloor: 0.8,
  singleP50OverFloorMs: 30,
  vsNaive: 10,
  vsWkhtmltopdf: 10,
  coldStartMs: 3_000,
  lambdaColdStartMs: 1_500,
  /** Warm generate p50 with environments frozen between invocations, over the same left running (issue 28). */
  frozenOverRunning: 1.3,
  /** The installed `pdfapi --version`, p50 (issue 41). */
  cliStartMs: 300,
} as const;

const ms = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toLocaleString('en-US')} ms`);
const rate = (value: number | undefined) => (value === undefined ? 'n/a' : `${value} docs/s`);
const times = (value: number) => `${round(value, 2)}×`;
const status = (ok: boolean | undefined): Status => (ok === undefined ? 'n/a' : ok ? 'PASS' : 'MISS');

export function buildRows(results: BenchResults): Row[] {
  const { floor, service, naive, cli, decompress } = results;
  const rows: Row[] = [];
  const add = (measure: string, value: string, ratio = '', target = '', state: Status = '') =>
    rows.push({ measure, value, ratio, target, status: state });

  // The floor.
  for (const document of CORPUS) {
    const l = floor?.latency[document.name];
    add(`floor: single ${document.name}, p50 / p95`, l ? `${ms(l.p50)} / ${ms(l.p95)}` : 'n/a');
  }
  if (floor) {
    add(
      `floor: throughput ${floor.best.document}, best of 1..${floor.throughputLevels.length} pages`,
      `${rate(floor.best.docsPerSecond)} at ${floor.best.concurrency} pages`,
      floor.throughputLevels.map((level) => `${level.concurrency}: ${level.best}`).join(', '),
    );
    for (const document of CORPUS.filter((d) => d.name !== floor.best.document)) {
      add(`floor: throughput ${document.name} at ${floor.best.concurrency} pages`, rate(floor.throughputByDocument[document.name]));
    }
    const iso = floor.isolated;
    add(
      `floor + context per document (isolation), ${iso.document}`,
      `p50 ${ms(iso.latency.p50)}; ${rate(iso.docsPerSecond)} at ${iso.concurrency} pages`,
      `p50 +${round(iso.latency.p50 - (floor.latency[iso.document]?.p50 ?? Number.NaN))} ms; ${times(iso.docsPerSecond / floor.best.docsPerSecond)} floor docs/s`,
    );
    const isoScripted = floor.isolatedScripted;
    add(
      `floor + context per document (isolation), ${isoScripted.document}`,
      `p50 ${ms(isoScripted.latency.p50)}`,
      `p50 +${round(isoScripted.latency.p50 - (floor.latency[isoScripted.document]?.p50 ?? Number.NaN))} ms`,
    );
  }

  // The service, single documents: judged against the floor's latency measured right after them
  // (same machine conditions); without it, against the floor phase's.
  for (const document of CORPUS) {
    const s = service?.single[document.name];
    const f = singleFloor(results, document.name);
    const delta = s && f ? round(s.latency.p50 - f.p50) : undefined;
    const floorPhase = floor?.latency[document.name];
    const versus = s?.pairedFloor
      ? `vs paired floor (${ms(s.pairedFloor.p50)}${floorPhase ? `; floor phase ${ms(floorPhase.p50)}` : ''})`
      : 'vs floor';
    add(
      `service: single ${document.name}, p50 / p95`,
      s ? `${ms(s.latency.p50)} / ${ms(s.latency.p95)}` : 'n/a',
      delta === undefined ? 'n/a' : `p50 ${delta >= 0 ? '+' : ''}${delta} ms ${versus}`,
      `≤ floor p50 + ${TARGETS.singleP50OverFloorMs} ms`,
      status(delta === undefined ? undefined : delta <= TARGETS.singleP50OverFloorMs),
    );
  }

  // The service, batches: judged against the floor passes paired with them (measured under the
  // same machine conditions); without those, against the sweep's best pass.
  const batch = service?.batch;
  const paired = batch?.pairedFloor;
  if (batch && paired) {
    add(
      `floor: throughput ${THROUGHPUT_DOCUMENT}, ${batch.size} per pass, each right after a batch, best / median of ${paired.docsPerSecond.length}`,
      `${rate(paired.best)} / ${rate(paired.median)}`,
      paired.docsPerSecond.join(', '),
    );
  }
  const floorRate = paired?.best ?? floor?.best.docsPerSecond;
  const floorMedian = paired?.median ?? floor?.best.docsPerSecond;
  const batchRatio = batch && floorRate ? batch.best / floorRate : undefined;
  const sweepNote =
    (paired && floor ? `; ${times((batch?.best ?? 0) / floor.best.docsPerSecond)} of the sweep's best pass` : '');
  add(
    `service: batch of ${batch?.size ?? 100} ${THROUGHPUT_DOCUMENT}s, best / median of ${batch?.docsPerSecond.length ?? 0}`,
    batch ? `${rate(batch.best)} / ${rate(batch.median)}` : 'n/a',
    batchRatio === undefined || !batch || !floorMedian
      ? 'n/a'
      : `${times(batchRatio)} ${paired ? 'paired ' : ''}floor (median ${times(batch.median / floorMedian)})${sweepNote}`,
    `≥ ${TARGETS.batchVsFloor}× floor docs/s`,
    status(batchRatio === undefined ? undefined : batchRatio >= TARGETS.batchVsFloor),
  );

  // Against the alternatives.
  const vsNaive = batch && naive ? batch.best / naive.docsPerSecond : undefined;
  add(
    `naive: browser launched per ${THROUGHPUT_DOCUMENT} (${naive?.docs ?? 0} docs, sequential)`,
    naive ? `${rate(naive.docsPerSecond)} (p50 ${ms(naive.perDocument.p50)} per doc)` : 'n/a',
    vsNaive === undefined ? 'n/a' : `service batch = ${times(vsNaive)} naive`,
    `≥ ${TARGETS.vsNaive}× naive`,
    status(vsNaive === undefined ? undefined : vsNaive >= TARGETS.vsNaive),
  );
  for (const tool of cli ?? [{ tool: 'wkhtmltopdf', installed: false } as const, { tool: 'WeasyPrint', installed: false } as const]) {
    const isWk = tool.tool === 'wkhtmltopdf';
    if (!tool.installed) {
      add(`${tool.tool} CLI, ${THROUGHPUT_DOCUMENT}`, cli ? 'not installed' : 'n/a', 'n/a', isWk ? `≥ ${TARGETS.vsWkhtmltopdf}× wkhtmltopdf` : '', isWk ? 'n/a' : '');
      continue;
    }
    const ratio = batch ? batch.best / tool.docsPerSecond : undefined;
    add(
      `${tool.tool} CLI, ${THROUGHPUT_DOCUMENT} (${tool.pages} pages)`,
      `${ms(tool.perDocument.p50)} per doc = ${rate(tool.docsPerSecond)}`,
      ratio === undefined ? 'n/a' : `service batch = ${times(ratio)} ${tool.tool}`,
      isWk ? `≥ ${TARGETS.vsWkhtmltopdf}× wkhtmltopdf` : '',
      isWk ? status(ratio === undefined ? undefined : ratio >= TARGETS.vsWkhtmltopdf) : '',
    );
  }

  // Start-up and memory.
  const cold = service?.coldStart;
  add(
    'cold start: spawn → first generate 200 (restart)',
    cold ? ms(cold.firstPdfMs) : 'n/a',
    cold ? `ready ${ms(cold.readyMs)}, stack's own ${ms(cold.reportedFirstPdfMs)}, request ${ms(cold.firstRequestMs)}` : '',
    `< ${TARGETS.coldStartMs.toLocaleString('en-US')} ms`,
    status(cold ? cold.firstPdfMs < TARGETS.coldStartMs : undefined),
  );
  if (service) {
    add('first boot, fresh data dir: spawn → API ready', ms(service.firstBoot.readyMs), `stack's own ${ms(service.firstBoot.reportedFirstPdfMs)}`);
  }
  add(
    'Chromium decompression (first executablePath, separate)',
    decompress?.measured ? ms(decompress.firstCallMs) : (decompress?.reason ?? 'n/a'),
    decompress?.measured ? `${decompress.extractedMiB} MiB extracted; cached call ${decompress.cachedCallMs} ms` : '',
  );
  for (const [phase, peak] of Object.entries(service?.rss ?? {})) {
    add(`peak RSS of the service tree: ${phase}`, `${peak.peakMiB} MiB`, `${peak.processesAtPeak} processes`);
  }
  const lambda = results.lambda;
  if (lambda) {
    const { cold, warm } = lambda;
    add(
      `Lambda emulation: cold start to first PDF, one core (median of ${lambda.coldStarts.length})`,
      ms(cold.totalMs),
      `init ${cold.initMs} ms, Chromium unpack ${cold.unpackMs} ms, launch ${cold.launchMs} ms, the document ${cold.documentMs} ms (${lambda.isolation})`,
      `< ${TARGETS.lambdaColdStartMs.toLocaleString('en-US')} ms`,
      status(cold.totalMs < TARGETS.lambdaColdStartMs),
    );
    add('Lambda emulation: warm generate invoice, p50, one core / two cores', `${ms(warm.oneCore.generateMs)} / ${ms(warm.twoCores.generateMs)}`, 'billed duration: the function alone');
    add('Lambda emulation: warm render of a batch item, p50, one core / two cores', `${ms(warm.oneCore.renderMs)} / ${ms(warm.twoCores.renderMs)}`, `a batch of 2: ${ms(warm.oneCore.batchMs)}; download redirect ${ms(warm.oneCore.downloadMs)}`);
    for (const row of lambda.cost) {
      add(
        `cost per 1,000 PDFs at ${row.memoryMb.toLocaleString('en-US')} MB${row.memoryMb === lambda.chosenMemoryMb ? ' (deployed)' : ''}: single / batch item`,
        `$${row.single.toFixed(3)} / $${row.batchItem.toFixed(3)}`,
        `${row.basis}: generate ${row.generateMs} ms, render ${row.renderMs} ms`,
      );
    }
  }
  for (const { gapMs, runs, frozen, frozenIgnoringExtension: before, running, frozenAfterTail: tail, ratio } of results.freezing?.comparisons ?? []) {
    const idle = `${(gapMs / 1000).toLocaleString('en-US')} s idle`;
    add(
      `Lambda emulation: warm generate after ${idle}, one core, p50 latency / billed (of it post-runtime): frozen vs running (${runs} each)`,
      `${ms(frozen.latencyP50Ms)} / ${ms(frozen.billedP50Ms)} (${ms(frozen.postRuntimeP50Ms)}) vs ${ms(running.latencyP50Ms)} / ${ms(running.billedP50Ms)}`,
      times(ratio),
      `≤ ${TARGETS.frozenOverRunning}×`,
      status(ratio <= TARGETS.frozenOverRunning),
    );
    if (before) {
      add(
        `Lambda emulation: the same after ${idle}, frozen ignoring the post-answer extension (before issue 45: the next workspace prepared in the next request): p50 latency / billed`,
        `${ms(before.latencyP50Ms)} / ${ms(before.billedP50Ms)}`,
        `${times(before.latencyP50Ms / running.latencyP50Ms)} running's latency`,
      );
    }
    add(
      `Lambda emulation: the same after ${idle}, frozen once the environment's processes were quiet after the answer (what a streaming handler preparing before it returns would give): p50 latency / billed`,
      `${ms(tail.latencyP50Ms)} / ${ms(tail.billedP50Ms)}`,
      `${times(tail.latencyP50Ms / running.latencyP50Ms)} running's latency; that work ${ms(tail.tailP50Ms)}`,
    );
  }
  const counts = (record: Record<string | number, number>) => Object.entries(record).map(([name, count]) => `${count} × ${name}`).join(', ');
  const limits = results.limits;
  if (limits) {
    for (const row of limits.batchOf100) {
      add(`local stack: batch of 100 invoices at account concurrency ${row.accountConcurrency}`, ms(row.ms), `${counts(row.items)}; charged == listed: ${row.exact}`);
    }
    const ten = limits.tenBatchesAt1000;
    add('local stack: 10 simultaneous batches of 100 (10 keys) at account concurrency 1000', ms(ten.ms), `answers ${counts(ten.answers)}; items ${counts(ten.items)}; charged == listed: ${ten.exact}`);
    const flood = limits.floodedNeighbour;
    add(
      "local stack: one key flooding batches at account concurrency 10, the other key's singles p50 / p95",
      `${ms(flood.singles.p50)} / ${ms(flood.singles.p95)}`,
      `the other key: ${counts(flood.statuses)}; the flooder's items ${counts(flood.flooderItems)}; charged == listed: ${flood.exact}`,
    );
  }
  for (const row of results.burst?.rows ?? []) {
    add(
      `Lambda emulation: cold burst of ${row.requests} generates at account concurrency ${row.accountConcurrency} (≤ ${results.burst!.environmentsCap} environments): p50 / p95 / max of the 200s`,
      `${ms(Math.round(row.latency.p50))} / ${ms(Math.round(row.latency.p95))} / ${ms(Math.round(row.latency.max))}`,
      `${counts(row.statuses)}; ${row.coldStarts} cold starts (median ${ms(row.coldStartMedianMs)}); all answered in ${ms(row.wallMs)}`,
    );
  }
  const batchOf100 = results.burst?.batchOf100;
  if (batchOf100) {
    add(
      `Lambda emulation: a batch of 100 invoices at account concurrency ${batchOf100.accountConcurrency} (render environments warm): items done in its 27 s`,
      `${batchOf100.outcomes.OK ?? 0} of ${batchOf100.items} in ${ms(batchOf100.ms)}`,
      `items ${counts(batchOf100.outcomes)}; charged == successes: ${batchOf100.exact}`,
    );
  }
  for (const run of results.bulk?.runs ?? []) {
    const chromium = Object.entries(run.processes).filter(([kind]) => kind.startsWith('Chromium'));
    add(
      `local stack: bulk job of ${run.lines.toLocaleString('en-US')} lines (upload, ${run.templateLines} template lines, ${run.invalid} invalid skipped, archive): submission to end`,
      `${run.seconds} s = ${run.linesPerSecond} lines/s`,
      `${run.status}, ${run.succeeded} stored, ${run.failed} failed; submission ${ms(run.submitMs)}; exact (quota == listed == downloadable == manifest == ZIP): ${run.exact}`,
    );
    add(
      `local stack: bulk job of ${run.lines.toLocaleString('en-US')} lines: peak RSS, tree / stack process / largest Chromium process`,
      `${run.treePeakMiB} / ${run.processes['stack (node)']?.peakMiB ?? 'n/a'} / ${Math.max(...chromium.map(([, peak]) => peak.peakMiB))} MiB`,
      chromium.map(([kind, peak]) => `${kind.replace('Chromium ', '')} ${peak.peakMiB} MiB ×${peak.most}`).join(', '),
    );
  }
  for (const run of results.bulkLambda?.runs ?? []) {
    const where = `Lambda emulation: bulk job of ${run.lines.toLocaleString('en-US')} lines at account concurrency ${run.accountConcurrency} (≤ ${results.bulkLambda!.environmentsCap} environments per function)`;
    add(
      `${where}: submission to end`,
      `${run.seconds} s = ${run.linesPerSecond} lines/s`,
      `${run.status}, ${run.succeeded} stored, ${run.failed} failed (${run.invalid} invalid skipped, ${run.templateLines} template lines, archive); submission ${ms(run.submitMs)}; ` +
        `exact (quota == listed == downloadable == manifest == ZIP, manifest in order): ${run.exact}; ` +
        `valid lines failed: ${run.failedValidLines ? counts(run.failedValidCodes) : 'none'}`,
    );
    add(
      `${where}: throttles / environments started`,
      `${Object.values(run.throttles).reduce((sum, count) => sum + count, 0)} / ${Object.values(run.environmentsStarted).reduce((sum, count) => sum + count, 0)}`,
      `throttled: ${counts(run.throttles) || 'none'}; 503s to the client ${run.busyAnswers}; started: ${counts(run.environmentsStarted)}; ` +
        `${run.workerInvocations} worker invocations; at most ${run.peakConcurrency} concurrent executions; failed invocations: ${counts(run.functionErrors) || 'none'}`,
    );
  }
  const crash = results.bulkCrash;
  if (crash) {
    add(
      `local stack: bulk job of ${crash.lines.toLocaleString('en-US')} lines (as the bulk phase's, with a webhook), the whole stack killed -9 at 25, 50 and 75 % and started again: submission to end, restarts included`,
      `${crash.seconds} s`,
      `killed at ${crash.kills.map((kill) => `${kill.atPercent} % (${kill.counted} counted, ${kill.stored} stored; ready again in ${ms(kill.restartMs)})`).join(', ')}; ` +
        `${crash.status}, ${crash.succeeded} stored, ${crash.failed} failed; quota ${crash.counts.quotaUsed} == listed ${crash.counts.listed} == downloadable ${crash.counts.downloadable} == manifest ${crash.counts.manifestSuccesses} == ZIP ${crash.counts.archiveEntries}; ` +
        `${crash.webhooks} webhook(s)` +
        (crash.failedValidLines ? `; valid lines failed: ${counts(crash.failedValidCodes)}` : ''),
      'exact, each PDF once, one webhook',
      status(crash.exact),
    );
  }
  const fair = results.bulkFairness;
  if (fair) {
    add(
      `local stack: fairness, a bulk job of ${fair.large.lines.toLocaleString('en-US')} lines (one key) and one of ${fair.small.lines} sent right after (another key): each submission to end`,
      `${fair.small.seconds} s / ${fair.large.seconds} s`,
      `the ${fair.small.lines}-line job alone: ${fair.smallAloneSeconds} s; it ended when the large one had ${fair.largeDoneWhenSmallEnded} of ${fair.large.lines.toLocaleString('en-US')} lines done; both exact: ${fair.large.exact && fair.small.exact}` +
        [fair.large, fair.small].map((job) => (job.failedValidLines ? `; valid lines failed of ${job.lines}: ${counts(job.failedValidCodes)}` : '')).join(''),
      'small ends before the large is half done',
      status(fair.largeDoneWhenSmallEnded <= fair.large.lines / 2),
    );
  }
  const memory = results.bulkMemory;
  if (memory) {
    add(
      `local stack: the stack process's memory (RSS; the service, without the AWS stand-ins' process) before and ${memory.settleSeconds} s after a bulk job of ${memory.lines.toLocaleString('en-US')} lines (as the bulk phase's), after a warm-up job of ${memory.warmupLines}`,
      `${memory.stackBeforeMiB} → ${memory.stackAfterMiB} MiB`,
      `×${memory.afterOverBefore}; at most ${memory.stackPeakMiB} MiB during the job (${memory.stackStartMiB} MiB at start); the AWS stand-ins' process ${memory.standInsBeforeMiB} → ${memory.standInsAfterMiB} MiB; ` +
        (memory.insideBefore && memory.insideAfter
          ? `inside: main heap used ${memory.insideBefore.main.usedMiB} → ${memory.insideAfter.main.usedMiB} MiB of ${memory.insideBefore.main.totalMiB} → ${memory.insideAfter.main.totalMiB}, ` +
            `V8 pages ${memory.insideBefore.residentMiB.v8Pages} → ${memory.insideAfter.residentMiB.v8Pages}, glibc heap ${memory.insideBefore.residentMiB.mallocHeap} → ${memory.insideAfter.residentMiB.mallocHeap} MiB; `
          : '') +
        `the tree's peak ${memory.treePeakMiB} MiB; ` +
        `${memory.status} in ${memory.seconds} s; quota ${memory.counts.quotaUsed} == listed ${memory.counts.listed} == downloadable ${memory.counts.downloadable} == manifest ${memory.counts.manifestSuccesses} == ZIP ${memory.counts.archiveEntries}`,
      `within ${Math.round((BULK_MEMORY_TARGET_RATIO - 1) * 100)} % of before`,
      status(memory.afterOverBefore <= BULK_MEMORY_TARGET_RATIO),
    );
  }
  const neighbours = results.neighbours;
  if (neighbours) {
    const { idle, loaded, idleAfter, hostile } = neighbours;
    add(
      `local stack: neighbours unharmed, key B's generate p50 / p95 (${neighbours.requests} invoices one after another) while key A keeps ${hostile.lanes} hostile templates in flight (each holds a worker its ${hostile.fillLimitMs} ms), idle → loaded`,
      `${ms(idle.generate.p50)} / ${ms(idle.generate.p95)} → ${ms(loaded.generate.p50)} / ${ms(loaded.generate.p95)}`,
      `p95 ${times(neighbours.p95Ratio)}, p50 ${times(neighbours.p50Ratio)} idle; idle again after: ${ms(idleAfter.generate.p50)} / ${ms(idleAfter.generate.p95)}; ` +
        `A (${hostile.tier}, at most ${hostile.ratePerMinute}/min): ${counts(hostile.outcomes)}, ${hostile.namingTheLimit} naming the limit, ${hostile.perMinute}/min, charged ${hostile.charged}; B ${counts(loaded.generateStatuses)}`,
      `p95 ≤ ${NEIGHBOURS_TARGETS.loadedOverIdleP95}× idle`,
      status(neighbours.p95Ratio <= NEIGHBOURS_TARGETS.loadedOverIdleP95),
    );
    add(
      `local stack: neighbours unharmed, /health p50 / p95 / max (every 250 ms), idle → loaded`,
      `${ms(idle.health.p50)} / ${ms(idle.health.p95)} / ${ms(idle.health.max)} → ${ms(loaded.health.p50)} / ${ms(loaded.health.p95)} / ${ms(loaded.health.max)}`,
      `loaded: ${counts(loaded.healthStatuses)}`,
      `< ${NEIGHBOURS_TARGETS.healthMs} ms`,
      status(loaded.health.max < NEIGHBOURS_TARGETS.healthMs && Object.keys(loaded.healthStatuses).every((code) => code === '200')),
    );
  }
  const mergeLoop = results.mergeLoop;
  if (mergeLoop) {
    const { onTheLoop, inAWorker } = mergeLoop;
    add(
      `in process: the event loop's delay p99 / max while ${mergeLoop.items} items of ${mergeLoop.itemPages} pages (${round(mergeLoop.itemBytes / 1e6)} MB each) are joined, on the loop → in a merge worker`,
      `${ms(onTheLoop.delayP99Ms)} / ${ms(onTheLoop.delayMaxMs)} → ${ms(inAWorker.delayP99Ms)} / ${ms(inAWorker.delayMaxMs)}`,
      `merge took ${ms(onTheLoop.wallMs)} → ${ms(inAWorker.wallMs)}; ${onTheLoop.pages} / ${inAWorker.pages} pages, ${onTheLoop.bytes} / ${inAWorker.bytes} bytes`,
      `p99 < ${MERGE_LOOP_TARGET_P99_MS} ms in a worker`,
      status(inAWorker.delayP99Ms < MERGE_LOOP_TARGET_P99_MS && inAWorker.pages === onTheLoop.pages),
    );
  }
  const overload = results.overload;
  if (overload) {
    const { burst, backToBack, backToBackAfter } = overload;
    add(
      `local stack: overload goodput, ${overload.requests} simultaneous generates of one key: PDFs served per second (served / time to the last 200)`,
      `${rate(burst.goodput)} (${burst.served} in ${ms(burst.servedInMs)})`,
      `${times(overload.ratio)} one client back to back (${rate(backToBack.perSecond)}; after: ${rate(backToBackAfter.perSecond)}); ${counts(burst.statuses)}; ` +
        `refusals p50 / p95 ${ms(burst.refusedLatency.p50)} / ${ms(burst.refusedLatency.p95)}; charged ${burst.charged}`,
      '≥ 1× back to back',
      status(overload.ratio >= 1),
    );
  }
  for (const start of results.cliStart ?? []) {
    add(
      `installed CLI: pdfapi --version from the packed package, Node ${start.nodeVersion}, p50 / p95`,
      `${ms(start.version.p50)} / ${ms(start.version.p95)}`,
      `bare node -e 0: ${ms(start.bareNode.p50)} / ${ms(start.bareNode.p95)} (n ${start.version.n})`,
      `p50 < ${TARGETS.cliStartMs} ms`,
      status(start.version.p50 < TARGETS.cliStartMs),
    );
  }
  const pdfRow = results.image?.find((row) => row.kind === 'PDF');
  for (const row of results.image ?? []) {
    if (row === pdfRow) continue;
    add(
      `local stack: image ${row.kind} of the ${IMAGE_BENCH_DOCUMENT}, p50 / p95 (server p50)`,
      `${ms(row.latency.p50)} / ${ms(row.latency.p95)} (${ms(row.serverGenerationMs.p50)}), ${row.bytes.toLocaleString('en-US')} bytes`,
      pdfRow ? `${times(row.latency.p50 / pdfRow.latency.p50)} the PDF of the same page (${ms(pdfRow.latency.p50)} / ${ms(pdfRow.latency.p95)}, server ${ms(pdfRow.serverGenerationMs.p50)})` : '',
    );
  }
  return rows;
}

/** The floor latency a service's single document is compared with: the paired one when measured. */
function singleFloor(results: BenchResults, document: string): LatencySummary | undefined {
  return results.service?.single[document]?.pairedFloor ?? results.floor?.latency[document];
}

/** Where single-document time goes, p50 per document: floor, server render, and the rest. */
export function breakdownRows(results: BenchResults): string[][] {
  const { floor, service } = results;
  if (!floor || !service) return [];
  return CORPUS.map((document) => {
    const f = singleFloor(results, document.name)?.p50 ?? Number.NaN;
    const s = service.single[document.name];
    const generation = s?.serverGenerationMs.p50 ?? Number.NaN;
    const latency = s?.latency.p50 ?? Number.NaN;
    return [document.name, `${f}`, `${generation}`, `${latency}`, `${round(generation - f)}`, `${round(latency - generation)}`];
  });
}

const BREAKDOWN_HEADER = ['document', 'floor', 'server generation_time_ms', 'client latency', 'render − floor', 'latency − render'];
const ROW_HEADER = ['Measure', 'Value', 'Ratio / detail', 'Target', 'Status'];

function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' │ ').trimEnd();
  return [line(header), widths.map((w) => '─'.repeat(w)).join('─┼─'), ...rows.map(line)].join('\n');
}

function markdownTable(header: string[], rows: string[][]): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ].join('\n');
}

const cells = (row: Row) => [row.measure, row.value, row.ratio, row.target, row.status];

export function renderText(results: BenchResults): string {
  const parts = [textTable(ROW_HEADER, buildRows(results).map(cells))];
  const breakdown = breakdownRows(results);
  if (breakdown.length) parts.push('', 'Single generate, p50 in ms: where the time goes', textTable(BREAKDOWN_HEADER, breakdown));
  return parts.join('\n');
}

export function renderMarkdown(results: BenchResults, meta: Record<string, unknown>, notes: string[]): string {
  const parts = [
    '# Benchmark results',
    '',
    `Run ${String(meta.finishedAt)} on ${String(meta.cpus)} × ${String(meta.cpuModel)}, ${String(meta.chromium)}, Node ${String(meta.node)}, commit ${String(meta.commit)}${meta.dirty ? ' (with uncommitted changes)' : ''}; ${meta.quick ? 'quick run' : 'full run'} in ${String(meta.durationSeconds)} s.`,
    '',
    markdownTable(ROW_HEADER, buildRows(results).map(cells)),
  ];
  const breakdown = breakdownRows(results);
  if (breakdown.length) {
    parts.push('', '## Single generate, p50 in ms: where the time goes', '', markdownTable(BREAKDOWN_HEADER, breakdown));
    parts.push(
      '',
      '"floor" is the floor latency measured right after the service\'s single generates of that document (paired), else the floor phase\'s. ' +
        '"render − floor" is what the service adds inside rendering (browser context, egress proxy, PDF stream, page count); ' +
        '"latency − render" is everything around it (HTTP, auth, rate limit and quota counters, S3 upload, DynamoDB record, link).',
    );
  }
  if (notes.length) parts.push('', '## Notes', '', ...notes.map((note) => `- ${note}`));
  return parts.join('\n') + '\n';
}
