import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { reconcileQuotas, type ReconciliationReport } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { abandonExpiredJobs } from '#lib/jobs/job-endings.ts';
import { logger } from '#lib/observability/logger.ts';

/**
 * The reconcile function, on a schedule (cdk/stack.ts): asynchronous jobs no run could finish are
 * ended, charged for what they stored (lib/jobs/jobs.ts); then quota held by requests that died is
 * settled by the PDF records they wrote (lib/accounts/reconcile.ts). What was repaired is logged.
 */
export const handler = middy<unknown, ReconciliationReport & { abandonedJobs: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(async () => {
    const now = new Date();
    const abandonedJobs = await abandonExpiredJobs(now);
    return { ...(await reconcileQuotas({ counters: counterStore(), pdfs: pdfStore() }, now)), abandonedJobs };
  });
