/**
 * Bench phase `bulk-lambda` (issue #32, its point 5): a bulk job in the Lambda emulation
 * (test/lambda/emulator: the functions of cdk.out behind a gateway, each invocation in an execution
 * environment of its own, frozen between invocations; the template's bulk queue in the SQS stand-in
 * and its event source mapping invoking the bulk worker, as in AWS), at account concurrency 10 (a
 * new account: the workers, the API's invocations and the download links share those 10) and 1000.
 * The job is the `bulk` phase's (bench/lib/bulk-job.ts): BENCH_BULK_LAMBDA_LINES lines (2,000 by
 * default), html and template invoices, 1 % invalid and skipped, `archive: true`, on a fresh stack
 * each time. Measured: POST /v1/pdf/bulk to the job's end; in that time, the invokes Lambda
 * throttled (by function), the 503s the client met, the environments started (by function), and the
 * most concurrent executions seen. Then, untimed, the same exactness as the `bulk` phase: a check
 * that fails fails the phase (after its figures are recorded). Valid lines the job reported failed
 * (uncharged and unlisted, so exact all the same) are counted with their codes, and so are the
 * invocations that failed, by function.
 *
 * Lambda would start an environment per concurrent invocation; this machine's two cores cannot
 * hold more than ENVIRONMENTS_PER_FUNCTION Chromiums of one function, so past them invocations
 * wait for an environment while holding their concurrent execution (as the `burst` phase says): at
 * 1000 the mapping's MaximumConcurrency decides how many chunks are under way, and these
 * environments how many render.
 *
 * Run alone: `BENCH_PHASES=bulk-lambda npm run bench` (BENCH_LAMBDA_CDK_OUT reuses an assembly).
 */
import { functionId } from '../../cdk/constructs/service-function.ts';
import { API_FUNCTIONS, INTERNAL_FUNCTIONS } from '../../lib/api/routes.ts';
import { startEmulatedApi } from '../../test/lambda/emulator/api.ts';
import { startEmulatedStack } from '../../test/lambda/emulator/stack.ts';
import { BulkClient, checkBulkJob, jobFigures, submitAndWait, uploadBulkInput, type BulkCheck, type BulkJobFigures } from './bulk-job.ts';
import { readConfig, type BenchConfig } from './config.ts';
import { ENVIRONMENTS_PER_FUNCTION, synthesizedAssembly } from './lambda.ts';

/** Account concurrencies the job runs at: a new account's, and AWS's default. */
const ACCOUNT_CONCURRENCIES = [10, 1000];

export interface BulkLambdaRun extends BulkJobFigures, BulkCheck {
  readonly accountConcurrency: number;
  /** From submission to the end: invokes Lambda refused past the account's limit, by function (API and worker alike). */
  readonly throttles: Record<string, number>;
  /** 503 answers the customer's client met (a throttled API invoke, as the gateway answers it), each tried again. */
  readonly busyAnswers: number;
  /** From submission to the end: environments started cold, by function. */
  readonly environmentsStarted: Record<string, number>;
  /** Invocations of the bulk worker (chunks, a chunk delivered again, the completion). */
  readonly workerInvocations: number;
  /** The most concurrent executions seen (sampled every 100 ms), all functions together. */
  readonly peakConcurrency: number;
  /** Over the whole run (the job and the checks after it): invocations that failed (a function error, a timeout), by function and error type. */
  readonly functionErrors: Record<string, number>;
}

export interface BulkLambdaResults {
  readonly environmentsCap: number;
  readonly runs: readonly BulkLambdaRun[];
}

/** Logical id -> the function's name in routes.ts (`BulkWorkerFunction` -> `bulkWorker`). */
const FUNCTION_NAMES = new Map<string, string>([...API_FUNCTIONS, ...INTERNAL_FUNCTIONS].map((name) => [functionId(name), name]));

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

