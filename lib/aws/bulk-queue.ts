/**
 * The bulk queue (cdk/stack.ts; the local SQS stand-in locally): one message per chunk of a bulk
 * job, sent in batches within SQS's limits (SQS_LIMITS: 10 messages, 1 MiB), each with the submitting API key as
 * its MessageGroupId. On a standard queue that makes it a fair queue: SQS delivers first from the
 * groups with the fewest messages in flight, so one key's backlog of a million lines does not hold
 * back another key's hundred. Lambda's event source mapping takes the messages from there.
 *
 * Once a job's last chunk is done, one more message asks for its completion (its manifest and
 * archive written, its money settled, lib/bulk/bulk-completion.ts), so that step gets a worker
 * invocation of its own, with all of its 15 minutes.
 */
import { ChangeMessageVisibilityCommand, GetQueueUrlCommand, SendMessageBatchCommand, SendMessageCommand, type BatchResultErrorEntry } from '@aws-sdk/client-sqs';
import { settings } from '#lib/settings.ts';
import { sqs } from './clients.ts';

/**
 * SQS's limits on what we send (since August 2025; SendMessage and SendMessageBatch in the SQS API
 * reference): a message of at most 1 MiB, a batch of at most 10 messages and 1 MiB in all (the sum
 * of its bodies). Every message we send is small by construction (a chunk's message names at most
 * LINES_PER_CHUNK lines, lib/bulk/bulk-submission.ts); `sendMessageBatches` still packs by both
 * limits and refuses, before sending anything, a message that could never fit.
 */
export const SQS_LIMITS = { maxMessageBytes: 1_048_576, maxBatchBytes: 1_048_576, maxBatchEntries: 10 } as const;

/** What a chunk's message says: which job, which chunk, its lines and their bytes in the job's input. */
export interface ChunkMessage {
  readonly job_id: string;
  readonly chunk: number;
  readonly first: number;
  readonly last: number;
  readonly start: number;
  readonly end: number;
  /**
   * When the chunk holds lines refused at submission (`skip_invalid`): its lines that were valid then,
   * the only ones rendered whatever the worker's own check of the others says, so the lines a job
   * renders are exactly those whose quota it reserved. At most LINES_PER_CHUNK numbers: the message's
   * size never grows with the refused lines. Absent: every line of the chunk was valid.
   */
  readonly valid?: readonly number[];
  /**
   * Its lines refused at submission, as messages sent before `valid` say it (some may still be on a
   * queue). No longer sent: a chunk of 200,000 refused lines and one valid line made a message
   * larger than SQS takes.
   */
  readonly invalid?: readonly number[];
}

/** Whether a chunk's message says a line was refused at submission (never rendered). */
export function refusedAtSubmission(chunk: Pick<ChunkMessage, 'valid' | 'invalid'>): (line: number) => boolean {
  if (chunk.valid) {
    const valid = new Set(chunk.valid);
    return (line) => !valid.has(line);
  }
  const invalid = new Set(chunk.invalid ?? []);
  return (line) => invalid.has(line);
}

/**
 * What a completion's message says: which job. `force` completes a job that will not finish (its
 * time ran out): what its chunks stored counts, the rest fails.
 */
export interface CompletionMessage {
  readonly job_id: string;
  readonly complete: true;
  readonly force?: boolean;
}

export type BulkMessage = ChunkMessage | CompletionMessage;

export const isCompletionMessage = (message: BulkMessage): message is CompletionMessage => 'complete' in message && message.complete === true;

/** SendMessageBatch calls under way at once while a job is put on the queue. */
const SEND_CONCURRENCY = 16;
/** Tries of a batch whose entries SQS failed on its side (throttled, an internal error) before the send gives up. */
const SEND_ATTEMPTS = 5;

/** A message to send: its batch entry id (unique among the messages of one call), body and group. */
export interface OutgoingMessage {
  readonly id: string;
  readonly body: string;
  readonly group: string;
}

/**
 * Messages SQS will never take as they are (too large, characters it refuses): the message's own
 * fault, not a passing one, so sending it again cannot help. `ids` names them; the others of the
 * same call were sent (or, when a message could never fit, nothing was: that is checked first).
 */
export class MessagesRefusedError extends Error {
  override readonly name = 'MessagesRefusedError';
  readonly ids: readonly string[];
  constructor(ids: readonly string[], reason: string) {
    super(`SQS refuses ${ids.length} message${ids.length === 1 ? '' : 's'}: ${reason}`);
    this.ids = ids;
  }
}

/** Whole-request errors that are a message's fault (its size or its characters), not the queue's or the network's. */
const MESSAGE_FAULTS = new Set(['BatchRequestTooLong', 'InvalidMessageContents', 'InvalidParameterValue']);

/** An SQS error's code: the SDK names errors SQS's model does not declare by their query-protocol code (`AWS.SimpleQueueService.<code>`). */
const sqsErrorCode = (error: unknown) => String((error as Error | null)?.name ?? '').replace(/^AWS\.SimpleQueueService\./, '');

const bodyBytes = (message: OutgoingMessage) => Buffer.byteLength(message.body, 'utf8');

/**
 * The messages in batches SQS takes: at most SQS_LIMITS.maxBatchEntries each, and bodies of at most
 * SQS_LIMITS.maxBatchBytes together; in order. Every message must fit alone.
 */
