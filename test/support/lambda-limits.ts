/**
 * Issue #28's "Done when" scenarios at an account concurrency of 10, as a customer sees them over
 * HTTP, for any service under test: the local stack (test/integration/lambda-limits.test.ts) and the
 * functions of cdk.out in the Lambda emulation behind a gateway (test/lambda/limits.test.ts).
 *
 * - a batch of 100 invoices answers every item a success, or refused uncharged because the batch ran
 *   out of time while Lambda was busy (how many fit in its 27 s depends on the host: that figure is
 *   the bench's `limits` phase, never an assertion here), and never RENDER_FAILED;
 * - five simultaneous batches of 100 from one key give only successes or a 503 service_busy with
 *   Retry-After before any charge, and another key's single requests meanwhile are 200 or 503 with
 *   Retry-After, never 500;
 * - no item fails RENDER_FAILED; after each, quota used == PDFs listed == downloadable.
 */
import { expect } from 'vitest';
import { request, type ApiResponse } from './api.ts';

/** What the scenarios need of a service: its URL, keys, and the two document requests. */
export interface ServiceUnderTest {
  readonly apiUrl: string;
  /** A new key of this tier. */
  createKey(tier: string): Promise<string>;
  generate(apiKey: string, body: Record<string, unknown>): Promise<ApiResponse>;
  batch(apiKey: string, body: Record<string, unknown>): Promise<ApiResponse>;
  /** The key's quota used this month (GET /v1/usage). */
  quotaUsed(apiKey: string): Promise<number>;
}

/** A one-page invoice, numbered. */
export const invoice = (n: number) =>
  `<!doctype html><html lang="en"><style>body{font-family:sans-serif}td,th{border-bottom:1px solid #ccc;padding:4px}</style>
<h1>Invoice INV-${1000 + n}</h1><p>Billed to: Customer ${n}</p>
<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>
<tr><td>Consulting</td><td>${(n % 7) + 1}</td><td>${((n % 7) + 1) * 120}.00</td></tr>
<tr><td>Hosting</td><td>1</td><td>49.00</td></tr></table><p>Total due: ${((n % 7) + 1) * 120 + 49}.00 EUR</p>`;

/** `count` invoice items of a batch, numbered from `from`, each with its reference. */
export const invoiceItems = (count: number, from = 0) => Array.from({ length: count }, (_, i) => ({ html: invoice(from + i), metadata: { reference_id: `inv-${from + i}` } }));

/** The key's quota used equals the PDFs it has listed (one page of up to 100). */
export async function quotaEqualsListed(service: ServiceUnderTest, apiKey: string): Promise<number> {
  const listed = (await request('GET', `${service.apiUrl}/v1/pdf?limit=100`, { apiKey })).body.data as unknown[];
  expect(await service.quotaUsed(apiKey)).toBe(listed.length);
  return listed.length;
}

/** Every PDF listed for the key (GET /v1/pdf) downloads, and their count is what the key was charged: answers the count. */
export async function expectChargedEqualsListedEqualsDownloadable(service: ServiceUnderTest, apiKey: string): Promise<number> {
  const listed: { id: string; url: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await request('GET', `${service.apiUrl}/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { apiKey });
    expect(page.status, page.text).toBe(200);
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
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let pdf = queue.shift(); pdf; pdf = queue.shift()) statuses.push(await download(pdf.url));
    }),
  );
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  expect(await service.quotaUsed(apiKey)).toBe(listed.length);
  return listed.length;
}

/** Item outcomes of a batch answer: `OK` or the item's error code, in order. */
const itemCodes = (answer: ApiResponse) => (answer.body.results as { success: boolean; error?: { code: string } }[]).map((r) => (r.success ? 'OK' : r.error!.code));

/** The errors of a batch answer's failed items (code and message: what a failing test shows). */
const itemFailures = (answer: ApiResponse) => (answer.body.results as { success: boolean; error?: { code: string; message: string } }[]).flatMap((r) => (r.success ? [] : [r.error!]));

/**
 * Item codes of a batch that ran out of time, uncharged: an item that could not start while Lambda
 * was busy (SERVICE_BUSY), or that was still at work when the batch's deadline came (RENDER_TIMEOUT).
 */
const OUT_OF_TIME = ['SERVICE_BUSY', 'RENDER_TIMEOUT'];

/**
 * A batch of 100 invoices (a key of `tier`): every item a success or out of time, uncharged (never
 * RENDER_FAILED or any other failure), at least one success, and charged == listed == downloadable
 * == the successes. Answers what happened, for the test's log.
 */
export async function expectBatchOf100(service: ServiceUnderTest, tier = 'pro'): Promise<string> {
  // Prepare
  const apiKey = await service.createKey(tier);

  // Act
  const started = performance.now();
  const response = await service.batch(apiKey, { pdfs: invoiceItems(100) });
  const tookMs = performance.now() - started;

  // Assess
  expect(response.status, response.text).toBe(200);
  expect(itemFailures(response).filter((error) => !OUT_OF_TIME.includes(error.code))).toEqual([]);
  const successful = response.body.successful as number;
  expect(successful).toBeGreaterThan(0);
  expect(await expectChargedEqualsListedEqualsDownloadable(service, apiKey)).toBe(successful);
  const counts: Record<string, number> = {};
  for (const code of itemCodes(response)) counts[code] = (counts[code] ?? 0) + 1;
  return `a batch of 100: ${JSON.stringify(counts)} in ${(tookMs / 1000).toFixed(1)} s`;
}

/**
 * Five simultaneous batches of 100 from one key: each a 200 with no item RENDER_FAILED or a 503
 * service_busy with Retry-After before any charge; another key's singles meanwhile (one every
 * 300 ms or so, six of them) 200 or 503 with Retry-After, never 500. Charged == listed ==
 * downloadable for both keys. Answers what happened, for the test's log.
 */
export async function expectFiveBatchesAndANeighbour(service: ServiceUnderTest): Promise<string> {
  // Prepare
  const flooder = await service.createKey('pro');
  const other = await service.createKey('starter');

  // Act
  const batches = Promise.all(Array.from({ length: 5 }, (_, b) => service.batch(flooder, { pdfs: invoiceItems(100, b * 100) })));
  const singles: ApiResponse[] = [];
  for (let i = 0; i < 6; i++) {
    singles.push(await service.generate(other, { html: invoice(9000 + i) }));
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const answered = await batches;

  // Assess
  let charged = 0;
  for (const answer of answered) {
    if (answer.status === 503) {
      expect(answer.body.error.code).toBe('service_busy');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      continue;
    }
    expect(answer.status, answer.text).toBe(200);
    expect(itemFailures(answer).filter((error) => error.code === 'RENDER_FAILED')).toEqual([]);
    charged += answer.body.successful as number;
  }
  expect(answered.some((answer) => answer.status === 200)).toBe(true);
  for (const single of singles) {
    expect([200, 503], single.text).toContain(single.status);
    if (single.status === 503) {
      expect(single.body.error.code).toBe('service_busy');
      expect(Number(single.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  }
  expect(await expectChargedEqualsListedEqualsDownloadable(service, flooder)).toBe(charged);
  await expectChargedEqualsListedEqualsDownloadable(service, other);
  const items = (answer: ApiResponse) => {
    const counts: Record<string, number> = {};
    for (const code of itemCodes(answer)) counts[code] = (counts[code] ?? 0) + 1;
    return JSON.stringify(counts);
  };
  return `five batches: ${answered.map((a) => (a.status === 200 ? `200 ${items(a)}` : a.status)).join(', ')}; other key: ${singles.map((s) => s.status).join(', ')}`;
}
