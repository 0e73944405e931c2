/**
 * Lambda's SQS event source mapping, as the local stack runs it: what AWS's pollers do between a
 * queue and a function, not a scheduler of ours. It receives from the queue (the local SQS
 * stand-in, through the AWS SDK), invokes the function with Lambda's SQS event through the Lambda
 * Invoke API (the local Invoke endpoint: every invocation counts against LAMBDA_ACCOUNT_CONCURRENCY
 * like any other), and then, as the mapping does:
 * - at most `maximumConcurrency` invocations at once (the mapping's ScalingConfig.MaximumConcurrency);
 * - a throttled invoke (429) is tried again with backoff while its messages stay in flight;
 * - an invocation that fails (a function error, a crash) deletes nothing: its messages come back
 *   when their visibility timeout runs out, and the queue's redrive policy moves a message that came
 *   back too often to the dead-letter queue;
 * - with ReportBatchItemFailures, the messages named in the answer's `batchItemFailures` stay and
 *   the others are deleted; an answer that cannot be read fails the whole batch.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { isConnectionReset } from '#lib/aws/clients.ts';

export interface EventSourceMapping {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly functionName: string;
  /** Messages per invocation (the mapping's BatchSize). */
  readonly batchSize: number;
  /** Invocations at once, at most (ScalingConfig.MaximumConcurrency). */
  readonly maximumConcurrency: number;
  readonly reportBatchItemFailures: boolean;
}

export interface RunningMapping {
  /** Invocations under way now (tests, the bench). */
  readonly running: number;
  /**
   * Messages left to come back after their visibility timeout, by why (a function error, an invoke
   * that failed, an answer that named them in batchItemFailures...): what a job that stops moving
   * is waiting for.
   */
  readonly leftToComeBack: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

/** Longest a throttled invoke waits before it is tried again. */
const THROTTLE_BACKOFF_MAX_MS = 2_000;
/** Long poll of one receive: short, so that a stop is not held up. */
const RECEIVE_WAIT_SECONDS = 1;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sqsEvent(mapping: EventSourceMapping, messages: readonly Message[]): SQSEvent {
  return {
    Records: messages.map((message) => ({
      messageId: message.MessageId!,
      receiptHandle: message.ReceiptHandle!,
      body: message.Body ?? '',
      attributes: message.Attributes as SQSEvent['Records'][number]['attributes'],
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: mapping.queueArn,
      awsRegion: process.env.AWS_REGION ?? 'us-east-1',
    })),
  };
}

/** The messages an invocation's answer lets the mapping delete: all, none, or all but its batchItemFailures. */
function deletable(mapping: EventSourceMapping, messages: readonly Message[], answer: unknown): readonly Message[] {
  if (!mapping.reportBatchItemFailures || answer === null || answer === undefined) return messages;
  const failures = (answer as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined) return messages;
  if (!Array.isArray(failures)) return [];
  const failed = new Set<string>();
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    // An entry naming no message of the batch makes the whole answer unreadable, as Lambda treats it.
    if (typeof id !== 'string' || !messages.some((message) => message.MessageId === id)) return [];
    failed.add(id);
  }
  return messages.filter((message) => !failed.has(message.MessageId!));
}

/**
 * `lambda` is the Lambda API the mapping invokes through: by default the one the environment points
 * at (the local stack's Invoke endpoint); the Lambda emulation passes its own.
 */
export function startEventSourceMapping(
  mapping: EventSourceMapping,
  sqs: SQSClient,
  // Throttling is the mapping's to handle (below), not the SDK's retries.
  lambda: LambdaClient = new LambdaClient({ maxAttempts: 1 }),
): RunningMapping {
  let stopped = false;
  let running = 0;
  let slotFreed: (() => void) | undefined;
  const stopping = new AbortController();
  const leftToComeBack: Record<string, number> = {};
  const leave = (count: number, why: string) => void (leftToComeBack[why] = (leftToComeBack[why] ?? 0) + count);

  const invoke = async (messages: readonly Message[]): Promise<void> => {
    const payload = Buffer.from(JSON.stringify(sqsEvent(mapping, messages)));
    let resetTried = false;
    for (let backoffMs = 50; !stopped; backoffMs = Math.min(THROTTLE_BACKOFF_MAX_MS, backoffMs * 2)) {
      let response;
      try {
        response = await lambda.send(new InvokeCommand({ FunctionName: mapping.functionName, InvocationType: 'RequestResponse', Payload: payload }));
      } catch (error) {
        if ((error as Error)?.name === 'TooManyRequestsException') {
          await sleep(backoffMs * (0.5 + Math.random() / 2));
          continue;
        }
        // A connection reset as it was reused: the invoke did not reach the function; once more at once.
        if (isConnectionReset(error) && !resetTried) {
          resetTried = true;
          continue;
        }
        // The invoke itself failed: the messages come back after their visibility timeout.
        return leave(messages.length, `invoke failed (${(error as Error)?.name})`);
      }
      if (response.FunctionError) return leave(messages.length, 'function error');
      let answer: unknown = null;
      try {
        answer = JSON.parse(Buffer.from(response.Payload ?? []).toString('utf8') || 'null');
      } catch {
        return leave(messages.length, 'unreadable answer');
      }
      const done = deletable(mapping, messages, answer);
      if (done.length < messages.length) leave(messages.length - done.length, 'named in batchItemFailures');
      if (done.length === 0) return;
      await sqs
        .send(new DeleteMessageBatchCommand({ QueueUrl: mapping.queueUrl, Entries: done.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })) }))
        .catch(() => leave(done.length, 'delete failed')); // not deleted: delivered again, which every consumer of SQS must bear
      return;
    }
  };

  const poll = async () => {
    while (!stopped) {
      const free = mapping.maximumConcurrency - running;
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        continue;
      }
      let messages: Message[] = [];
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: mapping.queueUrl,
            MaxNumberOfMessages: Math.min(10, free * mapping.batchSize),
            WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: stopping.signal },
        );
        messages = received.Messages ?? [];
      } catch {
        if (!stopped) await sleep(500); // the queue is down (a restart of the stand-ins): look again soon
        continue;
      }
      for (let at = 0; at < messages.length; at += mapping.batchSize) {
        const batch = messages.slice(at, at + mapping.batchSize);
        running++;
        void invoke(batch).finally(() => {
          running--;
          const wake = slotFreed;
          slotFreed = undefined;
          wake?.();
        });
      }
    }
  };
  const polling = poll();

  return {
    get running() {
      return running;
    },
    leftToComeBack,
    async stop() {
      stopped = true;
      stopping.abort();
      slotFreed?.();
      await polling;
      lambda.destroy();
    },
  };
}
