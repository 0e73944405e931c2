import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { BulkMessage } from '#lib/aws/bulk-queue.ts';
import { runBulkMessage } from '#lib/bulk/bulk-worker.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';

/**
 * The bulk worker: Lambda's event source mapping on the bulk queue invokes it with chunks of bulk
 * jobs and their completions (lib/bulk/bulk-worker.ts). A message it could not finish is named in `batchItemFailures`
 * (ReportBatchItemFailures): only that message comes back; the others are deleted.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler(async (event, context) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        if ((await runBulkMessage(JSON.parse(record.body) as BulkMessage, context)) === 'retry') batchItemFailures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        logger.error('bulk message failed; it comes back', { message_id: record.messageId, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  });
