/**
 * `npm run bench`: the service against raw Chromium and the tools users would pick instead (issue 7).
 *
 * Phases run one after another, never concurrently: Chromium decompression (measured apart), the
 * floor (raw puppeteer-core), the service over HTTP through the local stack, the naive
 * browser-per-document approach, and the wkhtmltopdf / WeasyPrint CLIs when installed. Prints the
 * table and writes bench/results/latest.{json,md}. Knobs: bench/lib/config.ts (BENCH_QUICK=1 for a
 * short run). Missed targets do not fail the run; a phase that fails does (exit code 1).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { runCliStart } from './lib/cli-start.ts';
import { runImageBench } from './lib/image.ts';
import { runCliTools } from './lib/cli-tools.ts';
import { KNOB_NAMES, readConfig, type Phase } from './lib/config.ts';
import { serviceExecutablePath } from './lib/chromium.ts';
import { measureDecompression } from './lib/decompress.ts';
import { openPairedFloor, runFloor } from './lib/floor.ts';
import { BUSY_THRESHOLD_PERCENT, waitForQuiet, watchForeignLoad } from './lib/machine.ts';
import { runFreezing, runLambda } from './lib/lambda.ts';
import { runLimits } from './lib/limits.ts';
import { runBurst } from './lib/burst.ts';
import { runBulk } from './lib/bulk.ts';
import { assertBulkLambdaExact, runBulkLambda } from './lib/bulk-lambda.ts';
import { assertBulkCrashExact, runBulkCrash } from './lib/bulk-crash.ts';
import { assertBulkFair, runBulkFairness } from './lib/bulk-fairness.ts';
import { assertBulkMemoryExact, runBulkMemory } from './lib/bulk-memory.ts';
import { runNaive } from './lib/naive.ts';
import { runNeighbours } from './lib/neighbours.ts';
import { runMergeLoop } from './lib/merge-loop.ts';
import { runOverload } from './lib/overload.ts';
import { buildRows, renderMarkdown, renderText, type BenchResults } from './lib/report.ts';
import { TreeRssSampler } from './lib/rss.ts';
import { runService } from './lib/service.ts';
import { REPO_ROOT } from './lib/stack-process.ts';
import { round } from './lib/stats.ts';

const config = readConfig();
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s`;
const logFor = (phase: string) => (line: string) => console.log(`${elapsed()}  [${phase}] ${line}`);

const results: { -readonly [K in keyof BenchResults]: BenchResults[K] } = {};
const mismatches: string[] = [];
const failures: string[] = [];
/** Share of the cores other work kept busy just before and during each phase (percent). */
const busyBefore: Partial<Record<Phase, number>> = {};
const foreignDuring: Partial<Record<Phase, number>> = {};

