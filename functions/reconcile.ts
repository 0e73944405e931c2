import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { reconcileQuotas, type ReconciliationReport } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { logger } from '#lib/observability/logger.ts';

/**
 * The reconcile function, on a schedule (cdk/stack.ts): quota held by requests that died is settled
 * by the PDF records they wrote (lib/accounts/reconcile.ts), and what was repaired is logged.
 */
export const handler = middy<unknown, ReconciliationReport>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(() => reconcileQuotas({ counters: counterStore(), pdfs: pdfStore() }, new Date()));
