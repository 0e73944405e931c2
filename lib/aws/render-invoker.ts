/**
 * The batch function's call to the render function: a synchronous (RequestResponse) Lambda invoke
 * through the AWS SDK, the same call locally (answered by the local stack's Invoke endpoint) and
 * in AWS.
 */
import { InvokeCommand } from '@aws-sdk/client-lambda';
import type { RenderInvocation, RenderOutcome } from '#lib/documents/batch.ts';
import { settings } from '#lib/settings.ts';
import { lambda } from './clients.ts';

/** Thrown when the render function itself failed (crash, timeout, out of memory): not a document error. */
export class RenderFunctionError extends Error {
  override readonly name = 'RenderFunctionError';
}

export async function invokeRenderFunction(invocation: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> {
  const response = await lambda().send(
    new InvokeCommand({
      FunctionName: settings.renderFunctionName,
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify(invocation)),
    }),
    { abortSignal: signal },
  );
  if (response.FunctionError) throw new RenderFunctionError(`render function failed: ${response.FunctionError}`);
  return JSON.parse(Buffer.from(response.Payload ?? []).toString('utf8')) as RenderOutcome;
}
