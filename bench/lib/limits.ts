/**
 * Bench phase `limits` (issue #28): the batch path under Lambda's concurrency limits, through the
 * local stack (which counts every invocation against LAMBDA_ACCOUNT_CONCURRENCY and throttles past
 * it as Lambda does) with the fan-out of AWS (BATCH_CONCURRENCY=100):
 * - a batch of 100 invoices at account concurrency 10, 100 and 1000: time, items by outcome;
 * - 10 simultaneous batches of 100 (10 keys) at 1000: answers and items by outcome;
 * - one key flooding batches of 100 (3 at a time) while another key sends single requests one after
 *   another: the other key's p50/p95 and statuses.
 * Every scenario ends with quota used == PDFs listed for every key.
 *
 * On this 2-core machine every render shares two cores, so these say how the service behaves under
 * the limits (who is refused, what fails, what is charged), not how fast AWS would be.
 *
 * Run alone: `node bench/lib/limits.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';
import { summarize, type LatencySummary } from './stats.ts';

/** The bench's one-page invoice, numbered (also the Lambda emulation's batch in burst.ts). */
export const invoice = (n: number) =>
  `<!doctype html><html lang="en"><h1>Invoice INV-${1000 + n}</h1><p>Billed to: Customer ${n}</p>` +
  `<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr><tr><td>Consulting</td><td>${(n % 7) + 1}</td><td>${((n % 7) + 1) * 120}.00</td></tr></table>`;
const pdfs = (count: number, from = 0) => Array.from({ length: count }, (_, i) => ({ html: invoice(from + i) }));

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly body: any;
}

async function post(apiUrl: string, path: string, apiKey: string, body: unknown): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(apiUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json().catch(() => null), ms: performance.now() - started };
}

/** Item outcomes of batch answers: `OK` or the item's error code, counted. */
function outcomes(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    if (answer.status !== 200) {
      counts[`HTTP ${answer.status}`] = (counts[`HTTP ${answer.status}`] ?? 0) + 1;
      continue;
    }
    for (const result of answer.body.results as { success: boolean; error?: { code: string } }[]) {
      const code = result.success ? 'OK' : result.error!.code;
      counts[code] = (counts[code] ?? 0) + 1;
    }
  }
  return counts;
}

async function chargedEqualsListed(apiUrl: string, apiKey: string): Promise<boolean> {
  const headers = { Authorization: `Bearer ${apiKey}` };
  const usage = (await (await fetch(`${apiUrl}/v1/usage`, { headers })).json()) as { quota_used: number };
  let listed = 0;
  let cursor: string | undefined;
  do {
    const page = (await (await fetch(`${apiUrl}/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers })).json()) as {
      data: unknown[];
      next_cursor: string | null;
    };
    listed += page.data.length;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return usage.quota_used === listed;
}

export interface LimitsResults {
  readonly batchOf100: readonly { readonly accountConcurrency: number; readonly ms: number; readonly items: Record<string, number>; readonly exact: boolean }[];
  readonly tenBatchesAt1000: { readonly ms: number; readonly answers: Record<number, number>; readonly items: Record<string, number>; readonly exact: boolean };
  readonly floodedNeighbour: { readonly singles: LatencySummary; readonly statuses: Record<number, number>; readonly flooderItems: Record<string, number>; readonly exact: boolean };
}

async function withStack<T>(accountConcurrency: number, work: (apiUrl: string, dataDir: string) => Promise<T>): Promise<T> {
  const saved = { account: process.env.LAMBDA_ACCOUNT_CONCURRENCY, fanOut: process.env.BATCH_CONCURRENCY };
  process.env.LAMBDA_ACCOUNT_CONCURRENCY = String(accountConcurrency);
  process.env.BATCH_CONCURRENCY = '100';
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-limits-'));
  const stack = await startStackProcess(dataDir);
  try {
    return await work(stack.info.apiUrl, dataDir);
  } finally {
    await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
    for (const [name, value] of [['LAMBDA_ACCOUNT_CONCURRENCY', saved.account], ['BATCH_CONCURRENCY', saved.fanOut]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

export async function runLimits(log: (line: string) => void): Promise<LimitsResults> {
  const batchOf100: LimitsResults['batchOf100'][number][] = [];
  for (const accountConcurrency of [10, 100, 1000]) {
    batchOf100.push(
      await withStack(accountConcurrency, async (apiUrl, dataDir) => {
        const key = await createBenchKey(dataDir);
        const answer = await post(apiUrl, '/v1/pdf/batch', key.apiKey, { pdfs: pdfs(100) });
        const row = { accountConcurrency, ms: Math.round(answer.ms), items: outcomes([answer]), exact: await chargedEqualsListed(apiUrl, key.apiKey) };
        log(`batch of 100 at account concurrency ${accountConcurrency}: ${row.ms} ms, ${JSON.stringify(row.items)}, charged == listed: ${row.exact}`);
        return row;
      }),
    );
  }

  const tenBatchesAt1000 = await withStack(1000, async (apiUrl, dataDir) => {
    const keys = await Promise.all(Array.from({ length: 10 }, () => createBenchKey(dataDir)));
    const started = performance.now();
    const answers = await Promise.all(keys.map((key, k) => post(apiUrl, '/v1/pdf/batch', key.apiKey, { pdfs: pdfs(100, k * 100) })));
    const statuses: Record<number, number> = {};
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    const exact = (await Promise.all(keys.map((key) => chargedEqualsListed(apiUrl, key.apiKey)))).every(Boolean);
    const row = { ms: Math.round(performance.now() - started), answers: statuses, items: outcomes(answers), exact };
    log(`10 simultaneous batches of 100 at 1000: ${row.ms} ms, answers ${JSON.stringify(statuses)}, items ${JSON.stringify(row.items)}, charged == listed: ${exact}`);
    return row;
  });

  const floodedNeighbour = await withStack(10, async (apiUrl, dataDir) => {
    const [flooder, neighbour] = await Promise.all([createBenchKey(dataDir), createBenchKey(dataDir)]);
    const floodUntil = performance.now() + 30_000;
    const flooderAnswers: Answer[] = [];
    const flood = Promise.all(
      Array.from({ length: 3 }, async (_, lane) => {
        for (let round = 0; performance.now() < floodUntil; round++) flooderAnswers.push(await post(apiUrl, '/v1/pdf/batch', flooder.apiKey, { pdfs: pdfs(100, lane * 10_000 + round * 100) }));
      }),
    );
    const singles: Answer[] = [];
    while (performance.now() < floodUntil) {
      singles.push(await post(apiUrl, '/v1/pdf/generate', neighbour.apiKey, { html: invoice(singles.length) }));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await flood;
    const statuses: Record<number, number> = {};
    for (const single of singles) statuses[single.status] = (statuses[single.status] ?? 0) + 1;
    const exact = (await chargedEqualsListed(apiUrl, flooder.apiKey)) && (await chargedEqualsListed(apiUrl, neighbour.apiKey));
    const row = { singles: summarize(singles.filter((s) => s.status === 200).map((s) => s.ms)), statuses, flooderItems: outcomes(flooderAnswers), exact };
    log(`one key flooding batches at account concurrency 10, the other's singles: p50 ${row.singles.p50} ms, p95 ${row.singles.p95} ms, statuses ${JSON.stringify(statuses)}; flooder's items ${JSON.stringify(row.flooderItems)}; charged == listed: ${exact}`);
    return row;
  });

  return { batchOf100, tenBatchesAt1000, floodedNeighbour };
}

if (import.meta.main) {
  const results = await runLimits((line) => console.log(line));
  console.log(JSON.stringify(results, null, 2));
}
