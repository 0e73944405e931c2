/**
 * Bench phase `bulk-fairness` (issue #32, "one customer's million must not starve another's
 * hundred"): two keys on one fresh local stack. One submits the `bulk` phase's job
 * (bench/lib/bulk-job.ts: invoices, every fourth a template line, 1 % invalid and skipped,
 * `archive: true`) of BENCH_BULK_FAIRNESS_LINES lines (2,000 by default); the other, right after
 * the first's 202, the same kind of job of BENCH_BULK_FAIRNESS_SMALL_LINES lines (20). Both are
 * polled every 250 ms: each one's time from its submission to its end, and how far the large job
 * had got when the small one ended. Then, on the same stack with nothing else running, the small
 * job once more, alone, for comparison.
 *
 * Fails the phase when the small job did not end before the large one had done half its lines
 * (long before it ends), or when either job was not exact (bulk-job.ts's checkBulkJob, untimed).
 *
 * Run alone: `BENCH_PHASES=bulk-fairness npm run bench`, or `node bench/lib/bulk-fairness.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BulkClient, checkBulkJob, jobNow, linesDone, StallWatch, submitBulk, uploadBulkInput, type BulkCounts, type SubmittedJob } from './bulk-job.ts';
import { readConfig, type BenchConfig } from './config.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';
import { round } from './stats.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface FairnessJob {
  readonly lines: number;
  /** POST /v1/pdf/bulk to the job's end, as polled every 250 ms. */
  readonly seconds: number;
  readonly submitMs: number;
  readonly status: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly counts: BulkCounts;
  /** quota used == listed == downloadable == manifest successes == ZIP entries, the manifest in order (checkBulkJob). */
  readonly exact: boolean;
  /** Valid lines that failed (uncharged: exact all the same), by error code; reported, not a failure of the phase. */
  readonly failedValidLines: number;
  readonly failedValidCodes: Record<string, number>;
}

export interface BulkFairnessResult {
  readonly large: FairnessJob;
  readonly small: FairnessJob;
  /** The large job's lines done (succeeded + failed) when the small job ended. */
  readonly largeDoneWhenSmallEnded: number;
  /** The small job sent again once both had ended, alone on the stack: submission to end. */
  readonly smallAloneSeconds: number;
  /** What was not as it must be, in words (empty when all was). */
  readonly problems: readonly string[];
}

interface Followed {
  readonly client: BulkClient;
  readonly lines: number;
  readonly submitted: SubmittedJob;
  readonly stall: StallWatch;
  ended?: { job: any; seconds: number };
}

/** Polls every job every 250 ms until all have ended; `onEnd` runs as each ends, with the others as last polled. */
async function followUntilEnded(jobs: Followed[], log: (line: string) => void, onEnd: (job: Followed, polled: Map<Followed, any>) => void = () => undefined): Promise<void> {
  const polled = new Map<Followed, any>();
  for (let lastLog = performance.now(); jobs.some((job) => !job.ended); await sleep(250)) {
    const now = await Promise.all(jobs.map((job) => (job.ended ? job.ended.job : jobNow(job.client, job.submitted.jobId))));
    jobs.forEach((job, i) => polled.set(job, now[i]));
    for (const job of jobs.filter((each) => !each.ended)) {
      const body = polled.get(job);
      if (!body) throw new Error(`GET /v1/jobs/${job.submitted.jobId}: the stack did not answer`);
      job.stall.see(body);
      if (body.completed_at) {
        job.ended = { job: body, seconds: (performance.now() - job.submitted.startedAt) / 1000 };
        onEnd(job, polled);
      }
    }
    if (performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      log(jobs.map((job) => `${job.lines} lines: ${linesDone(polled.get(job))} done`).join(', '));
    }
  }
}

/** Sends a job of `lines` lines of an upload, to be followed. */
async function send(client: BulkClient, lines: number, uploadId: string): Promise<Followed> {
  return { client, lines, submitted: await submitBulk(client, uploadId), stall: new StallWatch(`the job of ${lines} lines`) };
}

