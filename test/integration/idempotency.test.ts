/**
 * Idempotency-Key on generate and batch, as an integration that retries on timeouts uses it: a
 * repeat answers the first response and charges nothing; another request under the same key, or a
 * repeat while the first still runs, is refused; a failure leaves nothing behind; keys are scoped to
 * the API key.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { StackInfo } from '#lib/local/stack.ts';
import { createKey, expectApiError, quotaUsed, request, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const GENERATE = '/v1/pdf/generate';
const BATCH = '/v1/pdf/batch';

let counter = 0;
/** A fresh Idempotency-Key, as a client makes one per logical request. */
const newKey = () => `order-1042-attempt-${Date.now()}-${++counter}`;

function post(path: string, key: TestKey, body: unknown, idempotencyKey?: string) {
  return request('POST', path, {
    apiKey: key.apiKey,
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', ...(idempotencyKey !== undefined && { 'Idempotency-Key': idempotencyKey }) },
  });
}

/** DynamoDB refuses an item over 400 KB (names and values); dynalite, the local stand-in, does not check. */
const DYNAMODB_ITEM_LIMIT = 400 * 1024;

/** The largest idempotency record of the local stack, in bytes as DynamoDB counts them (near enough: names plus values). */
async function largestIdempotencyRecord(): Promise<number> {
  const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
  const client = new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  let largest = 0;
  for await (const page of paginateScan({ client }, { TableName: info.idempotencyTableName })) {
    for (const item of page.Items ?? []) {
      const size = Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(JSON.stringify(Object.values(value)[0])), 0);
      largest = Math.max(largest, size);
    }
  }
  client.destroy();
  return largest;
}

async function listedIds(key: TestKey): Promise<string[]> {
  const response = await request('GET', '/v1/pdf?limit=100', { apiKey: key.apiKey });
  return (response.body.data as { id: string }[]).map((record) => record.id);
}

describe('Idempotency-Key', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it('a repeated generate answers the first response, marked as replayed, and the quota moves once', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const body = { html: '<h1>Invoice 2026-001</h1>', format: 'Letter' };
    const usedBefore = await quotaUsed(key);

    // Act
    const first = await post(GENERATE, key, body, idempotencyKey);
    const second = await post(GENERATE, key, { format: 'Letter', html: '<h1>Invoice 2026-001</h1>' }, idempotencyKey);

    // Assess
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.headers.get('ratelimit-remaining')).not.toBeNull();
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
    expect((await listedIds(key)).filter((id) => id === first.body.id)).toHaveLength(1);
    const pdf = await readPdf(new Uint8Array(await (await fetch(second.body.url)).arrayBuffer()));
    expect(pdf.text).toBe('Invoice 2026-001');
  });

  it('the same key with another body is 422 idempotency_key_reused and runs nothing', async () => {
    // Arrange
    const idempotencyKey = newKey();
    await post(GENERATE, key, { html: '<h1>First</h1>' }, idempotencyKey);
    const usedBefore = await quotaUsed(key);

    // Act
    const reused = await post(GENERATE, key, { html: '<h1>Second</h1>' }, idempotencyKey);
    const otherRoute = await post(BATCH, key, { pdfs: [{ html: '<h1>First</h1>' }] }, idempotencyKey);

    // Assess
    expectApiError(reused, 422, 'idempotency_key_reused', { secrets: [key.apiKey] });
    expectApiError(otherRoute, 422, 'idempotency_key_reused');
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('a repeat while the first is still running is 409 request_in_progress; once it answered, the repeat gets its response', async () => {
    // Arrange: a page the first request is known to be printing (the site saw it asked for) when the
    // repeat is sent, and that waits a while before printing
    const idempotencyKey = newKey();
    const marker = `idempotency-${Date.now()}-${++counter}`;
    const body = { url: `${inject('publicSite')}/page?${marker}`, wait_delay_ms: 2_000 };
    const usedBefore = await quotaUsed(key);

    // Act
    const firstPending = post(GENERATE, key, body, idempotencyKey);
    while (!(await requestsReceivedBy(inject('publicSite'))).some((path) => path.includes(marker))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const during = await post(GENERATE, key, body, idempotencyKey);
    const first = await firstPending;
    const after = await post(GENERATE, key, body, idempotencyKey);

    // Assess
    expectApiError(during, 409, 'request_in_progress');
    expect(first.status).toBe(200);
    expect(after).toMatchObject({ status: 200, body: { id: first.body.id } });
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });

  it('a request that failed leaves nothing behind: the same key then runs the corrected request', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const usedBefore = await quotaUsed(key);

    // Act
    const refused = await post(GENERATE, key, { html: '<h1>Scaled</h1>', scale: 3 }, idempotencyKey);
    const corrected = await post(GENERATE, key, { html: '<h1>Scaled</h1>', scale: 1.5 }, idempotencyKey);

    // Assess
    expectApiError(refused, 400, 'invalid_request');
    expect(corrected.status).toBe(200);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });

  it('keys are scoped to the API key: another customer using the same Idempotency-Key gets its own PDF', async () => {
    // Arrange
    const other = await createKey('pro');
    const idempotencyKey = newKey();
    const body = { html: '<h1>Shared key</h1>' };

    // Act
    const mine = await post(GENERATE, key, body, idempotencyKey);
    const theirs = await post(GENERATE, other, body, idempotencyKey);

    // Assess
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await listedIds(other)).toEqual([theirs.body.id]);
  });

  it('a repeated batch answers the same ids, with a response too large for one record (large metadata), charging once', async () => {
    // Arrange: 40 items with 12 KB of metadata each, a response of about 490 KB
    const idempotencyKey = newKey();
    const pdfs = Array.from({ length: 40 }, (_, i) => ({ html: `<h1>Receipt ${i}</h1>`, metadata: { reference_id: `r-${i}`, notes: `${i}`.padEnd(12_000, 'x') } }));
    const usedBefore = await quotaUsed(key);

    // Act
    const first = await post(BATCH, key, { pdfs }, idempotencyKey);
    const second = await post(BATCH, key, { pdfs }, idempotencyKey);

    // Assess
    expect(first.status).toBe(200);
    expect(first.text.length).toBeGreaterThan(DYNAMODB_ITEM_LIMIT);
    expect(first.body.successful).toBe(40);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await quotaUsed(key)).toBe(usedBefore + 40);
    // Kept where DynamoDB would take it: the response itself went to the bucket.
    expect(await largestIdempotencyRecord()).toBeLessThan(DYNAMODB_ITEM_LIMIT);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not printable ASCII', 'clé-1'],
  ])('an Idempotency-Key that is %s is 400 invalid_request and charges nothing', async (_case, idempotencyKey) => {
    // Arrange
    const usedBefore = await quotaUsed(key);

    // Act
    const response = await post(GENERATE, key, { html: '<p>x</p>' }, idempotencyKey);

    // Assess
    const message = expectApiError(response, 400, 'invalid_request');
    expect(message).toContain('Idempotency-Key');
    expect(await quotaUsed(key)).toBe(usedBefore);
  });
});
