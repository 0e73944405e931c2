/**
 * Bench phase `burst` (issue #28): a cold burst of 100, in the Lambda emulation behind a gateway
 * (test/lambda/emulator/api.ts), environments frozen between invocations as Lambda freezes them.
 * 100 generate requests (the bench's invoice) sent at once to a stack with no environment started:
 * every answer's latency as the client sees it (p50, p95, max, of the 200s), the answers by status,
 * and how many environments started cold.
 *
 * Lambda would start one environment per concurrent request, up to the account's concurrency.
 * This machine has two cores and cannot hold 100 Chromium environments, so the emulation starts at
 * most ENVIRONMENTS_PER_FUNCTION of the function and the rest of the burst waits for one of them (holding
 * its concurrent execution meanwhile, as a request in AWS would hold its own environment): at
 * account concurrency 1000 the figures are those of 100 requests sharing 10 environments on two
 * cores, an upper bound on what AWS's 100 environments would give. At account concurrency 10 (a
 * new account) the limit itself decides: 10 run, the rest are throttled, and the gateway answers
 * them 503 with Retry-After.
 *
 * And a batch of 100 invoices at account concurrency 10, its fan-out throttled by Lambda: how many
 * of its items fit in the batch's 27 s on this host (the rest answer SERVICE_BUSY, uncharged). The
 * tests assert only that every item is a success or out of time and the charge is exact
 * (test/lambda/limits.test.ts); how many fit is this row's figure.
 */
import { functionId } from '../../cdk/constructs/service-function.ts';
import { startEmulatedApi } from '../../test/lambda/emulator/api.ts';
import { startEmulatedStack } from '../../test/lambda/emulator/stack.ts';
import { corpusDocument, THROUGHPUT_DOCUMENT } from './corpus.ts';
import { ENVIRONMENTS_PER_FUNCTION, synthesizedAssembly } from './lambda.ts';
import { invoice } from './limits.ts';
import { summarize, type LatencySummary } from './stats.ts';

/** Requests in the burst. */
const BURST = 100;

export interface BurstRow {
  readonly accountConcurrency: number;
  readonly requests: number;
  /** Answers by HTTP status. */
  readonly statuses: Record<number, number>;
  /** Latency of the 200s, as the client saw it (send to answer). */
  readonly latency: LatencySummary;
  /** Environments of generate started cold by the burst. */
  readonly coldStarts: number;
  /** The cold starts' own time (init + first invocation), median. */
  readonly coldStartMedianMs: number;
  /** Send of the first request to the last answer. */
  readonly wallMs: number;
}

export interface BatchRow {
  readonly accountConcurrency: number;
  readonly items: number;
  /** Items by outcome: OK or the item's error code. */
  readonly outcomes: Record<string, number>;
  readonly ms: number;
  /** Quota used == the successes. */
  readonly exact: boolean;
}

export interface BurstResults {
  readonly environmentsCap: number;
  readonly rows: readonly BurstRow[];
  readonly batchOf100?: BatchRow;
}

