/**
 * Bench phase `bulk-crash` (issue #32, "kill -9 of the whole stack three times during that job"):
 * the `bulk` phase's job (bench/lib/bulk-job.ts: a JSON Lines upload of invoices, every fourth line
 * a template line, 1 % invalid and skipped, `archive: true`), BENCH_BULK_CRASH_LINES lines (2,000 by
 * default), with a `webhook_url` on a receiver of this process's own, on a fresh local stack. When
 * GET /v1/jobs/{id} shows 25 %, 50 % and 75 % of its lines done (succeeded + failed), and always
 * some more done since the last restart, the whole stack (its Node process and every Chromium) is
 * killed with SIGKILL and started again on the same DATA_DIR. Measured: submission to the job's end,
 * restarts included, and each restart's time until the stack was ready again.
 *
 * Then, untimed: the job resumed after every restart and ended succeeded with every valid line a PDF;
 * manifest lines == input lines in order; quota used == PDFs listed == downloadable == manifest
 * successes == ZIP entries; every PDF id once in the manifest (none charged twice); and its webhook
 * delivered exactly once (`pdf.job.completed`). A check that fails fails the phase.
 *
 * Run alone: `BENCH_PHASES=bulk-crash npm run bench`, or `node bench/lib/bulk-crash.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { BulkClient, bulkMix, checkBulkJob, jobNow, linesDone, listedPdfIds, StallWatch, submitBulk, uploadBulkInput, type BulkCounts } from './bulk-job.ts';
import { readConfig, type BenchConfig } from './config.ts';
import { createBenchKey, killStackProcess, startStackProcess, type StackProcess } from './stack-process.ts';
import { round } from './stats.ts';

/** Shares of the job's lines done at which the stack is killed. */
const KILL_AT = [0.25, 0.5, 0.75];
/** How often the stack's webhook sender looks for due deliveries, and how long after the first delivery a second is waited for. */
const DISPATCH_INTERVAL_MS = 200;
const SECOND_DELIVERY_WAIT_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface CrashKill {
  /** The job's lines done (succeeded + failed) when the stack was killed, as a share of its lines, in percent. */
  readonly atPercent: number;
  /** Lines done at the kill (succeeded + failed; the invalid lines count as failed from the start). */
  readonly done: number;
  /** PDFs the job's progress counted (succeeded) at the kill: its finished chunks'. */
  readonly counted: number;
  /** The key's PDFs stored at the kill: above `counted` when the kill fell in a chunk half done. */
  readonly stored: number;
  /** Spawn of the new stack until it was ready (its warm-up PDF rendered). */
  readonly restartMs: number;
}

export interface BulkCrashResult {
  readonly lines: number;
  readonly invalid: number;
  readonly templateLines: number;
  /** POST /v1/pdf/bulk to the job's end, the three kills and restarts included. */
  readonly seconds: number;
  readonly submitMs: number;
  readonly kills: readonly CrashKill[];
  readonly status: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly counts: BulkCounts;
  /** Valid lines that failed (uncharged: exact all the same), by error code; reported, not a failure of the phase. */
  readonly failedValidLines: number;
  readonly failedValidCodes: Record<string, number>;
  /** Webhooks the receiver got for the job. */
  readonly webhooks: number;
  readonly exact: boolean;
  /** What was not as it must be, in words (empty when all was). */
  readonly problems: readonly string[];
}

