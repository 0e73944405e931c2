/**
 * Bench phase `neighbours` (issue #39): neighbours unharmed. Stored templates are filled in worker
 * threads (lib/customer-code/pool.ts), each fill held to TEMPLATE_FILL_TIME_LIMIT_MS; this measures
 * what one key's hostile templates, sent as fast as that key may, cost another key and /health.
 *
 * On a fresh local stack, two keys: B (the neighbour, enterprise, limits out of the way) and A (the
 * hostile key, a starter key at its tier's rate limit) with a stored template that holds a worker for
 * its whole fill limit (ONE_LONG_FILTER_CALL, test/support/hostile-templates.ts). Then:
 * 1. idle: B sends the bench's invoice, one request after another (`BENCH_NEIGHBOURS_REQUESTS`,
 *    after warm-ups), while a prober asks /health every HEALTH_EVERY_MS;
 * 2. loaded: the same while A keeps `BENCH_NEIGHBOURS_HOSTILE_LANES` generates of the hostile template
 *    in flight, never sending faster than its rate limit (a 429 waits its Retry-After);
 * 3. idle again, to see how far the machine drifted meanwhile (it is shared).
 * Reported: p50/p95/max of B's generates and of /health in each, the loaded-over-idle ratios, and how
 * A's requests ended (all should be 422 `template_error` naming the limit), uncharged.
 *
 * Targets (issue #39): B's loaded p95 within 1.5× its idle p95; /health under 200 ms while loaded.
 *
 * Run alone: `node bench/lib/neighbours.ts` (Node 24: `npx node` or through `npm run bench`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMPLATE_FILL_TIME_LIMIT_MS } from '../../lib/customer-code/limits.ts';
import { TIERS } from '../../lib/accounts/tiers.ts';
import { ONE_LONG_FILTER_CALL } from '../../test/support/hostile-templates.ts';
import { invoice } from './limits.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

/** The hostile key's tier; it sends at this tier's requests per minute at most. */
const HOSTILE_TIER = 'starter';
/** /health is asked this often while B's requests run. */
const HEALTH_EVERY_MS = 250;
/** B's unmeasured requests before each window. */
const WARMUP = 10;

export const NEIGHBOURS_TARGETS = { loadedOverIdleP95: 1.5, healthMs: 200 } as const;

export interface NeighboursWindow {
  /** B's generates, client latency of the 200s. */
  readonly generate: LatencySummary;
  readonly generateStatuses: Record<number, number>;
  readonly health: LatencySummary;
  readonly healthStatuses: Record<number, number>;
  /** Share of the window during which the hostile key had at least one request in flight (loaded only). */
  readonly hostileBusyShare?: number;
}

export interface NeighboursResults {
  readonly requests: number;
  readonly hostile: {
    readonly tier: string;
    readonly ratePerMinute: number;
    readonly lanes: number;
    readonly fillLimitMs: number;
    /** A's answers by status and error code, e.g. `422 template_error`. */
    readonly outcomes: Record<string, number>;
    /** A's answers that were 422 and named the fill limit. */
    readonly namingTheLimit: number;
    readonly latency: LatencySummary;
    /** A's requests answered per minute while it sent. */
    readonly perMinute: number;
    /** Quota A was charged (should be 0). */
    readonly charged: number;
  };
  readonly idle: NeighboursWindow;
  readonly loaded: NeighboursWindow;
  readonly idleAfter: NeighboursWindow;
  /** Loaded p95 / idle (before) p95 of B's generates. */
  readonly p95Ratio: number;
  readonly p50Ratio: number;
}

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly body: any;
  readonly retryAfter: string | null;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  const ms = performance.now() - started;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, ms, body, retryAfter: response.headers.get('retry-after') };
}

