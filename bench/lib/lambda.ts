/**
 * The stack as Lambda runs it (the emulation of test/lambda/emulator): cold starts of the generate
 * function to its first PDF, pinned to one core, with where the time goes; warm durations of
 * generate, a render item and a download at one core and at two; and from those, what 1,000 PDFs
 * cost at 1,024, 2,048 and 3,008 MB (bench/lib/lambda-cost.ts).
 *
 * Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB, so 2,048 MB is
 * about 1.16 vCPU (measured here on one core: slightly pessimistic) and 3,008 MB about 1.7 vCPU
 * (measured on two cores: slightly optimistic); 1,024 MB (0.58 vCPU) is modelled from one core,
 * its CPU-bound time stretched by 1,769/1,024.
 *
 * Environments are frozen between invocations, as Lambda freezes them (test/lambda/emulator), so
 * the warm figures count only what a frozen environment has ready. The freezing phase compares
 * warm generate with freezing on and off (runFreezing).
 *
 * Both phases run one synthesized assembly (BENCH_LAMBDA_CDK_OUT reuses one already synthesized).
 */
import { rmSync } from 'node:fs';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { CHROMIUM_MEMORY_MB, LIGHT_MEMORY_MB } from '../../cdk/stack.ts';
import { readEvent, withBody, withKey, withPdf } from '../../test/support/sample-events.ts';
import { isolationAvailable } from '../../test/lambda/emulator/environment.ts';
import { startEmulatedStack, type EmulatedStack } from '../../test/lambda/emulator/stack.ts';
import { synthesize } from '../../test/support/synth.ts';
import type { BenchConfig } from './config.ts';
import { corpusDocument, THROUGHPUT_DOCUMENT } from './corpus.ts';
import { costPer1000, MB_PER_VCPU } from './lambda-cost.ts';
import { median, quantile, round } from './stats.ts';

export interface ColdStart {
  /** The runtime's start and the bundle's module init (Lambda's Init Duration). */
  readonly initMs: number;
  /** Unpacking Chromium into /tmp. */
  readonly unpackMs: number;
  /** Starting the browser. */
  readonly launchMs: number;
  /** The document itself: render, upload, record. */
  readonly documentMs: number;
  readonly totalMs: number;
}

export interface WarmDurations {
  readonly generateMs: number;
  readonly renderMs: number;
  readonly downloadMs: number;
  /** The batch function's duration for a batch whose items render in parallel. */
  readonly batchMs: number;
}

export interface CostRow {
  readonly memoryMb: number;
  readonly basis: string;
  readonly generateMs: number;
  readonly renderMs: number;
  readonly single: number;
  readonly batchItem: number;
}

export interface LambdaResult {
  readonly isolation: string;
  readonly coldStarts: readonly ColdStart[];
  readonly cold: ColdStart;
  readonly warm: { readonly oneCore: WarmDurations; readonly twoCores: WarmDurations };
  readonly cost: readonly CostRow[];
  readonly chosenMemoryMb: number;
}

/** Warm generate with environments frozen between invocations or left running, after the same idle gap. */
export interface FreezingMode {
  /** The caller's wait: invoke to answer. */
  readonly latencyP50Ms: number;
  readonly latencyP95Ms: number;
  /** Lambda's billed duration: the runtime's answer plus the extensions' post-runtime time, rounded up to the millisecond. */
  readonly billedP50Ms: number;
  /** Of that, the post-runtime extension time (PostRuntimeExtensionsDuration): the next workspace prepared after the answer. */
  readonly postRuntimeP50Ms: number;
}

export interface FreezingComparison {
  /** Idle time before each measured invocation. */
  readonly gapMs: number;
  /** Invocations measured per mode. */
  readonly runs: number;
  /** Frozen as Lambda freezes: once the runtime and the function's extension (the next workspace prepared) have asked for their next event. */
  readonly frozen: FreezingMode;
  /** Frozen once the runtime asked, the extension ignored: work left at the answer resumes in the next invocation (how it was before the extension). */
  readonly frozenIgnoringExtension: FreezingMode;
  /** Left running through the gap: work left at the answer ends meanwhile, unbilled. */
  readonly running: FreezingMode;
  /**
   * Frozen once the work left at the answer has ended: the state a function that finished it
   * before its handler returned would leave. Its billed figure adds that work (`tailP50Ms`): what
   * answering first and then preparing (response streaming) would bill, at this mode's latency;
   * awaiting the work before answering would have that billed figure as its latency too.
   */
  readonly frozenAfterTail: FreezingMode & { readonly tailP50Ms: number };
  /** Frozen over running, warm p50 latency. */
  readonly ratio: number;
}