export async function runBulkCrash(config: BenchConfig, log: (line: string) => void): Promise<BulkCrashResult> {
  const lines = config.bulkCrashLines;
  const receiver = new WebhookReceiver();
  await receiver.start();
  const env: NodeJS.ProcessEnv = {
    PDF_ALLOW_PRIVATE_HOSTS: [process.env.PDF_ALLOW_PRIVATE_HOSTS, receiver.host].filter(Boolean).join(','),
    WEBHOOK_DISPATCH_INTERVAL_MS: String(DISPATCH_INTERVAL_MS),
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-bulk-crash-'));
  let stack: StackProcess | undefined = await startStackProcess(dataDir, undefined, env);
  try {
    const { apiKey } = await createBenchKey(dataDir);
    // Started again on the same port, as `npm start` is: the job's links (manifest, downloads) name
    // the origin it was submitted to, and the customer's client keeps its URL.
    env.PORT = String(new URL(stack.info.apiUrl).port);
    const client = new BulkClient(stack.info.apiUrl, apiKey);
    const uploadId = await uploadBulkInput(client, lines);
    const submitted = await submitBulk(client, uploadId, { webhook_url: receiver.hook('bulk') });
    const { jobId } = submitted;

    const stall = new StallWatch(`the job of ${lines} lines`);
    /** Polls the job until `condition` holds, through the restarts' outages. */
    const jobWhen = async (condition: (job: any) => boolean): Promise<any> => {
      for (;; await sleep(250)) {
        const job = await jobNow(client, jobId);
        if (job && condition(job)) return job;
        stall.see(job);
      }
    };

    const kills: CrashKill[] = [];
    for (const share of KILL_AT) {
      // At the share, and at least one chunk counted since the last restart: the job resumed.
      const wanted = Math.max(Math.ceil(share * lines), (kills.at(-1)?.done ?? 0) + 1);
      const job = await jobWhen((polled) => linesDone(polled) >= wanted || polled.completed_at !== undefined);
      if (job.completed_at !== undefined) throw new Error(`the job ended before the kill at ${share * 100} % (${kills.length} kills done): make it longer (BENCH_BULK_CRASH_LINES)`);
      const stored = (await listedPdfIds(client)).length;
      await killStackProcess(stack);
      stack = undefined;
      const restart = performance.now();
      stack = await startStackProcess(dataDir, undefined, env);
      const restartMs = performance.now() - restart;
      const kill: CrashKill = { atPercent: round((100 * linesDone(job)) / lines, 1), done: linesDone(job), counted: job.succeeded, stored, restartMs: Math.round(restartMs) };
      kills.push(kill);
      log(`killed at ${kill.atPercent} % (${kill.done} of ${lines} lines done: ${kill.counted} PDFs counted, ${kill.stored} stored); ready again after ${kill.restartMs} ms`);
    }
    const ended = await jobWhen((polled) => polled.completed_at !== undefined);
    const seconds = (performance.now() - submitted.startedAt) / 1000;
    log(`${lines} lines: ${ended.status} in ${round(seconds, 1)} s, three restarts included`);

    // Untimed: the job exact, each PDF once, the webhook once.
    const check = await checkBulkJob(client, { jobId, job: ended, seconds, submitMs: submitted.submitMs }, lines);
    for (const giveUpAt = performance.now() + 60_000; receiver.received('bulk').length === 0 && performance.now() < giveUpAt; ) await sleep(200);
    const first = receiver.received('bulk')[0];
    if (first) await sleep(Math.max(0, first.at + SECOND_DELIVERY_WAIT_MS - Date.now()));
    const webhooks = receiver.received('bulk').map((delivery) => JSON.parse(delivery.body) as { type: string; data: { job_id: string; status: string; succeeded: number } });

    const problems = [...check.problems];
    if (webhooks.length !== 1) problems.push(`${webhooks.length} webhooks delivered, not one`);
    const hook = webhooks[0];
    if (hook && (hook.type !== 'pdf.job.completed' || hook.data.job_id !== jobId || hook.data.status !== ended.status || hook.data.succeeded !== ended.succeeded)) {
      problems.push(`the webhook is not the job's completion: ${JSON.stringify(hook)}`);
    }
    const result: BulkCrashResult = {
      lines,
      ...bulkMix(lines),
      seconds: round(seconds, 1),
      submitMs: Math.round(submitted.submitMs),
      kills,
      status: ended.status,
      succeeded: ended.succeeded,
      failed: ended.failed,
      counts: check.counts,
      failedValidLines: check.failedValidLines,
      failedValidCodes: check.failedValidCodes,
      webhooks: webhooks.length,
      exact: problems.length === 0,
      problems,
    };
    const { counts } = check;
    log(
      `${lines} lines across ${kills.length} kills: ${result.status}, ${result.succeeded} succeeded, ${result.failed} failed; ` +
        `quota ${counts.quotaUsed} == listed ${counts.listed} == downloadable ${counts.downloadable} == manifest ${counts.manifestSuccesses} == ZIP ${counts.archiveEntries}, ` +
        `every PDF id once, ${webhooks.length} webhook(s): ${result.exact}` +
        (check.failedValidLines ? `; valid lines failed: ${check.failedValidShown.join('; ')}` : ''),
    );
    return result;
  } finally {
    if (stack) await killStackProcess(stack);
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Fails (the phase) when the job was not exact after the kills; its figures are recorded first. */
export function assertBulkCrashExact(result: BulkCrashResult): void {
  if (result.problems.length) throw new Error(`the bulk job of ${result.lines} lines across ${result.kills.length} kills -9 was not exact: ${result.problems.join('; ')}`);
}

if (import.meta.main) {
  const result = await runBulkCrash(readConfig(), (line) => console.log(line));
  console.log(JSON.stringify(result, null, 2));
  assertBulkCrashExact(result);
}
