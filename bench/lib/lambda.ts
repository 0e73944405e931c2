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
import { median, round } from './stats.ts';

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

/** Items per batch the cost is quoted for: the API's maximum, all rendering in parallel. */
const PRICED_BATCH_SIZE = 100;

export async function runLambda(config: BenchConfig, log: (line: string) => void): Promise<LambdaResult> {
  const outdir = await synthesize();
  try {
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
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
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
    for (let run = 0; run < runs; run++) durations.push((await invoke(stack, name, event)).record.durationMs);
    return round(median(durations));
  };
  return {
    generateMs: await p50('generate', generateEvent),
    renderMs: await p50('render', renderEvent),
    downloadMs: await p50('files', downloadEvent),
    batchMs: await p50('batch', batchEvent),
  };
}
