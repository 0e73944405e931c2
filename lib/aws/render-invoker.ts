/**
 * The batch function's call to the render function: a synchronous (RequestResponse) Lambda invoke
 * through the AWS SDK, the same call locally (answered by the local stack's Invoke endpoint) and
 * in AWS.
 *
 * A throttled invoke (429 TooManyRequestsException: the account's or the function's concurrency is
 * taken) is not retried here: the SDK's own retries would spend the batch's seconds and a shared
 * retry quota blindly, while the batch's fan-out (lib/documents/batch.ts) knows what to do with it:
 * put the items back, narrow the fan-out, group items into fewer invocations.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { RenderThrottledError, type GroupItemOutcome, type RenderGroupInvocation, type RenderInvocation, type RenderOutcome } from '#lib/documents/batch.ts';
import { settings } from '#lib/settings.ts';
import { isConnectionReset, oncePerEndpoint } from './clients.ts';

/** Thrown when the render function itself failed (crash, timeout, out of memory): not a document error. */
export class RenderFunctionError extends Error {
  override readonly name = 'RenderFunctionError';
}

/** One try per call: throttling is the batch's to handle (see above); a failed invoke fails its items, but for a reset connection (below). */
const renderLambda = oncePerEndpoint('AWS_ENDPOINT_URL_LAMBDA', () => new LambdaClient({ maxAttempts: 1 }));

async function invoke(payload: unknown, signal: AbortSignal): Promise<unknown> {
  let response;
  for (let attempt = 1; ; attempt++) {
    try {
      response = await renderLambda().send(
        new InvokeCommand({ FunctionName: settings.renderFunctionName, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(payload)) }),
        { abortSignal: signal },
      );
      break;
    } catch (error) {
      if ((error as Error)?.name === 'TooManyRequestsException') throw new RenderThrottledError('Lambda throttled the render invoke', { cause: error });
      // One reset connection is tried again at once (the SDK's own retries are off, see renderLambda):
      // if the invoke did reach the function, running the item again is safe, as its record is the
      // batch's to write (the first file, unrecorded, expires uncharged).
      if (attempt === 1 && isConnectionReset(error) && !signal.aborted) continue;
      throw error;
    }
  }
  if (response.FunctionError) throw new RenderFunctionError(`render function failed: ${response.FunctionError}`);
  return JSON.parse(Buffer.from(response.Payload ?? []).toString('utf8')) as unknown;
}

export async function invokeRenderFunction(invocation: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> {
  return (await invoke(invocation, signal)) as RenderOutcome;
}

/** Several items in one invocation, when the fan-out is throttled: one outcome each, in order. */
export async function invokeRenderGroup(invocation: RenderGroupInvocation, signal: AbortSignal): Promise<GroupItemOutcome[]> {
  const outcomes = await invoke(invocation, signal);
  if (!Array.isArray(outcomes) || outcomes.length !== invocation.items.length) throw new RenderFunctionError('render function answered no outcome per item');
  return outcomes as GroupItemOutcome[];
}