async function bulkAt(outdir: string, accountConcurrency: number, lines: number, log: (line: string) => void): Promise<BulkLambdaRun> {
  const stack = await startEmulatedStack(outdir, { accountConcurrency, maxEnvironmentsPerFunction: ENVIRONMENTS_PER_FUNCTION });
  const api = await startEmulatedApi(stack.emulator);
  const { emulator } = stack;
  let peakConcurrency = 0;
  const sampler = setInterval(() => (peakConcurrency = Math.max(peakConcurrency, emulator.running)), 100);
  try {
    const client = new BulkClient(api.apiUrl, (await stack.createKey('enterprise')).apiKey);
    const uploadId = await uploadBulkInput(client, lines);
    const from = { invocations: emulator.invocations.length, throttles: emulator.throttles.length, busy: client.busyAnswers };
    peakConcurrency = 0;
    const name = (id: string) => FUNCTION_NAMES.get(id) ?? id;
    const finished = await submitAndWait(client, uploadId, lines, (line) => log(`at ${accountConcurrency}: ${line}`)).catch(async (error: unknown) => {
      // A job that stopped moving: what failed on the way says why (a failed invocation's chunk comes back only after the queue's visibility timeout).
      const failed = emulator.invocations.slice(from.invocations).filter((invocation) => !invocation.outcome.ok);
      log(`at ${accountConcurrency}: failed invocations ${JSON.stringify(countBy(failed, (invocation) => `${name(invocation.functionName)} ${invocation.outcome.ok ? '' : invocation.outcome.errorType}`))}`);
      const worker = emulator.output(functionId('bulkWorker')).split('\n').filter((line) => /error|fail|timed out|took over/i.test(line));
      log(`at ${accountConcurrency}: the bulk worker's last error lines:\n${worker.slice(-10).join('\n').slice(-4000)}`);
      // Where the job's messages are: waiting, in flight (an invocation still running, or one left to come back), and why.
      const queues = await stack.queueState().catch((reason: unknown) => `unreadable: ${String(reason)}`);
      log(`at ${accountConcurrency}: queues ${JSON.stringify(queues)}; ${emulator.running} executions running now`);
      throw error;
    });
    clearInterval(sampler);
    const invocations = emulator.invocations.slice(from.invocations);
    const throttles = countBy(emulator.throttles.slice(from.throttles), (throttle) => name(throttle.functionName));
    const environmentsStarted = countBy(invocations.filter((invocation) => invocation.coldStart), (invocation) => name(invocation.functionName));
    const workerInvocations = invocations.filter((invocation) => invocation.functionName === functionId('bulkWorker')).length;
    const busyAnswers = client.busyAnswers - from.busy;

    const check = await checkBulkJob(client, finished, lines);
    const failedInvocations = emulator.invocations.filter((invocation) => !invocation.outcome.ok);
    const functionErrors = countBy(failedInvocations, (invocation) => `${name(invocation.functionName)} ${invocation.outcome.ok ? '' : invocation.outcome.errorType}`);
    const run: BulkLambdaRun = {
      accountConcurrency,
      ...jobFigures(lines, finished),
      throttles,
      busyAnswers,
      environmentsStarted,
      workerInvocations,
      peakConcurrency,
      functionErrors,
      ...check,
    };
    log(
      `${lines} lines at account concurrency ${accountConcurrency} (at most ${ENVIRONMENTS_PER_FUNCTION} environments per function): ` +
        `${run.status} in ${run.seconds} s (${run.linesPerSecond} lines/s, submission ${run.submitMs} ms), ${run.succeeded} succeeded, ${run.failed} failed; ` +
        `throttles ${JSON.stringify(throttles)}, ${busyAnswers} 503s to the client; environments started ${JSON.stringify(environmentsStarted)}; ` +
        `${workerInvocations} worker invocations; at most ${peakConcurrency} concurrent executions; ` +
        `failed invocations ${JSON.stringify(functionErrors)}; ` +
        `quota ${check.counts.quotaUsed} == listed ${check.counts.listed} == downloadable ${check.counts.downloadable} == manifest ${check.counts.manifestSuccesses} == ZIP ${check.counts.archiveEntries}: ${check.exact}` +
        (check.failedValidLines ? `; ${check.failedValidLines} valid lines failed: ${check.failedValidShown.join('; ')}` : ''),
    );
    return run;
  } finally {
    clearInterval(sampler);
    await api.close();
    await stack.stop();
  }
}

export async function runBulkLambda(config: BenchConfig, log: (line: string) => void): Promise<BulkLambdaResults> {
  const outdir = await synthesizedAssembly();
  const runs: BulkLambdaRun[] = [];
  for (const accountConcurrency of ACCOUNT_CONCURRENCIES) runs.push(await bulkAt(outdir, accountConcurrency, config.bulkLambdaLines, log));
  return { environmentsCap: ENVIRONMENTS_PER_FUNCTION, runs };
}

/** Fails (the phase) when a run was not exact; its figures are recorded first. */
export function assertBulkLambdaExact(results: BulkLambdaResults): void {
  const failed = results.runs.filter((run) => run.problems.length);
  if (failed.length) {
    throw new Error(failed.map((run) => `the bulk job of ${run.lines} lines at account concurrency ${run.accountConcurrency} was not exact: ${run.problems.join('; ')}`).join('\n'));
  }
}

if (import.meta.main) {
  const results = await runBulkLambda(readConfig(), (line) => console.log(line));
  console.log(JSON.stringify(results, null, 2));
  assertBulkLambdaExact(results);
}
