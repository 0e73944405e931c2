/**
 * Issue #28's "Done when", in the Lambda emulation: the functions of cdk.out, each invocation in an
 * execution environment of its own (cold, then warm, frozen between invocations), behind a gateway
 * (emulator/api.ts), on an account with 10 concurrent executions as many new AWS accounts have.
 * The batch function's fan-out meets Lambda's real throttling here (429 TooManyRequestsException
 * from the emulation's Invoke API), and so do the API's own invocations (503 service_busy from the
 * gateway). The scenarios are those the local stack passes (test/support/lambda-limits.ts).
 *
 * And an asynchronous job Lambda gives up on (its every try failed) goes to the job function's
 * failure destination, the job failures queue, whose event source mapping hands it to the reconcile
 * function: the job ends failed, uncharged, as it would in AWS.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { synthesizedAssembly } from './assembly.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { request } from '../support/api.ts';
import { expectBatchOf100, expectFiveBatchesAndANeighbour, invoice, invoiceItems, type ServiceUnderTest } from '../support/lambda-limits.ts';
import { startEmulatedApi, type EmulatedApi } from './emulator/api.ts';
import { startEmulatedStack, type EmulatedStack } from './emulator/stack.ts';

describe('at an account concurrency of 10, the functions of cdk.out behind API Gateway', () => {
  let stack: EmulatedStack;
  let api: EmulatedApi;
  let service: ServiceUnderTest;

  beforeAll(async () => {
    // As many environments of a function as the account may run at once: Lambda starts one per
    // concurrent invocation, so the account's limit is the only one that holds.
    stack = await startEmulatedStack((await synthesizedAssembly()).outdir, { accountConcurrency: 10, maxEnvironmentsPerFunction: 10 });
    api = await startEmulatedApi(stack.emulator);
    const post = (path: string, apiKey: string, body: unknown) =>
      request('POST', api.apiUrl + path, { apiKey, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    service = {
      apiUrl: api.apiUrl,
      createKey: async (tier) => (await stack.createKey(tier as 'pro')).apiKey,
      generate: (apiKey, body) => post('/v1/pdf/generate', apiKey, body),
      batch: (apiKey, body) => post('/v1/pdf/batch', apiKey, body),
      quotaUsed: async (apiKey) => {
        const usage = await request('GET', `${api.apiUrl}/v1/usage`, { apiKey });
        expect(usage.status, `${usage.text}\n${api.failures.join('\n')}`).toBe(200);
        return usage.body.quota_used as number;
      },
    };
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await stack?.stop();
  });

  test('a batch of 100 invoices: every item a success or out of time uncharged, never failed, charged exactly, its fan-out throttled by Lambda', async () => {
    // Prepare: the render environments the account can run started, by a batch of 9 of another key.
    // What this checks is throttling; a cold start here (5 to 25 s with Chromium unpacking on the
    // shared cores, 1.4 s on a quiet one, about as much on Lambda) would spend the 27 s window.
    const warmUp = await service.batch(await service.createKey('pro'), { pdfs: invoiceItems(9, 500) });
    expect(warmUp.status, warmUp.text).toBe(200);

    // Act and assess
    console.info(await expectBatchOf100(service));
    // The limit was met, not avoided: render invokes were refused 429, and every environment freezes.
    expect(stack.emulator.accountConcurrency).toBe(10);
    expect(stack.emulator.throttles.filter((t) => t.functionName === functionId('render')).length).toBeGreaterThan(0);
    const renders = stack.emulator.environments(functionId('render'));
    expect(renders.length).toBeGreaterThan(1);
    expect(renders.every((environment) => environment.freezes)).toBe(true);
  }, 240_000);

  test("five simultaneous batches of 100 from one key: successes or a 503 before any charge; another key's singles never 500", async () => {
    console.info(await expectFiveBatchesAndANeighbour(service));
  }, 360_000);

  test('a job Lambda gives up on reaches the failure queue and the reconcile function, and ends failed, uncharged', async () => {
    // Prepare: the job function's every run fails (KMS refuses it the request's key), after the request was sealed.
    // Generate only seals (Encrypt); the job function's Decrypt is what fails.
    const apiKey = await service.createKey('pro');
    stack.kms.refused.add('Decrypt');
    let job: { status: string; result?: { error?: { code: string; message: string } } } = { status: 'queued' };
    let jobId: string;
    try {
      const submitted = await service.generate(apiKey, { html: invoice(42), async: true });
      expect(submitted.status, submitted.text).toBe(202);
      jobId = submitted.body.job_id as string;

      // Act: Lambda tries it three times (the template's two retries), then gives it up.
      for (const started = Date.now(); Date.now() - started < 120_000 && !['succeeded', 'failed'].includes(job.status); ) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const read = await request('GET', `${api.apiUrl}/v1/jobs/${jobId}`, { apiKey });
        if (read.status === 200) job = read.body;
      }
    } finally {
      stack.kms.refused.delete('Decrypt');
    }

    // Assess: failed and said why, nothing listed or charged; Lambda's record went where AWS sends it.
    expect(job, stack.emulator.output(functionId('reconcile')).slice(-4000)).toMatchObject({ status: 'failed', result: { error: { code: 'render_failed' } } });
    expect(job.result!.error!.message).toMatch(/each of its 3 tries/);
    expect(await service.quotaUsed(apiKey)).toBe(0);
    expect((await request('GET', `${api.apiUrl}/v1/pdf`, { apiKey })).body.data).toEqual([]);
    const givenUp = stack.emulator.givenUp.filter((event) => (event.requestPayload as { job_id?: string }).job_id === jobId);
    expect(givenUp).toEqual([{ functionName: functionId('job'), requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 3 }, requestPayload: { job_id: jobId } }]);
    const delivered = stack.emulator.destinationDeliveries.filter((delivery) => (delivery.record.requestPayload as { job_id?: string }).job_id === jobId);
    expect(delivered).toMatchObject([{ queue: expect.stringMatching(/^JobFailures/), consumer: functionId('reconcile'), status: 'consumed', receiveCount: 1 }]);
    expect(delivered[0]!.record).toMatchObject({ version: '1.0', requestContext: { condition: 'RetriesExhausted' }, responseContext: { functionError: 'Unhandled' } });
  }, 180_000);
});
