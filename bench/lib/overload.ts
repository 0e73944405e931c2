/**
 * Bench phase `overload` (issue #39): overload goodput. One key sends `BENCH_OVERLOAD_REQUESTS` (400)
 * generates of the bench's invoice at once to a fresh local stack (default render slots and queue).
 * The service admits what its queue can take and refuses the rest at once (503 `service_busy`, or
 * 429); what it admits it should serve at least as fast as it serves one client sending back to
 * back, measured in the same run just before (and again just after, for the machine's drift).
 *
 * Goodput: the 200s divided by the time from sending the burst to the last 200. Reported beside it:
 * answers by status, the latency of the 200s and of the refusals (a refusal should come at once),
 * and quota used == the 200s.
 *
 * Run alone: `node bench/lib/overload.ts` (Node 24: through `npm run bench` or `npx node`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invoice } from './limits.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

/** Back-to-back requests before and after the burst, after these warm-ups. */
const WARMUP = 3;

export interface OverloadResults {
  readonly requests: number;
  /** Settings the stack ran with (its own defaults unless set in the environment). */
  readonly settings: Record<string, string>;
  /** One client, one request after another, before the burst: PDFs per second, and per request. */
  readonly backToBack: { readonly requests: number; readonly perSecond: number; readonly latency: LatencySummary };
  readonly backToBackAfter: { readonly requests: number; readonly perSecond: number; readonly latency: LatencySummary };
  readonly burst: {
    readonly statuses: Record<string, number>;
    readonly served: number;
    /** Burst sent to the last 200. */
    readonly servedInMs: number;
    readonly goodput: number;
    /** Burst sent to the last answer of any kind. */
    readonly allAnsweredMs: number;
    readonly servedLatency: LatencySummary;
    readonly refusedLatency: LatencySummary;
    readonly charged: number;
    /** Per second of the burst: the 200s and the refusals answered in it. */
    readonly timeline: readonly { readonly second: number; readonly served: number; readonly refused: number }[];
  };
  /** Goodput / back-to-back rate (before). */
  readonly ratio: number;
}

interface Answer {
  readonly status: number;
  readonly code?: string;
  readonly ms: number;
  /** When it was answered, from the burst's start. */
  readonly at: number;
}

async function generate(apiUrl: string, apiKey: string, n: number, since = performance.now()): Promise<Answer> {
  const sent = performance.now();
  const response = await fetch(`${apiUrl}/v1/pdf/generate`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ html: invoice(n) }),
  });
  const body = (await response.json().catch(() => null)) as { error?: { code?: string } } | null;
  const now = performance.now();
  return { status: response.status, ...(body?.error?.code && { code: body.error.code }), ms: now - sent, at: now - since };
}

async function backToBack(apiUrl: string, apiKey: string, requests: number, from: number) {
  for (let i = 0; i < WARMUP; i++) await generate(apiUrl, apiKey, from + i);
  const started = performance.now();
  const answers: Answer[] = [];
  for (let i = 0; i < requests; i++) answers.push(await generate(apiUrl, apiKey, from + WARMUP + i));
  const seconds = (performance.now() - started) / 1000;
  const failed = answers.filter((a) => a.status !== 200);
  if (failed.length) throw new Error(`back to back: ${failed.length} of ${requests} answered other than 200: ${JSON.stringify(failed.slice(0, 3))}`);
  return { requests, perSecond: round(requests / seconds, 2), latency: summarize(answers.map((a) => a.ms)) };
}

export async function runOverload(log: (line: string) => void, { requests, backToBackRequests }: { requests: number; backToBackRequests: number }): Promise<OverloadResults> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-overload-'));
  const stack = await startStackProcess(dataDir);
  try {
    const apiUrl = stack.info.apiUrl;
    const key = await createBenchKey(dataDir);
    const settings = Object.fromEntries(
      ['RENDER_CONCURRENCY', 'MAX_QUEUED_RENDERS', 'MAX_QUEUE_WAIT_MS'].filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]!]),
    );

    const before = await backToBack(apiUrl, key.apiKey, backToBackRequests, 0);
    log(`back to back, one client: ${before.perSecond} PDFs/s (p50 ${before.latency.p50} ms, p95 ${before.latency.p95} ms)`);
    const usedBefore = (await usage(apiUrl, key.apiKey)).quota_used;

    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: requests }, (_, i) => generate(apiUrl, key.apiKey, 10_000 + i, started)));
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    const servedInMs = Math.max(...served.map((a) => a.at));
    const charged = (await usage(apiUrl, key.apiKey)).quota_used - usedBefore;
    const burst: OverloadResults['burst'] = {
      statuses: tallyAnswers(answers),
      served: served.length,
      servedInMs: Math.round(servedInMs),
      goodput: round(served.length / (servedInMs / 1000), 2),
      allAnsweredMs: Math.round(Math.max(...answers.map((a) => a.at))),
      servedLatency: summarize(served.map((a) => a.ms)),
      refusedLatency: summarize(refused.map((a) => a.ms)),
      charged,
      timeline: Array.from({ length: Math.ceil(Math.max(...answers.map((a) => a.at)) / 1000) }, (_, second) => {
        const inIt = answers.filter((a) => Math.floor(a.at / 1000) === second);
        return { second, served: inIt.filter((a) => a.status === 200).length, refused: inIt.filter((a) => a.status !== 200).length };
      }),
    };
    log(
      `${requests} at once: ${JSON.stringify(burst.statuses)}; ${burst.served} served in ${burst.servedInMs} ms = ${burst.goodput} PDFs/s ` +
        `(200s p50 ${burst.servedLatency.p50} ms, max ${burst.servedLatency.max} ms; refusals p50 ${burst.refusedLatency.p50} ms, p95 ${burst.refusedLatency.p95} ms, max ${burst.refusedLatency.max} ms); ` +
        `all answered in ${burst.allAnsweredMs} ms; charged ${charged}`,
    );
    log(`per second of the burst, served/refused: ${burst.timeline.map((t) => `${t.served}/${t.refused}`).join(' ')}`);

    const after = await backToBack(apiUrl, key.apiKey, backToBackRequests, 20_000);
    log(`back to back again: ${after.perSecond} PDFs/s (p50 ${after.latency.p50} ms)`);
    return { requests, settings, backToBack: before, backToBackAfter: after, burst, ratio: round(burst.goodput / before.perSecond, 2) };
  } finally {
    await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  }
}

function tallyAnswers(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const name = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

async function usage(apiUrl: string, apiKey: string): Promise<{ quota_used: number }> {
  return (await (await fetch(`${apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { quota_used: number };
}

if (import.meta.main) {
  const results = await runOverload((line) => console.log(line), {
    requests: Number(process.env.BENCH_OVERLOAD_REQUESTS ?? 400),
    backToBackRequests: Number(process.env.BENCH_OVERLOAD_BACK_TO_BACK ?? 30),
  });
  console.log(JSON.stringify(results, null, 2));
}
