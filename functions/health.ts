import { json } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { dynamo, s3 } from '#lib/aws/clients.ts';
import { bucketCheck, checkHealth, HEALTH_RETRY_AFTER_SECONDS, tableCheck } from '#lib/observability/health.ts';
import { settings } from '#lib/settings.ts';

/**
 * GET /health (no key): 200 when the table, the bucket and (where this process owns one) the
 * browser answer, else 503 naming what is down; see lib/observability/health.ts.
 */
export const handler = apiHandler({ body: false }, async () => {
  const report = await checkHealth({ table: tableCheck(dynamo(), settings.tableName), bucket: bucketCheck(s3(), settings.bucketName) });
  if (report.status === 'ok') return json(200, report);
  return json(503, report, { 'Retry-After': String(HEALTH_RETRY_AFTER_SECONDS) });
});
