/**
 * The Lambda handlers the local stack serves, by function name: the very modules each Lambda
 * function is bundled from.
 */
import type { FunctionName, InternalFunctionName } from '#lib/api/routes.ts';
import { handler as batch } from '#functions/batch.ts';
import { handler as bulk } from '#functions/bulk.ts';
import { handler as bulkWorker } from '#functions/bulkWorker.ts';
import { handler as fallback } from '#functions/fallback.ts';
import { handler as files } from '#functions/files.ts';
import { handler as generate } from '#functions/generate.ts';
import { handler as health } from '#functions/health.ts';
import { handler as job } from '#functions/job.ts';
import { handler as jobs } from '#functions/jobs.ts';
import { handler as pdfs } from '#functions/pdfs.ts';
import { handler as preview } from '#functions/preview.ts';
import { handler as reconcile } from '#functions/reconcile.ts';
import { handler as render } from '#functions/render.ts';
import { handler as site } from '#functions/site.ts';
import { handler as templates } from '#functions/templates.ts';
import { handler as signingKeys } from '#functions/signingKeys.ts';
import { handler as uploads } from '#functions/uploads.ts';
import { handler as usage } from '#functions/usage.ts';
import { handler as webhooks } from '#functions/webhooks.ts';
import type { ProxyHandler } from './gateway.ts';
import type { InvokeHandler } from './invoke.ts';

export const API_HANDLERS: Readonly<Record<FunctionName, ProxyHandler>> = {
  batch,
  bulk,
  fallback,
  files,
  generate,
  health,
  jobs,
  pdfs,
  preview,
  site,
  templates,
  signingKeys,
  uploads,
  usage,
};

/** Functions reached through the local Lambda Invoke endpoint (the scheduled ones are run on timers too). */
export const INVOKED_HANDLERS: Readonly<Record<InternalFunctionName, InvokeHandler>> = {
  render: render as InvokeHandler,
  job: job as InvokeHandler,
  webhooks: webhooks as InvokeHandler,
  reconcile: reconcile as InvokeHandler,
  bulkWorker: bulkWorker as InvokeHandler,
};