export async function runBulkFairness(config: BenchConfig, log: (line: string) => void): Promise<BulkFairnessResult> {
  const [largeLines, smallLines] = [config.bulkFairnessLines, config.bulkFairnessSmallLines];
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bench-bulk-fairness-'));
  const stack = await startStackProcess(dataDir);
  try {
    // Two customers, each with its upload ready before either job is sent.
    const largeClient = new BulkClient(stack.info.apiUrl, (await createBenchKey(dataDir)).apiKey);
    const smallClient = new BulkClient(stack.info.apiUrl, (await createBenchKey(dataDir)).apiKey);
    const largeUpload = await uploadBulkInput(largeClient, largeLines);
    const smallUpload = await uploadBulkInput(smallClient, smallLines);

    // Timed: the large job, the small one right after, each to its end.
    const large = await send(largeClient, largeLines, largeUpload);
    const small = await send(smallClient, smallLines, smallUpload);
    let largeDoneWhenSmallEnded = Number.NaN;
    await followUntilEnded([large, small], log, (job, polled) => {
      if (job === small) largeDoneWhenSmallEnded = large.ended ? largeLines : linesDone(polled.get(large));
      log(`${job.lines} lines: ${job.ended!.job.status} after ${round(job.ended!.seconds, 1)} s`);
    });

    // Untimed: both exact, each on its own key.
    const problems: string[] = [];
    const checked = async (job: Followed): Promise<FairnessJob> => {
      const { job: body, seconds } = job.ended!;
      const check = await checkBulkJob(job.client, { jobId: job.submitted.jobId, job: body, seconds, submitMs: job.submitted.submitMs }, job.lines);
      problems.push(...check.problems.map((problem) => `the job of ${job.lines} lines: ${problem}`));
      return { lines: job.lines, seconds: round(seconds, 1), submitMs: Math.round(job.submitted.submitMs), status: body.status, succeeded: body.succeeded, failed: body.failed, counts: check.counts, exact: check.exact, failedValidLines: check.failedValidLines, failedValidCodes: check.failedValidCodes };
    };
    const result = { large: await checked(large), small: await checked(small), largeDoneWhenSmallEnded };
    // Ended while the large one had not done half its lines (all of them if it had ended first).
    if (!(largeDoneWhenSmallEnded <= largeLines / 2)) {
      problems.unshift(`the ${smallLines}-line job ended after ${result.small.seconds} s, when the ${largeLines}-line job had ${largeDoneWhenSmallEnded} lines done (it ended after ${result.large.seconds} s): not long before it`);
    }

    // For comparison: the small job alone on the same stack.
    const alone = await send(smallClient, smallLines, await uploadBulkInput(smallClient, smallLines));
    await followUntilEnded([alone], log);
    if (alone.ended!.job.status !== 'succeeded') problems.push(`the ${smallLines}-line job alone ended ${alone.ended!.job.status}`);
    const smallAloneSeconds = round(alone.ended!.seconds, 1);

    log(
      `${smallLines} lines after ${result.small.seconds} s (alone ${smallAloneSeconds} s), when ${largeDoneWhenSmallEnded} of the other key's ${largeLines} lines were done; ` +
        `${largeLines} lines after ${result.large.seconds} s; both exact: ${result.large.exact && result.small.exact}`,
    );
    return { ...result, smallAloneSeconds, problems };
  } finally {
    await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Fails (the phase) when the small job was not served long before the large one, or a job was not exact; its figures are recorded first. */
export function assertBulkFair(result: BulkFairnessResult): void {
  if (result.problems.length) throw new Error(`bulk fairness: ${result.problems.join('; ')}`);
}

if (import.meta.main) {
  const result = await runBulkFairness(readConfig(), (line) => console.log(line));
  console.log(JSON.stringify(result, null, 2));
  assertBulkFair(result);
}
