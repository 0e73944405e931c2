/**
 * A bulk message whose worker caught an error comes back soon (issue #40): the bulk worker, invoked
 * through the local stack's Lambda Invoke endpoint as the event source mapping invokes it, names the
 * message in batchItemFailures and makes it visible again after a short delay, instead of leaving it
 * hidden for the queue's whole visibility timeout (18 minutes), which held a chunk back that long.
 * The queue here is the test's own (the same visibility timeout as the bulk queue), so nothing but
 * this test receives its message.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StackInfo } from '#lib/local/stack-info.ts';

/** The bulk queue's visibility timeout (cdk/stack.ts: the worker's 15 minutes and 3 more), written out. */
const VISIBILITY_TIMEOUT_SECONDS = 1_080;

describe('a bulk message whose worker caught an error', () => {
  let info: StackInfo;
  let sqs: SQSClient;
  let lambda: LambdaClient;
  let queueUrl: string;
  let queueArn: string;

  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

  /** The next message of the test queue, waiting for it as long as the test may. */
  async function nextMessage(): Promise<Message> {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 20, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
      );
      if (Messages[0]) return Messages[0];
    }
  }

  /** The bulk worker's answer to one message, as the event source mapping invokes it. */
  async function invokeWorker(message: Message): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> {
    const event: SQSEvent = {
      Records: [
        {
          messageId: message.MessageId!,
          receiptHandle: message.ReceiptHandle!,
          body: message.Body!,
          attributes: message.Attributes as SQSEvent['Records'][number]['attributes'],
          messageAttributes: {},
          md5OfBody: message.MD5OfBody!,
          eventSource: 'aws:sqs',
          eventSourceARN: queueArn,
          awsRegion: info.region,
        },
      ],
    };
    const invoked = await lambda.send(new InvokeCommand({ FunctionName: 'bulkWorker', Payload: Buffer.from(JSON.stringify(event)) }));
    expect(invoked.FunctionError).toBeUndefined();
    return JSON.parse(Buffer.from(invoked.Payload!).toString('utf8'));
  }

  beforeAll(async () => {
    info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
    sqs = new SQSClient({ endpoint: info.sqsEndpoint, region: info.region, credentials });
    lambda = new LambdaClient({ endpoint: info.lambdaEndpoint, region: info.region, credentials });
    ({ QueueUrl: queueUrl } = (await sqs.send(
      new CreateQueueCommand({ QueueName: `bulk-retries-${randomUUID().slice(0, 8)}`, Attributes: { VisibilityTimeout: String(VISIBILITY_TIMEOUT_SECONDS) } }),
    )) as { QueueUrl: string });
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    queueArn = Attributes!.QueueArn!;
  });

  afterAll(async () => {
    await sqs?.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => undefined);
    sqs?.destroy();
    lambda?.destroy();
  });

  it('is named in batchItemFailures and comes back within seconds, not after the queue’s 18 minutes', async () => {
    // Arrange: a message the worker cannot read, received as the mapping receives it (hidden 18 minutes)
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"job_id": "job_', MessageGroupId: 'key_retries' }));
    const first = await nextMessage();

    // Act: the worker fails on it; the test waits for it to be delivered again
    const answer = await invokeWorker(first);
    const second = await nextMessage();

    // Assess: the same message, its second delivery (18 minutes, had the worker left its visibility as it was)
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: first.MessageId }]);
    expect(second.MessageId).toBe(first.MessageId);
    expect(first.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(second.Attributes?.ApproximateReceiveCount).toBe('2');
  }, 120_000);
});
