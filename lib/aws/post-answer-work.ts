/**
 * Work after the answer, on Lambda: an internal extension (Lambda's Extensions API) that holds the
 * environment's freeze until the work a function leaves running at its answer is done.
 *
 * Lambda freezes an execution environment once its runtime has posted the answer and asked for its
 * next event *and* every registered extension has asked for its next event. A Chromium function
 * leaves work at its answer (the next workspace's renderer starting, the used one closing:
 * lib/render/workspaces.ts); frozen at the answer, that work would resume only inside the next
 * invocation, in the next caller's time. Registered by the function's own process during its init
 * (an internal extension), this extension is handed each INVOKE event, waits until the handler has
 * returned and the work is done, and only then asks for its next event: the caller already has its
 * answer, the work is done before the freeze, and Lambda bills that time as the invocation's
 * post-runtime extension time (PostRuntimeExtensionsDuration).
 *
 * Without Lambda (no AWS_LAMBDA_RUNTIME_API: the local stack, tests) nothing is registered and the
 * work simply runs on, as it always did. Internal extensions may not register for SHUTDOWN (the
 * runtime stops them), so this one asks for INVOKE only.
 */
import { Agent, request } from 'node:http';
import type { Context } from 'aws-lambda';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { workspacesSettled } from '#lib/render/workspaces.ts';

const EXTENSIONS_API = '2020-01-01/extension';
/**
 * Longest the freeze is held for the work: opening a workspace is bounded at 5 s of running time
 * (more with a browser that has to be replaced); past this the rest resumes at the next thaw, as
 * it would without the extension, rather than billing a wedged browser's seconds.
 */
const HOLD_LIMIT_MS = 3_000;
/** Wait before asking again after the Extensions API failed to answer (a dropped connection). */
const RETRY_MS = 100;

/** The end of each invocation's handler, by request id: the extension may read an INVOKE before or after it. */
const handlerEnds = new Map<string, { readonly ended: Promise<void>; readonly end: () => void }>();
let registered = false;

function handlerEnd(requestId: string) {
  let entry = handlerEnds.get(requestId);
  if (!entry) {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    entry = { ended, end };
    handlerEnds.set(requestId, entry);
  }
  return entry;
}

/** One connection to the Extensions API, kept (Lambda's Runtime API keeps it across freezes). */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function call(api: string, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const [host, port] = api.split(':');
    // No timeout: event/next is a long poll that lasts until the next invocation, frozen in between.
    const outgoing = request({ host, port: Number(port ?? 80), method, path: `/${EXTENSIONS_API}/${path}`, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Registers the extension (on Lambda only) that, after each invocation's answer, holds the freeze
 * until `work()` resolves (at most HOLD_LIMIT_MS), and answers the handler to export, which tells
 * the extension when an invocation's handler has returned. Called at module init, awaited (a top-level
 * await): Lambda accepts registrations only during init, before the runtime asks for its first event.
 */
export async function withWorkAfterAnswer<E, R>(
  name: string,
  work: () => Promise<void>,
  handler: (event: E, context: Context) => Promise<R>,
): Promise<(event: E, context: Context) => Promise<R>> {
  const api = process.env.AWS_LAMBDA_RUNTIME_API;
  if (api && !registered) {
    try {
      const answer = await call(api, 'POST', 'register', { 'Lambda-Extension-Name': name, 'Content-Type': 'application/json' }, JSON.stringify({ events: ['INVOKE'] }));
      const id = answer.headers['lambda-extension-identifier'];
      if (answer.status !== 200 || typeof id !== 'string') throw new Error(`register answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      registered = true;
      // Its first Next tells Lambda the extension's init is done; each later one, that its invocation's work is.
      void run(api, id, work);
    } catch (error) {
      // Without the extension the work still happens, at the next thaw: slower, never wrong.
      logger.warn('the post-answer extension could not register; work left at the answer runs at the next invocation', errorFields(error));
    }
  }
  if (!registered) return handler;
  return async (event, context) => {
    try {
      return await handler(event, context);
    } finally {
      handlerEnd(context.awsRequestId).end();
    }
  };
}

async function run(api: string, id: string, work: () => Promise<void>): Promise<void> {
  for (;;) {
    let next;
    try {
      next = await call(api, 'GET', 'event/next', { 'Lambda-Extension-Identifier': id });
    } catch (error) {
      logger.warn('the Extensions API did not answer; asking again', errorFields(error));
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    if (next.status !== 200) {
      // An identifier Lambda no longer knows: the environment is going away.
      logger.error('the Extensions API refused the post-answer extension', { status: next.status, body: next.body.slice(0, 200) });
      return;
    }
    const event = JSON.parse(next.body) as { eventType: string; requestId?: string };
    if (event.eventType !== 'INVOKE' || !event.requestId) continue;
    const end = handlerEnd(event.requestId);
    await end.ended;
    handlerEnds.delete(event.requestId);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      work().catch((error: unknown) => logger.warn('work after the answer failed', errorFields(error))),
      new Promise((resolve) => (timer = setTimeout(resolve, HOLD_LIMIT_MS))),
    ]);
    clearTimeout(timer);
  }
}

/**
 * The Chromium functions' handler (generate, render, job, bulk worker): on Lambda, the next
 * workspace is prepared and the used one closed after the answer and before the freeze.
 */
export function preparingWorkspacesAfterAnswer<E, R>(handler: (event: E, context: Context) => Promise<R>): Promise<(event: E, context: Context) => Promise<R>> {
  return withWorkAfterAnswer('pdf-api-workspaces', workspacesSettled, handler);
}
