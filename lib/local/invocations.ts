/**
 * Each invocation's log state its own in the local stack, which runs every function's invocations
 * at once in one process.
 *
 * Powertools' Logger (and Metrics) keep the Lambda context (`function_request_id`...) and the keys
 * a request appends (`key_id`, `job_id`) per execution environment, which Lambda gives one
 * invocation at a time; here concurrent requests shared them, so a line of one request carried
 * another's id and key. Lambda Managed Instances run several invocations in one environment too,
 * and Powertools follows them there: with `AWS_LAMBDA_MAX_CONCURRENCY` set, it keeps that state in
 * the runtime's InvokeStore (`globalThis.awslambda.InvokeStore`), an AsyncLocalStorage whose context
 * the runtime enters for each invocation. The local adapters are this process's runtime: they run
 * each invocation through {@link runInvocation}, which does the same.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

type Frame = Record<string | symbol, unknown>;

/** The keys the runtime sets and handlers may not change (as @aws/lambda-invoke-store names them). */
const PROTECTED_KEYS = {
  requestId: Symbol.for('_AWS_LAMBDA_REQUEST_ID'),
  xRayTraceId: Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID'),
  tenantId: Symbol.for('_AWS_LAMBDA_TENANT_ID'),
  traceparent: Symbol.for('_AWS_LAMBDA_TRACEPARENT'),
  tracestate: Symbol.for('_AWS_LAMBDA_TRACESTATE'),
  baggage: Symbol.for('_AWS_LAMBDA_BAGGAGE'),
} as const;
const PROTECTED = new Set<symbol>(Object.values(PROTECTED_KEYS));

/**
 * The InvokeStore contract Powertools reads (that of @aws/lambda-invoke-store, whose multi-invocation
 * store this is), with one difference: work outside any invocation (the stack's start-up, its
 * timers, the stand-ins) has a state too, shared by all of it as an environment's is between
 * invocations, where the runtime's store refuses to be written outside one (and Powertools would then
 * throw from a log call). So does work an invocation left running once it has ended: it belongs to
 * no request any more, and its lines carry none's id.
 */
class LocalInvokeStore {
  readonly #invocations = new AsyncLocalStorage<Frame>();
  readonly #ended = new WeakSet<Frame>();
  readonly #outside: Frame = {};

  #frame(): Frame {
    const frame = this.#invocations.getStore();
    return frame === undefined || this.#ended.has(frame) ? this.#outside : frame;
  }

  getContext(): Frame | undefined {
    return this.hasContext() ? this.#frame() : undefined;
  }

  hasContext(): boolean {
    return this.#frame() !== this.#outside;
  }

  get<T = unknown>(key: string | symbol): T | undefined {
    return this.#frame()[key] as T | undefined;
  }

  set<T = unknown>(key: string | symbol, value: T): void {
    if (typeof key === 'symbol' && PROTECTED.has(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    this.#frame()[key] = value;
  }

  run<T>(frame: Frame, work: () => T): T {
    return this.#invocations.run(frame, work);
  }

  end(frame: Frame): void {
    this.#ended.add(frame);
  }

  getRequestId(): string {
    return this.get<string>(PROTECTED_KEYS.requestId) ?? '-';
  }
  getXRayTraceId(): string | undefined {
    return this.get(PROTECTED_KEYS.xRayTraceId);
  }
  getTenantId(): string | undefined {
    return this.get(PROTECTED_KEYS.tenantId);
  }
  getTraceparent(): string | undefined {
    return this.get(PROTECTED_KEYS.traceparent);
  }
  getTracestate(): string | undefined {
    return this.get(PROTECTED_KEYS.tracestate);
  }
  getBaggage(): string | undefined {
    return this.get(PROTECTED_KEYS.baggage);
  }
}

let store: LocalInvokeStore | undefined;

/**
 * This process's InvokeStore, installed where Powertools looks for it on first use. Also sets
 * `AWS_LAMBDA_MAX_CONCURRENCY`, which tells Powertools to use it (Lambda's default account
 * concurrency as its value: Powertools asks only whether it is set). Both last for the process: a
 * process that serves local invocations serves them concurrently for as long as it runs.
 */
function invokeStore(): LocalInvokeStore {
  if (store !== undefined) return store;
  store = new LocalInvokeStore();
  const runtime = globalThis as unknown as { awslambda?: Record<string, unknown> };
  runtime.awslambda ??= {};
  runtime.awslambda.InvokeStore = store;
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
  return store;
}

/**
 * Runs `invoke` (a handler called with `context`) as one invocation: Powertools' log keys and
 * Lambda context, and its stored metrics, are this invocation's own while it runs, whatever others
 * run beside it, as a Lambda runtime keeps them.
 */
export async function runInvocation<T>(context: Pick<Context, 'awsRequestId'>, invoke: () => Promise<T>): Promise<T> {
  const invocations = invokeStore();
  const frame: Frame = { [PROTECTED_KEYS.requestId]: context.awsRequestId };
  return invocations.run(frame, async () => {
    try {
      return await invoke();
    } finally {
      invocations.end(frame);
    }
  });
}