export function packBatches(messages: readonly OutgoingMessage[]): OutgoingMessage[][] {
  const batches: OutgoingMessage[][] = [];
  let batch: OutgoingMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = bodyBytes(message);
    if (batch.length === SQS_LIMITS.maxBatchEntries || bytes + size > SQS_LIMITS.maxBatchBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(message);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * Sends messages to a queue in batches within SQS's limits (`packBatches`), SEND_CONCURRENCY batches
 * at once; resolves once SQS has every one. A message larger than SQS takes is refused before
 * anything is sent (MessagesRefusedError); one SQS refuses for its own fault is left out and named
 * in a MessagesRefusedError once the others are sent; a failure on SQS's side is tried again, and
 * after SEND_ATTEMPTS the call throws as it is (the caller sends again later).
 */
export async function sendMessageBatches(queueUrl: string, messages: readonly OutgoingMessage[]): Promise<void> {
  const tooLarge = messages.filter((message) => bodyBytes(message) > SQS_LIMITS.maxMessageBytes);
  if (tooLarge.length > 0) {
    throw new MessagesRefusedError(
      tooLarge.map((message) => message.id),
      `larger than the ${SQS_LIMITS.maxMessageBytes} bytes a message may have (${bodyBytes(tooLarge[0]!)} bytes)`,
    );
  }
  const batches = packBatches(messages);
  const refused: { id: string; reason: string }[] = [];
  const send = async (batch: readonly OutgoingMessage[]): Promise<void> => {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      let failed: BatchResultErrorEntry[];
      try {
        ({ Failed: failed = [] } = await sqs().send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: pending.map((message) => ({ Id: message.id, MessageBody: message.body, MessageGroupId: message.group })),
          }),
        ));
      } catch (error) {
        if (!MESSAGE_FAULTS.has(sqsErrorCode(error))) throw error;
        // A whole batch refused for a message's fault: each message alone, to find whose.
        if (pending.length > 1) {
          for (const message of pending) await send([message]);
          return;
        }
        refused.push({ id: pending[0]!.id, reason: `${sqsErrorCode(error)}: ${(error as Error).message}` });
        return;
      }
      const byId = new Map(pending.map((message) => [message.id, message]));
      const again: OutgoingMessage[] = [];
      for (const entry of failed) {
        const message = entry.Id === undefined ? undefined : byId.get(entry.Id);
        if (!message) continue;
        if (entry.SenderFault) refused.push({ id: message.id, reason: `${entry.Code}: ${entry.Message ?? ''}`.trim() });
        else again.push(message);
      }
      if (again.length > 0 && attempt >= SEND_ATTEMPTS) throw new Error(`SQS failed ${again.length} messages ${SEND_ATTEMPTS} times: ${failed[0]?.Code}`);
      if (again.length > 0) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      pending = again;
    }
  };
  let next = 0;
  const sender = async () => {
    while (next < batches.length) await send(batches[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, batches.length) }, sender));
  if (refused.length > 0) throw new MessagesRefusedError(refused.map((entry) => entry.id), refused[0]!.reason);
}

/**
 * Puts the chunks on the queue, each in its key's message group; resolves once SQS has every one.
 * Throws MessagesRefusedError (ids: the chunk numbers) for chunks SQS will never take.
 */
export async function enqueueChunks(keyId: string, chunks: readonly ChunkMessage[]): Promise<void> {
  await sendMessageBatches(
    settings.bulkQueueUrl,
    chunks.map((message) => ({ id: String(message.chunk), body: JSON.stringify(message), group: keyId })),
  );
}

/**
 * Asks for a job's completion. The message has a group of its own (not its key's), so a fair queue
 * delivers it at once rather than behind the key's other jobs' chunks.
 */
export async function enqueueCompletion(jobId: string, { force = false }: { force?: boolean } = {}): Promise<void> {
  const message: CompletionMessage = { job_id: jobId, complete: true, ...(force && { force }) };
  await sqs().send(new SendMessageCommand({ QueueUrl: settings.bulkQueueUrl, MessageBody: JSON.stringify(message), MessageGroupId: `complete-${jobId}` }));
}

/** Queue URLs by queue ARN, as SQS answers them: a received message names its queue by ARN alone. */
const queueUrls = new Map<string, Promise<string>>();

function queueUrlOf(queueArn: string): Promise<string> {
  let url = queueUrls.get(queueArn);
  if (!url) {
    // arn:aws:sqs:<region>:<account>:<name>
    const [, , , , account, name] = queueArn.split(':');
    if (!account || !name) throw new Error(`not a queue ARN: ${queueArn}`);
    url = sqs()
      .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
      .then(({ QueueUrl }) => QueueUrl ?? Promise.reject(new Error(`SQS named no URL for ${queueArn}`)));
    url.catch(() => queueUrls.delete(queueArn));
    queueUrls.set(queueArn, url);
  }
  return url;
}

/**
 * Makes a message its consumer could not finish visible again in `seconds` rather than at the end
 * of its queue's visibility timeout (what Lambda's documentation advises for a backoff with an
 * event source mapping: the function changes the visibility, then names the message in
 * `batchItemFailures`, which leaves it as it is). The bulk worker also hides the message it runs (a
 * chunk, a job's completion) for short spans this way while it works on it (lib/bulk/message-hold.ts).
 */
export async function retryMessageIn(message: { readonly eventSourceARN: string; readonly receiptHandle: string }, seconds: number): Promise<void> {
  await sqs().send(
    new ChangeMessageVisibilityCommand({ QueueUrl: await queueUrlOf(message.eventSourceARN), ReceiptHandle: message.receiptHandle, VisibilityTimeout: Math.max(0, Math.round(seconds)) }),
  );
}
