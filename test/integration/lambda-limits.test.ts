/**
 * Lambda's limits through the local stack (issue #28): an account with 10 concurrent executions,
 * as many new AWS accounts have (LAMBDA_ACCOUNT_CONCURRENCY=10), and the batch fanning out as
 * widely as in AWS (BATCH_CONCURRENCY=100), so its render invokes meet real throttling: 429
 * TooManyRequestsException from the Invoke API, 503 service_busy from the gateway.
 *
 * What a customer checks: every item of a batch of 100 succeeds; another key's single request is
 * answered 200 (or 503 with Retry-After), never 500; quota used equals PDFs listed equals
 * downloadable. Five simultaneous batches of 100 (500 renders) are tested where Lambda's own
 * throttling is modelled, test/lambda/limits.test.ts, with the same helper: here they only
 * repeated it through the local stack's model at the suite's largest cost.
 */
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LambdaConcurrency } from '#lib/local/lambda-concurrency.ts';
import { expectBatchOf100, invoice, invoiceItems, quotaEqualsListed } from '../support/lambda-limits.ts';
import { request } from '../support/api.ts';
import { startPrivateStack, until, type PrivateStack } from '../support/private-stack.ts';

describe('at an account concurrency of 10', () => {
  let service: PrivateStack;

  beforeAll(async () => {
    service = await startPrivateStack({ LAMBDA_ACCOUNT_CONCURRENCY: '10', BATCH_CONCURRENCY: '100' });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('the Invoke API answers an invoke past the limit 429 TooManyRequestsException, as Lambda does', async () => {
    // Prepare: the local stack's model itself, at the edge
    const concurrency = new LambdaConcurrency({ account: 2, reserved: { render: 1 } });
    const first = concurrency.tryStart('batch');
    const reserved = concurrency.tryStart('render');

    // Act
    const unreservedFull = concurrency.tryStart('generate');
    const reservedFull = concurrency.tryStart('render');

    // Assess
    expect(first).toHaveProperty('release');
    expect(reserved).toHaveProperty('release');
    expect(unreservedFull).toEqual({ throttled: 'ConcurrentInvocationLimitExceeded' });
    expect(reservedFull).toEqual({ throttled: 'ReservedFunctionConcurrentInvocationLimitExceeded' });
    // And the stack's own Invoke endpoint, through the AWS SDK's wire format: 11 invokes of a render that holds.
    const endpoint = service.stack.info.lambdaEndpoint;
    const hold = { owner: { keyId: 'key_probe', tier: 'pro' }, reservationId: 'res_probe', item: { html: '<p>x</p>', options: { wait_delay_ms: 1500 } } };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        fetch(`${endpoint}/2015-03-31/functions/render/invocations`, { method: 'POST', body: JSON.stringify(hold) }).then(async (r) => ({
          status: r.status,
          type: r.headers.get('x-amzn-errortype'),
          body: await r.text(),
        })),
      ),
    );
    const throttled = answers.filter((answer) => answer.status === 429);
    expect(throttled.length).toBeGreaterThanOrEqual(2);
    for (const answer of throttled) {
      expect(answer.type).toBe('TooManyRequestsException');
      expect(JSON.parse(answer.body)).toEqual({ Reason: 'ConcurrentInvocationLimitExceeded', Type: 'User', message: 'Rate Exceeded.' });
    }
  }, 60_000);

  it('keeps an idle connection open, as Lambda’s endpoint does: an invoke 6 s after the last one reuses its connection', async () => {
    // Prepare: one connection at most, kept alive (a closed one would be replaced by a new one)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const invokeUnknown = () =>
      new Promise<{ status: number; reusedSocket: boolean }>((resolve, reject) => {
        const sent = httpRequest(`${service.stack.info.lambdaEndpoint}/2015-03-31/functions/no-such-function/invocations`, { method: 'POST', agent }, (answer) => {
          answer.resume();
          answer.on('end', () => resolve({ status: answer.statusCode!, reusedSocket: sent.reusedSocket }));
        });
        sent.on('error', reject);
        sent.end('{}');
      });

    // Act: two invokes 6 s apart (Node's servers close a connection idle for 5 s by default)
    const first = await invokeUnknown();
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const second = await invokeUnknown();
    agent.destroy();

    // Assess: a connection the endpoint closed while idle is what a loaded client reuses as it closes, and its invoke resets
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(second.reusedSocket).toBe(true);
  }, 30_000);

  it("a group of items with little time left answers in time with what it made, and does not start what would not end", async () => {
    // Prepare: a first item that takes 3.2 s at least (wait_delay_ms), two quick ones, and 6 s to answer in.
    const item = (n: number, options = {}) => ({ item: { html: invoice(n), options } });
    const group = { owner: { keyId: 'key_group', tier: 'pro' }, reservationId: 'res_group', answerWithinMs: 6000, items: [item(1, { wait_delay_ms: 3200 }), item(2), item(3)] };

    // Act
    const answer = await fetch(`${service.stack.info.lambdaEndpoint}/2015-03-31/functions/render/invocations`, { method: 'POST', body: JSON.stringify(group) });

    // Assess: the first made (its file stored, its record left to the batch); after it, 2.8 s at most
    // were left, less than the 3.2 s it took, so the others were not started.
    expect(answer.status).toBe(200);
    const outcomes = (await answer.json()) as { ok?: boolean; notStarted?: boolean; record?: { pages: number } }[];
    expect(outcomes.map((outcome) => (outcome.notStarted ? 'not started' : outcome.ok)), JSON.stringify(outcomes)).toEqual([true, 'not started', 'not started']);
    expect(outcomes[0]!.record!.pages).toBe(1);
  }, 60_000);

  it('a batch of 100 invoices: every item a success or out of time uncharged, never failed, charged exactly', async () => {
    console.info(await expectBatchOf100(service));
  }, 120_000);

});

describe("a key's share of renderers, across requests", () => {
  let service: PrivateStack;

  beforeAll(async () => {
    // The default render time (the shared test stack's 5 s would time out items waiting their turn for this machine's slots).
    service = await startPrivateStack({ BATCH_CONCURRENCY: '100', RENDER_TIMEOUT_MS: '20000' });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
  });

  it("a key's share of renderers (starter: 10) holds across requests: past it 503 with Retry-After before any charge, other keys unaffected", async () => {
    // Prepare: a starter key's batch of 12 slow invoices takes its whole share of 10 renders
    const starter = await service.createKey('starter');
    const other = await service.createKey('starter');
    const slow = invoiceItems(12).map((item) => ({ ...item, options: { wait_delay_ms: 2_500 } }));
    const batch = service.batch(starter, { pdfs: slow });
    // Its renders under way: the batch function took its key's share (one lease for its fan-out) before any of them began.
    await until(async () => (await request('GET', `${service.apiUrl}/health`)).body.rendering.running >= 1, 30_000);

    // Act
    const mine = await service.generate(starter, { html: invoice(7001) });
    const theirs = await service.generate(other, { html: invoice(7002) });
    const answered = await batch;

    // Assess
    expect(mine.status).toBe(503);
    expect(mine.body.error).toMatchObject({ code: 'service_busy', retry_after: expect.any(Number) });
    expect(mine.body.error.message).toMatch(/share is 10/);
    expect(Number(mine.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(theirs.status).toBe(200);
    expect(answered.status).toBe(200);
    expect(answered.body.results.filter((r: { success: boolean }) => !r.success)).toEqual([]);
    expect(answered.body.successful).toBe(12);
    expect(await quotaEqualsListed(service, starter)).toBe(12);
  }, 120_000);
});
