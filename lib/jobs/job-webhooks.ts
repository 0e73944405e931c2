/**
 * The production wiring of webhooks (lib/webhooks/deliveries.ts): the shared table, the egress
 * policy and the settings, and the event a delivery carries, read from its job when it is sent. It
 * stands here, above the jobs it reads, rather than with the other stores (lib/aws/stores.ts), which
 * everything below the jobs uses.
 */
import { pdfStore } from '#lib/aws/stores.ts';
import { dynamo } from '#lib/aws/clients.ts';
import { settings } from '#lib/settings.ts';
import type { WebhookDeps } from '#lib/webhooks/deliveries.ts';
import { readJob } from './job-records.ts';
import { jobEndedEvent } from './job-views.ts';

/** What sending webhooks needs: the table (deliveries, and the keys' signing secrets), the jobs they report, and the settings. */
export const webhookDeps = (): WebhookDeps => ({
  store: { client: dynamo(), tableName: settings.tableName },
  egress: { allowPrivateHosts: settings.allowPrivateHosts },
  timeoutMs: settings.webhookTimeoutMs,
  retryScheduleSeconds: settings.webhookRetryScheduleSeconds,
  eventOf: async (delivery) => jobEndedEvent(await readJob(pdfStore(), delivery.jobId)),
});