export interface FreezingResult {
  readonly isolation: string;
  readonly comparisons: readonly FreezingComparison[];
}

/**
 * Idle gaps before the compared invocations: one long enough for work left at the answer to end
 * while an environment runs, and one past the renderer's 5 s timers (a timer due while frozen
 * fires at the thaw).
 */
const FREEZING_GAPS_MS = [1_000, 6_000];

/**
 * Most environments of one function the emulation starts in the phases that load it (burst,
 * bulk-lambda): Lambda would start one per concurrent invocation, but this machine's two cores
 * cannot hold more Chromiums; past them, invocations wait for one, holding their concurrent
 * execution meanwhile.
 */
export const ENVIRONMENTS_PER_FUNCTION = 10;

let assembly: Promise<string> | undefined;

/** The synthesized assembly the emulation's phases run (these two and burst), made once (or BENCH_LAMBDA_CDK_OUT), removed at exit. */
export function synthesizedAssembly(): Promise<string> {
  const given = process.env.BENCH_LAMBDA_CDK_OUT;
  assembly ??= given
    ? Promise.resolve(given)
    : synthesize().then((outdir) => {
        process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
        return outdir;
      });
  return assembly;
}

/** Items per batch the cost is quoted for: the API's maximum, all rendering in parallel. */
const PRICED_BATCH_SIZE = 100;

export async function runLambda(config: BenchConfig, log: (line: string) => void): Promise<LambdaResult> {
  const outdir = await synthesizedAssembly();
  log(`synthesized; isolation: ${isolationAvailable()}`);
  const coldRuns = config.quick ? 1 : 3;
  const warmRuns = config.quick ? 3 : 10;
  const oneCore = await startEmulatedStack(outdir, { cpus: '0' });
  let coldStarts: ColdStart[];
  let warmOne: WarmDurations;
  try {
    coldStarts = await measureColdStarts(oneCore, coldRuns, log);
    warmOne = await measureWarm(oneCore, warmRuns);
  } finally {
    await oneCore.stop();
  }
  log(`one core, warm p50: generate ${warmOne.generateMs} ms, render ${warmOne.renderMs} ms, download ${warmOne.downloadMs} ms, batch of 2 ${warmOne.batchMs} ms`);
  const twoCores = await startEmulatedStack(outdir, { cpus: '0,1' });
  let warmTwo: WarmDurations;
  try {
    warmTwo = await measureWarm(twoCores, warmRuns);
  } finally {
    await twoCores.stop();
  }
  log(`two cores, warm p50: generate ${warmTwo.generateMs} ms, render ${warmTwo.renderMs} ms`);
  const cold = {
    initMs: median(coldStarts.map((c) => c.initMs)),
    unpackMs: median(coldStarts.map((c) => c.unpackMs)),
    launchMs: median(coldStarts.map((c) => c.launchMs)),
    documentMs: median(coldStarts.map((c) => c.documentMs)),
    totalMs: median(coldStarts.map((c) => c.totalMs)),
  };
  return { isolation: isolationAvailable(), coldStarts, cold, warm: { oneCore: warmOne, twoCores: warmTwo }, cost: costRows(warmOne, warmTwo), chosenMemoryMb: CHROMIUM_MEMORY_MB };
}

/**
 * Warm generate of the invoice on one core (the deployed 2,048 MB is 1.16 vCPU), each invocation
 * after an idle gap, with the environment frozen through the gap or left running. The two modes
 * alternate in one environment (the freeze at an answer decides the gap after it), so both see the
 * same machine: it is shared, and its speed drifts over minutes.
 */
export async function runFreezing(config: BenchConfig, log: (line: string) => void): Promise<FreezingResult> {
  const outdir = await synthesizedAssembly();
  const stack = await startEmulatedStack(outdir, { cpus: '0' });
  try {
    const { apiKey } = await stack.createKey('enterprise');
    const event = withBody(withKey(readEvent('generate'), apiKey), invoiceRequest());
    const comparisons: FreezingComparison[] = [];
    for (const gapMs of FREEZING_GAPS_MS) {
      // BENCH_RUNS per mode after the short gap, a third of them after the long one.
      const runs = gapMs > 1_000 ? Math.ceil(config.runs / 3) : config.runs;
      comparisons.push(await compareFreezing(stack, event, gapMs, runs));
      const { frozen, frozenIgnoringExtension: before, running, frozenAfterTail: tail, ratio } = comparisons.at(-1)!;
      log(
        `warm generate after ${gapMs} ms idle, p50 latency / billed: frozen ${frozen.latencyP50Ms} / ${frozen.billedP50Ms} ms, ` +
          `running ${running.latencyP50Ms} / ${running.billedP50Ms} ms (${ratio}×); post-runtime (frozen) ${frozen.postRuntimeP50Ms} ms; ` +
          `frozen ignoring the extension (before) ${before.latencyP50Ms} / ${before.billedP50Ms} ms; ` +
          `frozen after the work left at the answer ${tail.latencyP50Ms} / ${tail.billedP50Ms} ms (that work ${tail.tailP50Ms} ms)`,
      );
    }
    return { isolation: isolationAvailable(), comparisons };
  } finally {
    await stack.stop();
  }
}

