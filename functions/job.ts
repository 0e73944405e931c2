import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { JobInvocation } from '#lib/aws/job-invoker.ts';
import { runJob } from '#lib/jobs/jobs.ts';
import { logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';
import { preparingWorkspacesAfterAnswer } from '#lib/aws/post-answer-work.ts';

/**
 * The job function: one run of an asynchronous job per invocation, invoked asynchronously by
 * generate and batch (lib/jobs/jobs.ts). A run that throws is run again by Lambda.
 */
export const handler = await preparingWorkspacesAfterAnswer(middy<JobInvocation, void>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler((invocation, context) => runJob(invocation.job_id, context)));
