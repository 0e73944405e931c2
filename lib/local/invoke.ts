/**
 * The Lambda Invoke API (`POST /2015-03-31/functions/{name}/invocations`) for functions run in this
 * process, so the batch function's AWS SDK call takes the same code path locally as in AWS.
 *
 * Asynchronous invocations (`X-Amz-Invocation-Type: Event`, how generate and batch start a job) are
 * answered 202 at once and run in the background as Lambda runs them: a run that throws is run
 * again (`retryAttempts` times, after growing delays), and one that never succeeds is handed to
 * `onGivenUp` with the record Lambda sends a failure destination (the local stack ends its job
 * there, as the reconcile function does in AWS from the failure queue). Lambda's own queue is durable; here the jobs are:
 * the stack resumes every unfinished job when it starts (lib/local/stack.ts).
 *
 * In AWS every invocation gets its own container; here they share one machine and one browser:
 * render invocations run as batch items of their key, so their renders take their turns in this
 * process's render capacity (lib/render/capacity.ts) with the single requests, fairly. An item whose
 * render cannot get a slot in time fails as an item (nothing of it rendered), and one whose caller
 * gave up while it waited is dropped.
 */
import { createServer, type Server } from 'node:http';
import type { Context } from 'aws-lambda';
import type { InternalFunctionName } from '#lib/api/routes.ts';
import type { GivenUpInvocation } from '#lib/jobs/job-endings.ts';
import { isTierName, TIERS } from '#lib/accounts/tiers.ts';
import { asBatchItem, type KeyShare } from '#lib/render/capacity.ts';
import { lambdaContext } from './gateway.ts';
import { runInvocation } from './invocations.ts';
import { throttledInvokeAnswer, type LambdaConcurrency } from './lambda-concurrency.ts';

export type InvokeHandler = (event: never, context: Context) => Promise<unknown>;

/** The Invoke API's path; its one group is the function's name or ARN (see functionNameOf). */
export const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** Whose work a render invocation is (the key its batch belongs to), and that key's share of the renderer. */
function renderTurnOf(payload: unknown): { keyId: string; share: KeyShare } {
  const invocation = payload as { owner?: { keyId?: unknown; tier?: unknown }; renderTimeoutMs?: unknown } | null;
  const keyId = typeof invocation?.owner?.keyId === 'string' ? invocation.owner.keyId : 'unknown';
  const tier = invocation?.owner?.tier;
  return {
    keyId,
    share: {
      ...(isTierName(tier) && { maxRunning: TIERS[tier].maxConcurrentRenders }),
      // A batch's item waits in its key's line for as long as its batch waits for it (the caller's
      // item timeout or deadline ends the wait), not a single request's few seconds: its batch was
      // admitted whole, and in AWS it would have a container of its own.
      maxWaitMs: Number.POSITIVE_INFINITY,
    },
  };
}

/**
 * Keeps an endpoint's idle connections open, as Lambda's own endpoints do, instead of Node's default
 * of closing them after 5 s idle. A client on a loaded event loop (the local stack runs in one
 * process) reuses a connection just as the server closes it, and its invoke fails ECONNRESET (the
 * AWS SDK's TimeoutError) without having run: measured with the AWS SDK's Lambda client and an event
 * loop lagging up to 1.5 s, 13 invokes reset in 100 s with a keep-alive timeout, none without. Such a
 * reset fails a batch item RENDER_FAILED, or leaves a bulk chunk to come back after its visibility timeout.
 */
export function keepIdleConnections<T extends Server>(server: T): T {
  server.keepAliveTimeout = 0;
  return server;
}

export function functionNameOf(pathSegment: string): string {
  // The SDK sends names, partial ARNs or full ARNs; the name is what follows ":function:".
  const decoded = decodeURIComponent(pathSegment);
  return decoded.split(':function:').pop()?.split(':')[0] ?? decoded;
}

export interface InvokeEndpointOptions {
  /** Each function's timeout (its context's remaining time). */
  readonly timeoutMs: (name: InternalFunctionName) => number;
  /** Retries of a failed asynchronous invocation. */
  readonly retryAttempts: number;
  /** Wait before the first retry; doubled for each next one (Lambda waits a minute, then two). */
  readonly retryDelayMs: number;
  /** An asynchronous invocation whose every try failed: what AWS sends its failure destination. */
  readonly onGivenUp?: (name: InternalFunctionName, record: GivenUpInvocation) => void;
  /** Lambda's concurrency limits: an invoke past them is throttled (lib/local/lambda-concurrency.ts). */
  readonly concurrency?: LambdaConcurrency;
}

/** How long a throttled asynchronous invocation waits in Lambda's queue before it is tried again, at most. */
const THROTTLED_EVENT_MAX_DELAY_MS = 1_000;