async function phase(name: Phase, work: (log: (line: string) => void) => Promise<void>): Promise<void> {
  if (!config.phases.has(name)) return;
  const log = logFor(name);
  busyBefore[name] = await waitForQuiet(config.waitQuietSeconds);
  log(`start (machine ${busyBefore[name]}% busy before it)`);
  const foreignLoad = watchForeignLoad();
  try {
    await work(log);
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(`${name}: ${message}`);
    log(`FAILED: ${message}`);
  }
  foreignDuring[name] = foreignLoad();
  log(`done (other work kept ${foreignDuring[name]}% of the cores busy meanwhile)`);
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

console.log(
  `PDF API benchmark: ${config.quick ? 'quick' : 'full'} run, ${availableParallelism()} cores; ` +
    `${config.runs} runs after ${config.warmup} warm-ups per document, batches of ${config.batchSize} × ${config.batchRepeats}`,
);

await phase('decompress', async (log) => {
  results.decompress = await measureDecompression();
  const d = results.decompress;
  log(d.measured ? `first executablePath() in a fresh TMPDIR: ${d.firstCallMs} ms (${d.extractedMiB} MiB)` : d.reason);
});

let executablePath: string | undefined;
const chromiumPath = async (log: (line: string) => void) => {
  if (!executablePath) {
    const t = performance.now();
    executablePath = await serviceExecutablePath();
    log(`Chromium at ${executablePath} (executablePath() took ${round(performance.now() - t)} ms)`);
  }
  return executablePath;
};

await phase('floor', async (log) => {
  results.floor = await runFloor(await chromiumPath(log), config, mismatches, log);
});

await phase('service', async (log) => {
  const sampler = new TreeRssSampler();
  sampler.start(config.rssIntervalMs);
  // With a floor measured, each batch is paired with a floor pass run right after it (lib/floor.ts).
  const paired = results.floor ? await openPairedFloor(await chromiumPath(log), results.floor.best.concurrency, mismatches) : undefined;
  try {
    results.service = await runService(config, sampler, mismatches, log, paired);
    log(`RSS sampler: ${sampler.meanSampleMs()} ms per sample every ${config.rssIntervalMs} ms`);
  } finally {
    sampler.stop();
    await paired?.close();
  }
});

await phase('naive', async (log) => {
  results.naive = await runNaive(await chromiumPath(log), config, mismatches);
  log(`${results.naive.docsPerSecond} docs/s (p50 ${results.naive.perDocument.p50} ms per document)`);
});

await phase('cli', async (log) => {
  results.cli = await runCliTools(config, log);
});

await phase('lambda', async (log) => {
  results.lambda = await runLambda(config, log);
});

await phase('freezing', async (log) => {
  results.freezing = await runFreezing(config, log);
});

await phase('limits', async (log) => {
  results.limits = await runLimits(log);
});

await phase('burst', async (log) => {
  results.burst = await runBurst(log);
});

await phase('bulk', async (log) => {
  results.bulk = await runBulk(log);
});

await phase('bulk-lambda', async (log) => {
  results.bulkLambda = await runBulkLambda(config, log);
  assertBulkLambdaExact(results.bulkLambda);
});

await phase('bulk-crash', async (log) => {
  results.bulkCrash = await runBulkCrash(config, log);
  assertBulkCrashExact(results.bulkCrash);
});

await phase('bulk-fairness', async (log) => {
  results.bulkFairness = await runBulkFairness(config, log);
  assertBulkFair(results.bulkFairness);
});

await phase('bulk-memory', async (log) => {
  results.bulkMemory = await runBulkMemory({ lines: config.bulkMemoryLines, warmupLines: config.bulkMemoryWarmupLines }, log);
  assertBulkMemoryExact(results.bulkMemory);
});

await phase('neighbours', async (log) => {
  results.neighbours = await runNeighbours(log, { requests: config.neighboursRequests, lanes: config.neighboursHostileLanes });
});

await phase('merge-loop', async (log) => {
  results.mergeLoop = await runMergeLoop(log);
});

await phase('overload', async (log) => {
  results.overload = await runOverload(log, { requests: config.overloadRequests, backToBackRequests: config.overloadBackToBack });
});

await phase('cli-start', async (log) => {
  results.cliStart = await runCliStart(config.cliStartRuns, log);
});

await phase('image', async (log) => {
  results.image = await runImageBench(config.runs, config.warmup, log);
});

const durationSeconds = round((performance.now() - started) / 1000);
const meta = {
  finishedAt: new Date().toISOString(),
  durationSeconds,
  quick: config.quick,
  commit: git(['rev-parse', '--short', 'HEAD']),
  dirty: git(['status', '--porcelain']) !== '',
  node: process.versions.node,
  cpus: availableParallelism(),
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGiB: round(totalmem() / 2 ** 30),
  chromium: results.floor?.browserVersion ?? 'unknown',
  executablePath,
  busyBeforePhasePercent: busyBefore,
  foreignLoadDuringPhasePercent: foreignDuring,
  knobs: Object.fromEntries(KNOB_NAMES.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]])),
  config: { ...config, phases: [...config.phases] },
};
const methodNotes = [
  'Floor: raw puppeteer-core, the service\'s executable, flags and fonts, no egress proxy; one reused page per worker (no isolation between documents).',
  'Service: `node lib/local/start.ts` as a child process over HTTP (keep-alive); latency is measured by the client; every PDF is downloaded through its link and checked with pdf-lib outside the timed part.',
  'Batch ratio is judged on the best batch against the best of the floor passes paired with the batches (each run right after a batch, same document and count, at the floor\'s best concurrency), so both are measured under the same machine conditions; the ratio to the best pass of the concurrency sweep and the medians are shown beside it.',
  'Peak RSS is the sum of VmRSS over the stack process and all its descendants (Chromium included), sampled every ' +
    `${config.rssIntervalMs} ms; pages shared between processes are counted once per process.`,
  'Cold start is timed on a restart of the stack on the data directory of the first boot (so the key already exists); Chromium is already decompressed then, its decompression is the separate row.',
];
const warnings = [
  ...Object.entries(foreignDuring)
    .filter(([name, foreign]) => (foreign ?? 0) > BUSY_THRESHOLD_PERCENT || (busyBefore[name as Phase] ?? 0) > BUSY_THRESHOLD_PERCENT)
    .map(
      ([name, foreign]) =>
        `Busy machine: other work kept ${busyBefore[name as Phase]}% of the cores busy just before the ${name} phase and ${foreign}% during it; its figures are pessimistic.`,
    ),
  ...(results.floor && results.floor.best.concurrency === config.maxConcurrency
    ? [`The floor was fastest at the largest concurrency tried (${config.maxConcurrency} pages); BENCH_MAX_CONCURRENCY=${config.maxConcurrency + 2} may find more.`]
    : []),
  ...mismatches.map((m) => `Page count differs: ${m}`),
  ...failures.map((f) => `Phase failed: ${f.split('\n')[0]}`),
];

const text = renderText(results);
console.log('\n' + text + '\n');
for (const warning of warnings) console.log(`! ${warning}`);

const resultsDir = `${REPO_ROOT}bench/results`;
mkdirSync(resultsDir, { recursive: true });
writeFileSync(
  `${resultsDir}/latest.json`,
  JSON.stringify({ meta, rows: buildRows(results), results, pageCountMismatches: mismatches, failures }, null, 2) + '\n',
);
writeFileSync(`${resultsDir}/latest.md`, renderMarkdown(results, meta, [...warnings, ...methodNotes]));
console.log(`Wrote bench/results/latest.json and bench/results/latest.md (${durationSeconds} s in all).`);
process.exitCode = failures.length ? 1 : 0;
