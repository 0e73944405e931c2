import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { retryMessageIn, type BulkMessage } from '#lib/aws/bulk-queue.ts';
import { retryDelaySeconds } from '#lib/bulk/bulk-records.ts';
import { runBulkMessage } from '#lib/bulk/bulk-worker.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';
import { preparingWorkspacesAfterAnswer } from '#lib/aws/post-answer-work.ts';

/**
 * The bulk worker: Lambda's event source mapping on the bulk queue invokes it with chunks of bulk
 * jobs and their completions (lib/bulk/bulk-worker.ts). A message it could not finish is named in `batchItemFailures`
 * (ReportBatchItemFailures): only that message comes back; the others are deleted. One whose run
 * caught an error comes back after a short, growing delay (retryDelaySeconds), not the queue's
 * whole visibility timeout. A message, a chunk's or a job's completion's, is hidden only while its
 * worker renews it (two minutes at a time, lib/bulk/message-hold.ts), so work whose worker crashed
 * or timed out comes back within two minutes, and a chunk another worker has (`retry`) as soon; a
 * completion another worker has is a duplicate, and waits the queue's visibility timeout.
 */
export const handler = await preparingWorkspacesAfterAnswer(middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler(async (event, context) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        if ((await runBulkMessage(JSON.parse(record.body) as BulkMessage, context, { hide: (seconds) => retryMessageIn(record, seconds) })) === 'retry') batchItemFailures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        const delaySeconds = retryDelaySeconds(Number(record.attributes.ApproximateReceiveCount) || 1);
        logger.error('bulk message failed; it comes back', { message_id: record.messageId, delay_seconds: delaySeconds, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
        // Without it the message still comes back, after the queue's visibility timeout.
        await retryMessageIn(record, delaySeconds).catch((failure: unknown) => logger.warn('bulk message left to its visibility timeout', errorFields(failure)));
      }
    }
    return { batchItemFailures };
  }));