async function compareFreezing(stack: EmulatedStack, event: unknown, gapMs: number, runs: number): Promise<FreezingComparison> {
  type Mode = 'frozen' | 'frozenIgnoringExtension' | 'running' | 'frozenAfterTail';
  const freezingOf: Record<Mode, 'at-answer' | 'ignoring-extensions' | 'off' | 'after-tail'> = {
    frozen: 'at-answer',
    frozenIgnoringExtension: 'ignoring-extensions',
    running: 'off',
    frozenAfterTail: 'after-tail',
  };
  // Warm, and settled into the steady state (the workspaces the first documents leave prepared).
  for (let run = 0; run < 3; run++) await invoke(stack, 'generate', event);
  const order: Mode[] = ['running', 'frozen', 'frozenIgnoringExtension', 'frozenAfterTail'];
  const modes = Array.from({ length: order.length * runs + 1 }, (_, index) => order[index % order.length]!);
  const seen: Record<Mode, { latency: number; billed: number; postRuntime: number; tail: number }[]> = { frozen: [], frozenIgnoringExtension: [], running: [], frozenAfterTail: [] };
  let tailBefore = 0;
  let postRuntimeBefore = 0;
  for (let index = 0; index < modes.length; index++) {
    // This answer's freeze (or not) is the gap before the next invocation.
    const next = modes[index + 1];
    stack.emulator.freezing = next ? freezingOf[next] : 'at-answer';
    const started = performance.now();
    const { record, payload } = await invoke(stack, 'generate', event);
    const latency = performance.now() - started;
    if (payload.statusCode !== 200) throw new Error(`warm generate answered ${payload.statusCode}: ${payload.body}`);
    // The work this invocation's predecessor left at its answer, where its freeze waited for it.
    const [environment] = stack.emulator.environments(functionId('generate'));
    // The first invocation's gap was none of them.
    // A mode is the freeze before an invocation, decided at its predecessor's answer: what it bills is
    // this invocation's runtime and the post-runtime work its predecessor did before that freeze (in
    // a steady state of one mode every invocation bills both). This invocation's own post-runtime
    // time belongs to the next mode.
    const report = await record.report!;
    if (index > 0) seen[modes[index]!].push({ latency, billed: Math.ceil(report.runtimeDurationMs + postRuntimeBefore), postRuntime: postRuntimeBefore, tail: tailBefore });
    postRuntimeBefore = report.postRuntimeExtensionsDurationMs;
    await environment?.whenFrozen();
    tailBefore = next === 'frozenAfterTail' ? (environment?.lastTailMs ?? 0) : 0;
    if (next) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  stack.emulator.freezing = 'at-answer';
  const summary = (values: { latency: number; billed: number; postRuntime: number }[]): FreezingMode => ({
    latencyP50Ms: round(median(values.map((v) => v.latency))),
    latencyP95Ms: round(quantile(values.map((v) => v.latency), 0.95)),
    billedP50Ms: round(median(values.map((v) => v.billed))),
    postRuntimeP50Ms: round(median(values.map((v) => v.postRuntime))),
  });
  const frozen = summary(seen.frozen);
  const running = summary(seen.running);
  // Billed as if the work left at the previous answer had been done (and billed) before it.
  const afterTail = seen.frozenAfterTail;
  const frozenAfterTail = {
    ...summary(afterTail),
    billedP50Ms: round(median(afterTail.map((v) => v.billed + Math.ceil(v.tail)))),
    tailP50Ms: round(median(afterTail.map((v) => v.tail))),
  };
  return { gapMs, runs, frozen, frozenIgnoringExtension: summary(seen.frozenIgnoringExtension), running, frozenAfterTail, ratio: round(frozen.latencyP50Ms / running.latencyP50Ms, 2) };
}

function costRows(one: WarmDurations, two: WarmDurations): CostRow[] {
  const stretch = MB_PER_VCPU / 1_024;
  const sizes: [number, string, WarmDurations][] = [
    [1_024, `modelled: one core × ${round(stretch, 2)}`, { ...one, generateMs: round(one.generateMs * stretch), renderMs: round(one.renderMs * stretch) }],
    [2_048, 'measured on one core (1.16 vCPU in AWS)', one],
    [3_008, 'measured on two cores (1.7 vCPU in AWS)', two],
  ];
  return sizes.map(([memoryMb, basis, durations]) => {
    const cost = costPer1000({
      memoryMb,
      generateMs: durations.generateMs,
      renderMs: durations.renderMs,
      // A batch of 100 renders its items in parallel: it takes about as long as a small one.
      batchShareMs: durations.batchMs / PRICED_BATCH_SIZE,
      lightMemoryMb: LIGHT_MEMORY_MB,
      downloadMs: one.downloadMs,
      batchSize: PRICED_BATCH_SIZE,
    });
    return { memoryMb, basis, generateMs: durations.generateMs, renderMs: durations.renderMs, single: round(cost.single, 3), batchItem: round(cost.batchItem, 3) };
  });
}

async function invoke(stack: EmulatedStack, name: string, event: unknown) {
  const { record, payload } = await stack.emulator.invokeOk(functionId(name), event);
  return { record, payload: payload as APIGatewayProxyResult };
}

const invoiceRequest = () => {
  const document = corpusDocument(THROUGHPUT_DOCUMENT);
  return { html: document.html, ...document.options };
};

async function measureColdStarts(stack: EmulatedStack, runs: number, log: (line: string) => void): Promise<ColdStart[]> {
  const { apiKey } = await stack.createKey('enterprise');
  const event = withBody(withKey(readEvent('generate'), apiKey), invoiceRequest());
  const starts: ColdStart[] = [];
  for (let run = 0; run < runs; run++) {
    await stack.emulator.retire(functionId('generate'));
    const { record, payload } = await invoke(stack, 'generate', event);
    if (payload.statusCode !== 200) throw new Error(`cold generate answered ${payload.statusCode}: ${payload.body}`);
    const launched = stack.emulator
      .output(functionId('generate'))
      .split('\n')
      .map((line) => /"unpack_ms":(\d+),"launch_ms":(\d+)/.exec(line))
      .find(Boolean);
    if (!launched || record.initMs === undefined) throw new Error('the cold start did not log its browser launch');
    const unpackMs = Number(launched[1]);
    const launchMs = Number(launched[2]);
    const start = {
      initMs: round(record.initMs),
      unpackMs,
      launchMs,
      documentMs: round(record.durationMs - unpackMs - launchMs),
      totalMs: round(record.initMs + record.durationMs),
    };
    log(`cold start ${run + 1}: ${start.totalMs} ms to the first PDF (init ${start.initMs}, unpack ${unpackMs}, launch ${launchMs}, document ${start.documentMs})`);
    starts.push(start);
  }
  return starts;
}

async function measureWarm(stack: EmulatedStack, runs: number): Promise<WarmDurations> {
  const { apiKey, keyId } = await stack.createKey('enterprise');
  const generateEvent = withBody(withKey(readEvent('generate'), apiKey), invoiceRequest());
  const renderEvent = { ...readEvent<Record<string, unknown>>('render'), owner: { keyId, tier: 'enterprise' }, item: { html: invoiceRequest().html, options: corpusDocument(THROUGHPUT_DOCUMENT).options } };
  // Warm every function first: the figures are of warm environments.
  const first = JSON.parse((await invoke(stack, 'generate', generateEvent)).payload.body) as { id: string; url: string };
  await invoke(stack, 'render', renderEvent);
  const downloadEvent = withPdf(readEvent('files'), first.id, Object.fromEntries(new URL(first.url).searchParams));
  await invoke(stack, 'files', downloadEvent);
  const batchEvent = withBody(withKey(readEvent('batch'), apiKey), { pdfs: [invoiceRequest(), invoiceRequest()].map(({ html, ...options }) => ({ html, options })) });
  await invoke(stack, 'batch', batchEvent);
  const p50 = async (name: string, event: unknown) => {
    const durations: number[] = [];
    // Billed: the runtime's answer and the extensions' post-runtime time (the Chromium functions' next workspace).
    for (let run = 0; run < runs; run++) durations.push((await (await invoke(stack, name, event)).record.report!).durationMs);
    return round(median(durations));
  };
  return {
    generateMs: await p50('generate', generateEvent),
    renderMs: await p50('render', renderEvent),
    downloadMs: await p50('files', downloadEvent),
    batchMs: await p50('batch', batchEvent),
  };
}
