/**
 * Messages at SQS's limits (issue #40), sent by the bulk queue's sender (lib/aws/bulk-queue.ts) to
 * the local stack's SQS stand-in, which refuses what AWS refuses: SendMessageBatch of at most 10
 * messages and 1 MiB of bodies, a message of at most 1 MiB (since August 2025). Exactly at each
 * limit everything arrives, whole; one byte or one message past it the stand-in refuses the raw
 * request, and the sender never sends such a request: it packs its batches within the limits,
 * refuses a message that could never fit before sending anything, and names a message SQS refuses
 * for its own fault while the others are delivered.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateQueueCommand, DeleteMessageBatchCommand, PurgeQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MessagesRefusedError, sendMessageBatches, type OutgoingMessage } from '#lib/aws/bulk-queue.ts';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { savedEnvironment } from '../support/api.ts';

/** AWS's numbers, written out here rather than read from the code under test. */
const MIB = 1_048_576;
const MAX_BATCH_ENTRIES = 10;

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
/** A body of exactly `bytes` bytes, distinct per id (its id first, then filler). */
const body = (id: string, bytes: number) => (id + ':').padEnd(bytes, 'abcdefghijklmnopqrstuvwxyz');
/** `count` sizes summing to exactly `total` bytes. */
const sizesSumming = (total: number, count: number) => Array.from({ length: count }, (_, i) => Math.floor(total / count) + (i < total % count ? 1 : 0));

describe('messages at SQS limits', () => {
  const environment = savedEnvironment();
  let sqs: SQSClient;
  let queueUrl: string;

  /** Every message now on the queue, received and deleted: id => md5 of its body. */
  async function drain(expected: number): Promise<Map<string, string>> {
    const received = new Map<string, string>();
    const giveUpAt = Date.now() + 30_000;
    // At least one receive: a queue expected empty is looked at too.
    do {
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const message of Messages) received.set(message.Body!.slice(0, message.Body!.indexOf(':')), md5(message.Body!));
      if (Messages.length > 0) {
        await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: Messages.map((message, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle! })) }));
      }
    } while (received.size < expected && Date.now() < giveUpAt);
    return received;
  }

  beforeAll(async () => {
    const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
    const { localAwsEnvironment } = await import('#lib/local/stack-info.ts');
    Object.assign(process.env, localAwsEnvironment(info));
    sqs = new SQSClient({});
    ({ QueueUrl: queueUrl } = (await sqs.send(new CreateQueueCommand({ QueueName: `limits-${randomUUID().slice(0, 8)}` }))) as { QueueUrl: string });
  });

  afterAll(async () => {
    // Nothing of this file stays in the stand-in's journal.
    await sqs?.send(new PurgeQueueCommand({ QueueUrl: queueUrl })).catch(() => undefined);
    sqs?.destroy();
    environment.restore();
  });

  it('the stand-in refuses what SQS refuses: 11 messages in a batch, a batch of 1 MiB and a byte, a message of 1 MiB and a byte', async () => {
    // Arrange
    const entries = (sizes: number[]) => sizes.map((bytes, i) => ({ Id: String(i), MessageBody: body(`raw${i}`, bytes), MessageGroupId: 'key' }));

    // Act
    const refused = (sending: Promise<unknown>) => sending.then(() => undefined, (error: unknown) => error);
    const eleven = await refused(sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(Array(MAX_BATCH_ENTRIES + 1).fill(100)) })));
    const batchOver = await refused(sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(sizesSumming(MIB + 1, MAX_BATCH_ENTRIES)) })));
    const messageOver = await refused(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body('rawbig', MIB + 1), MessageGroupId: 'key' })));

    // Assert
    // (The SDK names an error SQS's model does not declare by its query code, AWS.SimpleQueueService.<code>.)
    expect(eleven).toMatchObject({ name: expect.stringMatching(/TooManyEntriesInBatchRequest$/) });
    expect(batchOver).toMatchObject({ name: expect.stringMatching(/BatchRequestTooLong$/) });
    expect(messageOver).toMatchObject({ name: expect.stringMatching(/InvalidParameterValue$/), message: expect.stringContaining(String(MIB)) });
    expect(await drain(0)).toEqual(new Map());
  });

  it('exactly at the limits, everything arrives whole: 10 messages making exactly 1 MiB, 12 messages of exactly 1 MiB, 95 small ones', async () => {
    // Arrange: 117 messages that need at least 12 + 1 + 10 batches
    const messages: OutgoingMessage[] = [
      ...sizesSumming(MIB, MAX_BATCH_ENTRIES).map((bytes, i) => ({ id: `tenth${i}`, body: body(`tenth${i}`, bytes), group: 'key' })),
      ...Array.from({ length: 12 }, (_, i) => ({ id: `whole${i}`, body: body(`whole${i}`, MIB), group: 'key' })),
      ...Array.from({ length: 95 }, (_, i) => ({ id: `small${i}`, body: body(`small${i}`, 300), group: `key${i % 3}` })),
    ];

    // Act
    await sendMessageBatches(queueUrl, messages);
    const received = await drain(messages.length);

    // Assert
    expect(received.size).toBe(messages.length);
    for (const message of messages) expect(received.get(message.id), message.id).toBe(md5(message.body));
  }, 120_000);

  it('a message of 1 MiB and a byte is refused before anything is sent; one SQS refuses for its characters is named, the others delivered', async () => {
    // Arrange
    const small = Array.from({ length: 9 }, (_, i) => ({ id: `ok${i}`, body: body(`ok${i}`, 200), group: 'key' }));
    const tooLarge = { id: 'big', body: body('big', MIB + 1), group: 'key' };
    const unsendable = { id: 'bad', body: body('bad', 50) + '\u0000', group: 'key' };

    // Act
    const withTooLarge = await sendMessageBatches(queueUrl, [...small, tooLarge]).catch((error: unknown) => error);
    const afterTooLarge = await drain(0);
    const withUnsendable = await sendMessageBatches(queueUrl, [...small, unsendable]).catch((error: unknown) => error);
    const afterUnsendable = await drain(small.length);

    // Assert
    expect(withTooLarge).toBeInstanceOf(MessagesRefusedError);
    expect((withTooLarge as MessagesRefusedError).ids).toEqual(['big']);
    expect((withTooLarge as Error).message).toContain('1048576');
    expect(afterTooLarge.size).toBe(0);
    expect(withUnsendable).toBeInstanceOf(MessagesRefusedError);
    expect((withUnsendable as MessagesRefusedError).ids).toEqual(['bad']);
    expect((withUnsendable as Error).message).toContain('InvalidMessageContents');
    expect([...afterUnsendable.keys()].sort()).toEqual(small.map((message) => message.id).sort());
  });
});
