/**
 * The Lambda Invoke API (`POST /2015-03-31/functions/{name}/invocations`) for functions run in this
 * process, so the batch function's AWS SDK call takes the same code path locally as in AWS.
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
import { asBatchItem } from '#lib/render/capacity.ts';
import { lambdaContext } from './gateway.ts';

export type InvokeHandler = (event: never, context: Context) => Promise<unknown>;

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

/** Whose work a render invocation is: the key its batch belongs to. */
function renderKeyOf(payload: unknown): string {
  const keyId = (payload as { owner?: { keyId?: unknown } } | null)?.owner?.keyId;
  return typeof keyId === 'string' ? keyId : 'unknown';
}

function functionNameOf(pathSegment: string): string {
  // The SDK sends names, partial ARNs or full ARNs; the name is what follows ":function:".
  const decoded = decodeURIComponent(pathSegment);
  return decoded.split(':function:').pop()?.split(':')[0] ?? decoded;
}

export function createInvokeEndpoint(
  handlers: Readonly<Record<InternalFunctionName, InvokeHandler>>,
  options: { timeoutMs: number },
): Server {
  return createServer(async (request, response) => {
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
    // The caller may give up (its per-item timeout): an item still waiting for a slot is dropped; a
    // function already running finishes anyway, as in AWS.
    const callerGone = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) callerGone.abort(new Error('the caller closed the connection'));
    });
    const invoke = () => handler(payload as never, lambdaContext(name, options.timeoutMs));
    const outcome = await (name === 'render' ? asBatchItem(renderKeyOf(payload), callerGone.signal, invoke) : invoke()).then(
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
  });
}
