/**
 * Lambda's limits through the local stack (issue #28): an account with 10 concurrent executions,
 * as many new AWS accounts have (LAMBDA_ACCOUNT_CONCURRENCY=10), and the batch fanning out as
 * widely as in AWS (BATCH_CONCURRENCY=100), so its render invokes meet real throttling: 429
 * TooManyRequestsException from the Invoke API, 503 service_busy from the gateway.
 *
 * What a customer checks: every item of a batch of 100 succeeds; several batches at once give
 * only successes or a 503 before anything is charged; another key's single request is answered
 * 200 (or 503 with Retry-After), never 500; quota used equals PDFs listed equals downloadable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LambdaConcurrency } from '#lib/local/lambda-concurrency.ts';
import { request, type ApiResponse } from '../support/api.ts';
import { startPrivateStack, type PrivateStack } from '../support/private-stack.ts';

const invoice = (n: number) =>
  `<!doctype html><html lang="en"><style>body{font-family:sans-serif}td,th{border-bottom:1px solid #ccc;padding:4px}</style>
<h1>Invoice INV-${1000 + n}</h1><p>Billed to: Customer ${n}</p>
<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>
<tr><td>Consulting</td><td>${(n % 7) + 1}</td><td>${((n % 7) + 1) * 120}.00</td></tr>
<tr><td>Hosting</td><td>1</td><td>49.00</td></tr></table><p>Total due: ${((n % 7) + 1) * 120 + 49}.00 EUR</p>`;

const items = (count: number, from = 0) => Array.from({ length: count }, (_, i) => ({ html: invoice(from + i), metadata: { reference_id: `inv-${from + i}` } }));

/** The key's quota used equals the PDFs it has listed. */
async function quotaEqualsListed(service: PrivateStack, apiKey: string): Promise<number> {
  const listed = (await request('GET', `${service.apiUrl}/v1/pdf?limit=100`, { apiKey })).body.data as unknown[];
  expect(await service.quotaUsed(apiKey)).toBe(listed.length);
  return listed.length;
}

describe('at an account concurrency of 10', () => {
  let service: PrivateStack;

  beforeAll(async () => {
    service = await startPrivateStack({ LAMBDA_ACCOUNT_CONCURRENCY: '10', BATCH_CONCURRENCY: '100' });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
  });

  /** Every PDF listed for the key downloads, and their count is what the key was charged. */
  async function expectChargedEqualsListedEqualsDownloadable(apiKey: string): Promise<number> {
    const listed: { id: string; url: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await request('GET', `${service.apiUrl}/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { apiKey });
      listed.push(...(page.body.data as { id: string; url: string }[]));
      cursor = page.body.next_cursor ?? undefined;
    } while (cursor);
    // Four downloads at a time, each retried after a 503 as its Retry-After says: a download link
    // is an invocation of the files function too, and counts against the same 10.
    const statuses: number[] = [];
    const queue = [...listed];
    const download = async (url: string): Promise<number> => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const response = await fetch(url);
        await response.arrayBuffer();
        if (response.status !== 503) return response.status;
        await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
      }
      return 503;
    };
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let pdf = queue.shift(); pdf; pdf = queue.shift()) statuses.push(await download(pdf.url));
    }));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await service.quotaUsed(apiKey)).toBe(listed.length);
    return listed.length;
  }

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

  it('a batch of 100 invoices answers 100 successes, charged exactly', async () => {
    // Prepare
    const apiKey = await service.createKey('pro');

    // Act
    const response = await service.batch(apiKey, { pdfs: items(100) });

    // Assess
    expect(response.status).toBe(200);
    const codes = (response.body.results as { success: boolean; error?: { code: string } }[]).map((r) => (r.success ? 'OK' : r.error!.code));
    expect(codes.filter((code) => code !== 'OK')).toEqual([]);
    expect(response.body.successful).toBe(100);
    expect(await expectChargedEqualsListedEqualsDownloadable(apiKey)).toBe(100);
  }, 120_000);

  it("five simultaneous batches of 100 from one key: successes or a 503 before any charge; another key's singles never 500", async () => {
    // Prepare
    const flooder = await service.createKey('pro');
    const other = await service.createKey('starter');

    // Act
    const batches = Promise.all(Array.from({ length: 5 }, (_, b) => service.batch(flooder, { pdfs: items(100, b * 100) })));
    const singles: ApiResponse[] = [];
    for (let i = 0; i < 6; i++) {
      singles.push(await service.generate(other, { html: invoice(9000 + i) }));
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const answered = await batches;

    // Assess
    console.info(`five batches: ${answered.map((a) => (a.status === 200 ? `200 (${a.body.successful} ok)` : a.status)).join(', ')}; other key: ${singles.map((s) => s.status).join(', ')}`);
    let charged = 0;
    for (const answer of answered) {
      if (answer.status === 503) {
        expect(answer.body.error.code).toBe('service_busy');
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        continue;
      }
      expect(answer.status).toBe(200);
      const codes = (answer.body.results as { success: boolean; error?: { code: string } }[]).map((r) => (r.success ? 'OK' : r.error!.code));
      expect(codes.filter((code) => code === 'RENDER_FAILED')).toEqual([]);
      charged += answer.body.successful as number;
    }
    expect(answered.some((answer) => answer.status === 200)).toBe(true);
    for (const single of singles) {
      expect([200, 503]).toContain(single.status);
      if (single.status === 503) expect(Number(single.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(await expectChargedEqualsListedEqualsDownloadable(flooder)).toBe(charged);
    await expectChargedEqualsListedEqualsDownloadable(other);
  }, 240_000);
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
    const slow = items(12).map((item) => ({ ...item, options: { wait_delay_ms: 2_500 } }));
    const batch = service.batch(starter, { pdfs: slow });
    await new Promise((resolve) => setTimeout(resolve, 1_500));

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
