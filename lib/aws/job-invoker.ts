/**
 * Starting an asynchronous job: an asynchronous (`InvocationType: Event`) invoke of the job
 * function through the AWS SDK. Lambda queues the event durably and answers at once; the job runs
 * up to 15 minutes, is retried by Lambda if its run dies, and lands in the failure destination when
 * every try failed (cdk/stack.ts). Locally the stack's Invoke endpoint does the same
 * (lib/local/invoke.ts).
 */
import { InvokeCommand, TooManyRequestsException } from '@aws-sdk/client-lambda';
import { ServiceBusyError } from '#lib/render/capacity.ts';
import { settings } from '#lib/settings.ts';
import { lambda } from './clients.ts';

/** What the job function is invoked with. */
export interface JobInvocation {
  readonly job_id: string;
}

/** Queues a run of the job; a throttled Lambda is a 503 to the caller, never a 500. */
export async function invokeJobFunction(invocation: JobInvocation): Promise<void> {
  try {
    await lambda().send(
      new InvokeCommand({ FunctionName: settings.jobFunctionName, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(invocation)) }),
    );
  } catch (error) {
    if (error instanceof TooManyRequestsException) throw new ServiceBusyError('Too many jobs are being queued right now.', 5);
    throw error;
  }
}
