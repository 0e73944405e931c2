/**
 * Imported before Powertools' Logger and Metrics are made (logger.ts, metrics.ts). The local stack
 * sets AWS_LAMBDA_MAX_CONCURRENCY for its own process, with an InvokeStore of its own
 * (lib/local/invocations.ts), so Powertools keeps each concurrent invocation's log and metric state
 * apart. A process started from it (the keys CLI, a stack started by a test) inherits the variable
 * but not the store, and Powertools then throws from every metric call ("InvokeStore is not
 * available"). Such a process serves no concurrent invocations: it drops the variable. In Lambda
 * (AWS_LAMBDA_RUNTIME_API set) the runtime provides the store, and nothing is touched.
 */
const runtime = globalThis as unknown as { awslambda?: { InvokeStore?: unknown } };
if (process.env.AWS_LAMBDA_MAX_CONCURRENCY !== undefined && process.env.AWS_LAMBDA_RUNTIME_API === undefined && runtime.awslambda?.InvokeStore === undefined) {
  delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
}
export {};
