/**
 * Bulk jobs (issue #32) in the Lambda emulation: the functions of cdk.out behind the gateway, the
 * template's queues in the SQS stand-in, and the template's event source mapping (one chunk per
 * invocation, ReportBatchItemFailures, its MaximumConcurrency) invoking the bulk worker through the
 * emulation's Invoke API, on an account of 10 concurrent executions as many new AWS accounts have:
 * the worker's invocations, the API's and the download links' all share those 10.
 * An upload (POST /v1/uploads, then the presigned PUT) of 40 lines, two of them invalid and
 * skipped, completes with every valid line a PDF: the manifest line for line in input order, and
 * quota used == PDFs listed == downloadable == manifest successes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { synthesizedAssembly } from './assembly.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { request } from '../support/api.ts';
import { expectChargedEqualsListedEqualsDownloadable, invoice, type ServiceUnderTest } from '../support/lambda-limits.ts';
import { startEmulatedApi, type EmulatedApi } from './emulator/api.ts';
import { startEmulatedStack, type EmulatedStack } from './emulator/stack.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bulk job in the Lambda emulation, at an account concurrency of 10', () => {
  let stack: EmulatedStack;
  let api: EmulatedApi;
  let service: ServiceUnderTest;
  /** A call of the API, tried again while it is 503 (the account's 10 are shared with the workers). */
  let call: (apiKey: string, method: string, path: string, body?: unknown) => ReturnType<typeof request>;

  beforeAll(async () => {
    stack = await startEmulatedStack((await synthesizedAssembly()).outdir, { accountConcurrency: 10, maxEnvironmentsPerFunction: 10 });
    api = await startEmulatedApi(stack.emulator);
    call = async (apiKey, method, path, body) => {
      for (let attempt = 0; ; attempt++) {
        const response = await request(method, api.apiUrl + path, {
          apiKey,
          ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
        });
        if (response.status !== 503 || attempt === 20) return response;
        await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
      }
    };
    service = {
      apiUrl: api.apiUrl,
      createKey: async (tier) => (await stack.createKey(tier as 'pro')).apiKey,
      generate: (apiKey, body) => call(apiKey, 'POST', '/v1/pdf/generate', body),
      batch: (apiKey, body) => call(apiKey, 'POST', '/v1/pdf/batch', body),
      quotaUsed: async (apiKey) => {
        const usage = await call(apiKey, 'GET', '/v1/usage');
        expect(usage.status, usage.text).toBe(200);
        return usage.body.quota_used as number;
      },
    };
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  test('an uploaded job of 40 lines (2 invalid, skipped) completes through the queue and its event source mapping, charged exactly', async () => {
    // Arrange: 40 lines, lines 7 and 31 invalid (no html, url or template_id)
    const apiKey = await service.createKey('pro');
    const lines = Array.from({ length: 40 }, (_, i) =>
      [6, 30].includes(i) ? { metadata: { n: i + 1 } } : { html: invoice(i + 1), metadata: { n: i + 1 } },
    );
    const upload = await call(apiKey, 'POST', '/v1/uploads');
    expect(upload.status, upload.text).toBe(201);
    const put = await fetch(upload.body.url as string, { method: 'PUT', body: lines.map((line) => JSON.stringify(line)).join('\n') + '\n' });
    expect(put.status, await put.text()).toBe(200);

    // Act
    const submitted = await call(apiKey, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id, skip_invalid: true });
    expect(submitted.status, submitted.text).toBe(202);
    expect(submitted.body.total).toBe(40);
    let job = submitted.body;
    for (const giveUpAt = Date.now() + 300_000; !job.completed_at; ) {
      expect(Date.now() < giveUpAt, `the job did not end: ${JSON.stringify(job)}\n${stack.emulator.output(functionId('bulkWorker')).slice(-2000)}`).toBe(true);
      await sleep(1_000);
      const polled = await call(apiKey, 'GET', `/v1/jobs/${submitted.body.job_id}`);
      expect(polled.status, polled.text).toBe(200);
      job = polled.body;
    }

    // Assert: every valid line a PDF, the two invalid ones its failures, the manifest in input order
    expect(job).toMatchObject({ status: 'succeeded', total: 40, succeeded: 38, failed: 2 });
    // The manifest link is the API's (the key's own), which redirects to the file.
    const manifestUrl = new URL((job.result as { manifest_url: string }).manifest_url);
    const redirect = await call(apiKey, 'GET', manifestUrl.pathname);
    expect(redirect.status, redirect.text).toBe(302);
    const manifestResponse = await fetch(redirect.headers.get('location')!);
    expect(manifestResponse.status).toBe(200);
    const manifest = (await manifestResponse.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; success: boolean; error?: { code: string } });
    expect(manifest.map((line) => line.line)).toEqual(lines.map((_, i) => i + 1));
    expect(manifest.filter((line) => !line.success).map((line) => [line.line, line.error?.code])).toEqual([
      [7, 'INVALID_HTML'],
      [31, 'INVALID_HTML'],
    ]);
    expect(await expectChargedEqualsListedEqualsDownloadable(service, apiKey)).toBe(38);
    // The worker ran in the emulation, invoked by the mapping, within the account's 10.
    const workerRuns = stack.emulator.invocations.filter((invocation) => invocation.functionName === functionId('bulkWorker'));
    expect(workerRuns.length).toBeGreaterThanOrEqual(4); // 38 lines in chunks of 10
    expect(stack.emulator.environments(functionId('bulkWorker')).every((environment) => environment.freezes)).toBe(true);
  }, 420_000);
});
