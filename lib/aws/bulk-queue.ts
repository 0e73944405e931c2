/**
 * The bulk queue (cdk/stack.ts; the local SQS stand-in locally): one message per chunk of a bulk
 * job, sent in batches of 10 (SendMessageBatch, SQS's largest), each with the submitting API key as
 * its MessageGroupId. On a standard queue that makes it a fair queue: SQS delivers first from the
 * groups with the fewest messages in flight, so one key's backlog of a million lines does not hold
 * back another key's hundred. Lambda's event source mapping takes the messages from there.
 *
 * Once a job's last chunk is done, one more message asks for its completion (its manifest and
 * archive written, its money settled, lib/bulk/bulk-completion.ts), so that step gets a worker
 * invocation of its own, with all of its 15 minutes.
 */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { settings } from '#lib/settings.ts';
import { sqs } from './clients.ts';

/** What a chunk's message says: which job, which chunk, its lines and their bytes in the job's input. */
export interface ChunkMessage {
  readonly job_id: string;
  readonly chunk: number;
  readonly first: number;
  readonly last: number;
  readonly start: number;
  readonly end: number;
  /**
   * Its lines refused at submission (`skip_invalid`): never rendered, whatever the worker's own check
   * of them says, so the lines a job renders are exactly those whose quota it reserved.
   */
  readonly invalid?: readonly number[];
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

/** Puts the chunks on the queue; resolves once SQS has every one of them (a send that failed is tried again). */
export async function enqueueChunks(keyId: string, chunks: readonly ChunkMessage[]): Promise<void> {
  const batches: ChunkMessage[][] = [];
  for (let at = 0; at < chunks.length; at += 10) batches.push(chunks.slice(at, at + 10));
  let next = 0;
  const sender = async () => {
    while (next < batches.length) {
      let batch = batches[next++]!;
      for (let attempt = 0; batch.length > 0; attempt++) {
        const { Failed = [] } = await sqs().send(
          new SendMessageBatchCommand({
            QueueUrl: settings.bulkQueueUrl,
            Entries: batch.map((message) => ({ Id: String(message.chunk), MessageBody: JSON.stringify(message), MessageGroupId: keyId })),
          }),
        );
        if (Failed.length && attempt >= 4) throw new Error(`SQS refused ${Failed.length} chunk messages: ${Failed[0]?.Code}`);
        const failed = new Set(Failed.map((entry) => entry.Id));
        batch = batch.filter((message) => failed.has(String(message.chunk)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, batches.length) }, sender));
}

/**
 * Asks for a job's completion. The message has a group of its own (not its key's), so a fair queue
 * delivers it at once rather than behind the key's other jobs' chunks.
 */
export async function enqueueCompletion(jobId: string, { force = false }: { force?: boolean } = {}): Promise<void> {
  const message: CompletionMessage = { job_id: jobId, complete: true, ...(force && { force }) };
  await sqs().send(new SendMessageCommand({ QueueUrl: settings.bulkQueueUrl, MessageBody: JSON.stringify(message), MessageGroupId: `complete-${jobId}` }));
}