/** A batch of 100 at this account concurrency, after a batch of 9 of another key has started the render environments. */
async function batchAt(outdir: string, accountConcurrency: number): Promise<BatchRow> {
  const stack = await startEmulatedStack(outdir, { accountConcurrency, maxEnvironmentsPerFunction: ENVIRONMENTS_PER_FUNCTION });
  const api = await startEmulatedApi(stack.emulator);
  const batch = async (apiKey: string, from: number, count: number) => {
    const pdfs = Array.from({ length: count }, (_, i) => ({ html: invoice(from + i) }));
    const response = await fetch(`${api.apiUrl}/v1/pdf/batch`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ pdfs }) });
    return { status: response.status, body: (await response.json()) as { results?: { success: boolean; error?: { code: string } }[] } };
  };
  try {
    await batch((await stack.createKey('pro')).apiKey, 500, 9);
    const { apiKey } = await stack.createKey('pro');
    const started = performance.now();
    const answer = await batch(apiKey, 0, 100);
    const ms = Math.round(performance.now() - started);
    const outcomes: Record<string, number> = {};
    for (const result of answer.body.results ?? []) {
      const code = result.success ? 'OK' : result.error!.code;
      outcomes[code] = (outcomes[code] ?? 0) + 1;
    }
    if (answer.status !== 200) outcomes[`HTTP ${answer.status}`] = 100;
    const usage = (await (await fetch(`${api.apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { quota_used: number };
    return { accountConcurrency, items: 100, outcomes, ms, exact: usage.quota_used === (outcomes.OK ?? 0) };
  } finally {
    await api.close();
    await stack.stop();
  }
}

async function burstAt(outdir: string, accountConcurrency: number): Promise<BurstRow> {
  const stack = await startEmulatedStack(outdir, { accountConcurrency, maxEnvironmentsPerFunction: ENVIRONMENTS_PER_FUNCTION });
  const api = await startEmulatedApi(stack.emulator);
  try {
    const { apiKey } = await stack.createKey('enterprise');
    const document = corpusDocument(THROUGHPUT_DOCUMENT);
    const body = JSON.stringify({ html: document.html, ...document.options });
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: BURST }, async () => {
        const sent = performance.now();
        const response = await fetch(`${api.apiUrl}/v1/pdf/generate`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' }, body });
        await response.arrayBuffer();
        return { status: response.status, ms: performance.now() - sent, retryAfter: response.headers.get('retry-after') };
      }),
    );
    const wallMs = Math.round(performance.now() - started);
    const statuses: Record<number, number> = {};
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    if (answers.some((answer) => answer.status !== 200 && !(answer.status === 503 && answer.retryAfter))) {
      throw new Error(`the burst had answers other than 200 and 503 with Retry-After: ${JSON.stringify(statuses)}`);
    }
    const cold = stack.emulator.invocations.filter((invocation) => invocation.functionName === functionId('generate') && invocation.coldStart);
    const coldMs = cold.map((invocation) => (invocation.initMs ?? 0) + invocation.durationMs).sort((a, b) => a - b);
    return {
      accountConcurrency,
      requests: BURST,
      statuses,
      latency: summarize(answers.filter((answer) => answer.status === 200).map((answer) => answer.ms)),
      coldStarts: cold.length,
      coldStartMedianMs: Math.round(coldMs[Math.floor(coldMs.length / 2)] ?? 0),
      wallMs,
    };
  } finally {
    await api.close();
    await stack.stop();
  }
}

export async function runBurst(log: (line: string) => void): Promise<BurstResults> {
  const outdir = await synthesizedAssembly();
  const rows: BurstRow[] = [];
  for (const accountConcurrency of [1000, 10]) {
    const row = await burstAt(outdir, accountConcurrency);
    log(
      `cold burst of ${row.requests} generates at account concurrency ${accountConcurrency} (at most ${ENVIRONMENTS_PER_FUNCTION} environments): ` +
        `${JSON.stringify(row.statuses)}; 200s p50 ${row.latency.p50} ms, p95 ${row.latency.p95} ms, max ${row.latency.max} ms; ` +
        `${row.coldStarts} cold starts (median ${row.coldStartMedianMs} ms); all answered in ${row.wallMs} ms`,
    );
    rows.push(row);
  }
  const batchOf100 = await batchAt(outdir, 10);
  log(`a batch of 100 invoices at account concurrency 10: ${JSON.stringify(batchOf100.outcomes)} in ${batchOf100.ms} ms; charged == successes: ${batchOf100.exact}`);
  if (!batchOf100.exact) throw new Error(`the batch of 100 was not charged exactly: ${JSON.stringify(batchOf100)}`);
  return { environmentsCap: ENVIRONMENTS_PER_FUNCTION, rows, batchOf100 };
}

if (import.meta.main) {
  const results = await runBurst((line) => console.log(line));
  console.log(JSON.stringify(results, null, 2));
}