const post = (apiUrl: string, path: string, apiKey: string, body: unknown) =>
  call(apiUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function tally<T>(items: readonly T[], keyOf: (item: T) => string | number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}

async function quotaUsed(apiUrl: string, apiKey: string): Promise<number> {
  const usage = (await (await fetch(`${apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { quota_used: number };
  return usage.quota_used;
}

/**
 * The hostile key at work: `lanes` requests in flight at most, each sent no sooner than its place in
 * a schedule of one every 60 s / `ratePerMinute` (so the key never sends faster than its rate limit),
 * a 429 waiting its Retry-After. `busyMs(from, to)` tells how long at least one was in flight.
 */
function driveHostile(apiUrl: string, apiKey: string, templateId: string, { lanes, ratePerMinute }: { lanes: number; ratePerMinute: number }) {
  const intervalMs = 60_000 / ratePerMinute;
  const answers: Answer[] = [];
  let nextSendAt = performance.now();
  let stopped = false;
  let inFlight = 0;
  /** [start, end] of the periods with at least one request in flight. */
  const busy: [number, number | undefined][] = [];
  const began = performance.now();
  const lane = async () => {
    while (!stopped) {
      const at = Math.max(performance.now(), nextSendAt);
      nextSendAt = at + intervalMs;
      await sleep(at - performance.now());
      if (stopped) return;
      if (inFlight++ === 0) busy.push([performance.now(), undefined]);
      const answer = await post(apiUrl, '/v1/pdf/generate', apiKey, { template_id: templateId });
      if (--inFlight === 0) busy[busy.length - 1]![1] = performance.now();
      answers.push(answer);
      if (answer.status === 429) await sleep(1000 * Number(answer.retryAfter ?? 1));
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, lane));
  return {
    inFlight: () => inFlight,
    busyMs(from: number, to: number): number {
      let total = 0;
      for (const [start, end = performance.now()] of busy) total += Math.max(0, Math.min(end, to) - Math.max(start, from));
      return total;
    },
    async stop(): Promise<{ answers: Answer[]; seconds: number }> {
      stopped = true;
      await running;
      return { answers, seconds: (performance.now() - began) / 1000 };
    },
  };
}

/** B's requests one after another, /health asked meanwhile. */
async function measureWindow(apiUrl: string, apiKey: string, requests: number, from: number): Promise<{ window: Omit<NeighboursWindow, 'hostileBusyShare'>; startedAt: number; endedAt: number }> {
  for (let i = 0; i < WARMUP; i++) await post(apiUrl, '/v1/pdf/generate', apiKey, { html: invoice(from + i) });
  const startedAt = performance.now();
  let done = false;
  const healthAnswers: Answer[] = [];
  const prober = (async () => {
    while (!done) {
      const next = performance.now() + HEALTH_EVERY_MS;
      healthAnswers.push(await call(`${apiUrl}/health`));
      await sleep(next - performance.now());
    }
  })();
  const generates: Answer[] = [];
  for (let i = 0; i < requests; i++) generates.push(await post(apiUrl, '/v1/pdf/generate', apiKey, { html: invoice(from + WARMUP + i) }));
  done = true;
  await prober;
  const endedAt = performance.now();
  return {
    window: {
      generate: summarize(generates.filter((a) => a.status === 200).map((a) => a.ms)),
      generateStatuses: tally(generates, (a) => a.status),
      health: summarize(healthAnswers.map((a) => a.ms)),
      healthStatuses: tally(healthAnswers, (a) => a.status),
    },
    startedAt,
    endedAt,
  };
}

export async function runNeighbours(log: (line: string) => void, { requests, lanes }: { requests: number; lanes: number }): Promise<NeighboursResults> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-neighbours-'));
  const stack = await startStackProcess(dataDir);
  try {
    const apiUrl = stack.info.apiUrl;
    const ratePerMinute = TIERS[HOSTILE_TIER].rateLimitPerMinute;
    const [neighbour, hostile] = await Promise.all([
      createBenchKey(dataDir, { name: 'neighbour' }),
      createBenchKey(dataDir, { tier: HOSTILE_TIER, rateLimitPerMinute: ratePerMinute, name: 'hostile' }),
    ]);
    const saved = await post(apiUrl, '/v1/templates', hostile.apiKey, { name: 'Hostile', html: ONE_LONG_FILTER_CALL });
    if (saved.status !== 201) throw new Error(`saving the hostile template answered ${saved.status}: ${JSON.stringify(saved.body)}`);
    const templateId = saved.body.template_id as string;
    const chargedBefore = await quotaUsed(apiUrl, hostile.apiKey);

    const idle = (await measureWindow(apiUrl, neighbour.apiKey, requests, 0)).window;
    log(`idle: B's generate p50 ${idle.generate.p50} ms, p95 ${idle.generate.p95} ms; /health p50 ${idle.health.p50} ms, p95 ${idle.health.p95} ms, max ${idle.health.max} ms`);

    const driver = driveHostile(apiUrl, hostile.apiKey, templateId, { lanes, ratePerMinute });
    // Until every lane has a request in flight (and so a worker is held, the rest waiting for it).
    const deadline = performance.now() + 10_000;
    while (driver.inFlight() < lanes && performance.now() < deadline) await sleep(20);
    await sleep(500);
    const measured = await measureWindow(apiUrl, neighbour.apiKey, requests, 1_000);
    const loaded: NeighboursWindow = { ...measured.window, hostileBusyShare: round(driver.busyMs(measured.startedAt, measured.endedAt) / (measured.endedAt - measured.startedAt), 2) };
    const { answers, seconds } = await driver.stop();
    log(
      `loaded (A: ${lanes} hostile generates in flight, at most ${ratePerMinute}/min): B's generate p50 ${loaded.generate.p50} ms, p95 ${loaded.generate.p95} ms; ` +
        `/health p50 ${loaded.health.p50} ms, p95 ${loaded.health.p95} ms, max ${loaded.health.max} ms; A in flight ${Math.round(100 * loaded.hostileBusyShare!)} % of the window`,
    );

    const idleAfter = (await measureWindow(apiUrl, neighbour.apiKey, requests, 2_000)).window;
    log(`idle after: B's generate p50 ${idleAfter.generate.p50} ms, p95 ${idleAfter.generate.p95} ms; /health p95 ${idleAfter.health.p95} ms`);

    const limitWords = `took longer than ${TEMPLATE_FILL_TIME_LIMIT_MS} ms`;
    const hostileResults: NeighboursResults['hostile'] = {
      tier: HOSTILE_TIER,
      ratePerMinute,
      lanes,
      fillLimitMs: TEMPLATE_FILL_TIME_LIMIT_MS,
      outcomes: tally(answers, (a) => `${a.status}${a.body?.error?.code ? ` ${a.body.error.code}` : ''}`),
      namingTheLimit: answers.filter((a) => a.status === 422 && String(a.body?.error?.message ?? '').includes(limitWords)).length,
      latency: summarize(answers.map((a) => a.ms)),
      perMinute: round((60 * answers.length) / seconds),
      charged: (await quotaUsed(apiUrl, hostile.apiKey)) - chargedBefore,
    };
    log(
      `A's ${answers.length} requests: ${JSON.stringify(hostileResults.outcomes)} (${hostileResults.namingTheLimit} naming the ${TEMPLATE_FILL_TIME_LIMIT_MS} ms limit), ` +
        `${hostileResults.perMinute}/min, p50 ${hostileResults.latency.p50} ms, max ${hostileResults.latency.max} ms; charged ${hostileResults.charged}`,
    );
    return {
      requests,
      hostile: hostileResults,
      idle,
      loaded,
      idleAfter,
      p95Ratio: round(loaded.generate.p95 / idle.generate.p95, 2),
      p50Ratio: round(loaded.generate.p50 / idle.generate.p50, 2),
    };
  } finally {
    await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const results = await runNeighbours((line) => console.log(line), {
    requests: Number(process.env.BENCH_NEIGHBOURS_REQUESTS ?? 30),
    lanes: Number(process.env.BENCH_NEIGHBOURS_HOSTILE_LANES ?? 4),
  });
  console.log(JSON.stringify(results, null, 2));
}