export function createInvokeEndpoint(handlers: Readonly<Record<InternalFunctionName, InvokeHandler>>, options: InvokeEndpointOptions): Server {
  let closed = false;
  const retries = new Set<NodeJS.Timeout>();
  /** Runs an asynchronous invocation, and again after a failure, until it succeeds or its retries run out. */
  const runInBackground = (name: InternalFunctionName, handler: InvokeHandler, payload: unknown, attempt = 0, throttledFor = 0): void => {
    // A throttled event stays in Lambda's queue and is tried again once there is room; throttling
    // is not a failed try (Lambda keeps such events up to their maximum age).
    const started = options.concurrency?.tryStart(name) ?? { release: () => undefined };
    if ('throttled' in started) {
      const delay = Math.min(THROTTLED_EVENT_MAX_DELAY_MS, 50 * 2 ** Math.min(throttledFor, 5)) * (0.5 + Math.random() / 2);
      const retry = setTimeout(() => {
        retries.delete(retry);
        if (!closed) runInBackground(name, handler, payload, attempt, throttledFor + 1);
      }, delay);
      retry.unref();
      retries.add(retry);
      return;
    }
    void Promise.resolve()
      .then(() => {
        const context = lambdaContext(name, options.timeoutMs(name));
        return runInvocation(context, () => handler(payload as never, context));
      })
      .finally(started.release)
      .catch((error: unknown) => {
        if (closed) return;
        if (attempt >= options.retryAttempts) {
          console.error(`Asynchronous invocation of ${name} failed ${attempt + 1} times and was given up: ${(error as Error)?.message ?? String(error)}`);
          options.onGivenUp?.(name, { requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: attempt + 1 }, requestPayload: payload });
          return;
        }
        const retry = setTimeout(() => {
          retries.delete(retry);
          if (!closed) runInBackground(name, handler, payload, attempt + 1);
        }, options.retryDelayMs * 2 ** attempt);
        retry.unref();
        retries.add(retry);
      });
  };
  const server = keepIdleConnections(createServer(async (request, response) => {
    const match = INVOKE_PATH.exec(new URL(request.url ?? '/', 'http://local').pathname);
    const name = match ? functionNameOf(match[1] as string) : undefined;
    const handler = name ? handlers[name as InternalFunctionName] : undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || !handler || !name) {
      response.writeHead(404, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'ResourceNotFoundException' });
      response.end(JSON.stringify({ Type: 'User', message: `Function not found: ${name ?? request.url}` }));
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
    } catch {
      response.writeHead(400, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'InvalidRequestContentException' });
      response.end(JSON.stringify({ Type: 'User', message: 'Could not parse request body into json' }));
      return;
    }
    if (String(request.headers['x-amz-invocation-type'] ?? '').toLowerCase() === 'event') {
      runInBackground(name as InternalFunctionName, handler, payload);
      response.writeHead(202, { 'Content-Type': 'application/json' });
      response.end();
      return;
    }
    // Past the account's (or the function's) concurrency Lambda refuses the invoke: 429, as its API answers.
    const started = options.concurrency?.tryStart(name) ?? { release: () => undefined };
    if ('throttled' in started) {
      const answer = throttledInvokeAnswer(started.throttled);
      response.writeHead(429, answer.headers);
      response.end(answer.body);
      return;
    }
    using _invocation = { [Symbol.dispose]: started.release };
    // The caller may give up (its per-item timeout): an item still waiting for a slot is dropped; a
    // function already running finishes anyway, as in AWS.
    const callerGone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) callerGone.abort(new Error('the caller closed the connection'));
    });
    const invoke = () => {
      const context = lambdaContext(name, options.timeoutMs(name as InternalFunctionName));
      return runInvocation(context, () => handler(payload as never, context));
    };
    const turn = name === 'render' ? renderTurnOf(payload) : undefined;
    const outcome = await (turn ? asBatchItem(turn.keyId, callerGone.signal, invoke, turn.share) : invoke()).then(
      (result) => ({ ok: true as const, result }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    if (response.destroyed) return;
    if (outcome.ok) {
      response.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Executed-Version': '$LATEST' });
      response.end(JSON.stringify(outcome.result ?? null));
    } else {
      // What Lambda answers for an unhandled error: 200 with X-Amz-Function-Error.
      response.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' });
      response.end(JSON.stringify({ errorType: (outcome.error as Error)?.name ?? 'Error', errorMessage: 'Unhandled error' }));
    }
  }));
  // A stopped stack starts no more retries (the runs under way end with it).
  server.once('close', () => {
    closed = true;
    for (const retry of retries) clearTimeout(retry);
    retries.clear();
  });
  return server;
}
