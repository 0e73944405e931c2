import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { reconcileQuotas, type ReconciliationReport } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { isCompletionMessage, type BulkMessage } from '#lib/aws/bulk-queue.ts';
import { completeBulkJob, completeExpiredBulkJobs, giveUpChunk } from '#lib/bulk/bulk-completion.ts';
import { enqueueStrandedBulkJobs } from '#lib/bulk/bulk-submission.ts';
import { abandonExpiredJobs, endGivenUpJob, type GivenUpInvocation } from '#lib/jobs/job-endings.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';

const isQueueBatch = (event: unknown): event is SQSEvent =>
  Array.isArray((event as SQSEvent | null)?.Records) && (event as SQSEvent).Records.every((record) => record.eventSource === 'aws:sqs');

/**
 * The reconcile function, two ways (cdk/stack.ts):
 * - from the job function's failure queue (an SQS event source): each job whose invocation Lambda
 *   gave up on is ended at once, charged for what it stored, its webhook sent (lib/jobs/job-endings.ts);
 *   and from the bulk queue's dead-letter queue: each chunk every delivery failed is ended
 *   (lib/bulk/bulk-completion.ts), so that its bulk job completes.
 *   A record that could not be handled is reported back and comes again.
 * - on a schedule: asynchronous jobs no run could finish are ended, charged for what they stored;
 *   then quota held by requests that died is settled by the PDF records they wrote
 *   (lib/accounts/reconcile.ts); bulk jobs whose submission died before their chunks were all queued
 *   are queued again. What was repaired is logged.
 */
/** A bulk job stored this long ago whose chunks are not all queued belongs to a submission that died. */
const STRANDED_BULK_JOB_MS = 2 * 60_000;

export const handler = middy<unknown, (ReconciliationReport & { abandonedJobs: number; requeuedBulkJobs: number }) | SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(async (event) => {
    if (isQueueBatch(event)) {
      const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
      for (const record of event.Records) {
        try {
          const body = JSON.parse(record.body) as GivenUpInvocation | BulkMessage;
          // The bulk queue's dead letters are chunks every delivery failed: each is ended, its job's
          // completion asked for if it was the last; and completions every delivery failed: the job
          // is completed here, without its archive.
          if ('complete' in body && isCompletionMessage(body)) {
            if ((await completeBulkJob(body.job_id, { force: body.force === true })) === 'retry') batchItemFailures.push({ itemIdentifier: record.messageId });
          } else if ('chunk' in body) await giveUpChunk(body);
          else await endGivenUpJob(body);
        } catch (error) {
          logger.error('given-up job not ended', { message_id: record.messageId, ...errorFields(error) });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }
      return { batchItemFailures };
    }
    const now = new Date();
    const abandonedJobs = (await abandonExpiredJobs(now)) + (await completeExpiredBulkJobs(now));
    const requeuedBulkJobs = await enqueueStrandedBulkJobs(now, STRANDED_BULK_JOB_MS);
    return { ...(await reconcileQuotas({ counters: counterStore(), pdfs: pdfStore() }, now)), abandonedJobs, requeuedBulkJobs };
  });
