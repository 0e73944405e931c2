/**
 * Idempotency-Key on generate and batch, as an integration that retries on timeouts uses it: a
 * repeat answers the first response and charges nothing; another request under the same key, or a
 * repeat while the first still runs, is refused; a failure leaves nothing behind; keys are scoped to
 * the API key.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DynamoDBClient, paginateScan, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { apiUrl, createKey, expectApiError, quotaUsed, request, requestsReceivedBy, type ApiResponse, type TestKey } from '../support/api.ts';
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

function idempotencyTable() {
  const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
  const client = new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return { client, tableName: info.idempotencyTableName };
}

/**
 * Puts the record of the request whose kept response names `id` back as a request that died after
 * doing its work leaves it once its time is up: in progress, lapsed, no response kept. That is what
 * a kill -9 between storing the work and keeping the response leaves (idempotency-crash.test.ts
 * kills a real stack mid-batch); here it is made without a crash, on the shared stack.
 */
async function asIfItsRequestDied(id: string): Promise<void> {
  const { client, tableName } = idempotencyTable();
  let found = 0;
  for await (const page of paginateScan({ client }, { TableName: tableName })) {
    for (const item of page.Items ?? []) {
      if (!item.id?.S?.startsWith('request#') || !JSON.stringify(item.data ?? {}).includes(id)) continue;
      found++;
      await client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { id: item.id },
          UpdateExpression: 'SET #status = :inProgress, #lapsed = :lapsed REMOVE #data',
          ExpressionAttributeNames: { '#status': 'status', '#lapsed': 'in_progress_expiration', '#data': 'data' },
          ExpressionAttributeValues: { ':inProgress': { S: 'INPROGRESS' }, ':lapsed': { N: String(Date.now() - 1_000) } },
        }),
      );
    }
  }
  client.destroy();
  expect(found).toBe(1);
}

/** The largest idempotency record of the local stack, in bytes as DynamoDB counts them (near enough: names plus values). */
async function largestIdempotencyRecord(): Promise<number> {
  const { client, tableName } = idempotencyTable();
  let largest = 0;
  for await (const page of paginateScan({ client }, { TableName: tableName })) {
    for (const item of page.Items ?? []) {
      const size = Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(JSON.stringify(Object.values(value)[0])), 0);
      largest = Math.max(largest, size);
    }
  }
  client.destroy();
  return largest;
}

/** A POST with these header lines, as sent (fetch would join two lines of one header into one). */
function postWithHeaderLines(path: string, key: TestKey, body: unknown, lines: [string, string][]): Promise<ApiResponse> {
  const text = JSON.stringify(body);
  const url = new URL(apiUrl + path);
  const raw = [
    ['Host', url.host],
    ['Authorization', `Bearer ${key.apiKey}`],
    ['Content-Type', 'application/json'],
    ['Content-Length', String(Buffer.byteLength(text))],
    ...lines,
  ].flat();
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: 'POST', headers: raw }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ status: response.statusCode ?? 0, headers: responseHeaders, body: JSON.parse(text), text });
      });
    });
    sent.on('error', reject);
    sent.end(text);
  });
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

  it.each([
    ['twice under one name', [['Idempotency-Key', 'order-1'], ['Idempotency-Key', 'order-2']]],
    ['under two spellings of its name', [['Idempotency-Key', 'order-1'], ['idempotency-key', 'order-2']]],
    ['twice with the same value', [['Idempotency-Key', 'order-1'], ['Idempotency-Key', 'order-1']]],
  ] as [string, [string, string][]][])('an Idempotency-Key header sent %s is 400 invalid_request naming it, and charges nothing', async (_case, lines) => {
    // Arrange
    const usedBefore = await quotaUsed(key);

    // Act
    const response = await postWithHeaderLines(GENERATE, key, { html: '<p>two keys</p>' }, lines);

    // Assess
    expect(expectApiError(response, 400, 'invalid_request')).toContain('Idempotency-Key');
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('a replayed generate whose PDF was deleted since is 410 pdf_gone naming it, marked as replayed, and charges nothing', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const body = { html: '<h1>Deleted later</h1>' };
    const first = await post(GENERATE, key, body, idempotencyKey);
    expect(first.status).toBe(200);
    expect((await request('DELETE', `/v1/pdf/${first.body.id}`, { apiKey: key.apiKey })).status).toBe(204);
    const usedBefore = await quotaUsed(key);

    // Act
    const replay = await post(GENERATE, key, body, idempotencyKey);

    // Assess
    expect(expectApiError(replay, 410, 'pdf_gone')).toContain(first.body.id);
    expect(replay.body.error.pdf_id).toBe(first.body.id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('a replayed batch says which of its PDFs were deleted since (PDF_GONE), the others as they were, and charges nothing', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const body = { pdfs: [0, 1, 2].map((i) => ({ html: `<h1>Item ${i}</h1>`, metadata: { reference_id: `item-${i}` } })) };
    const first = await post(BATCH, key, body, idempotencyKey);
    expect(first.body.successful).toBe(3);
    const deleted = first.body.results[1].pdf_id as string;
    expect((await request('DELETE', `/v1/pdf/${deleted}`, { apiKey: key.apiKey })).status).toBe(204);
    const usedBefore = await quotaUsed(key);

    // Act
    const replay = await post(BATCH, key, body, idempotencyKey);

    // Assess
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.results[0]).toEqual(first.body.results[0]);
    expect(replay.body.results[2]).toEqual(first.body.results[2]);
    expect(replay.body.results[1]).toMatchObject({ success: false, error: { code: 'PDF_GONE', message: expect.stringContaining(deleted) } });
    expect(replay.body).toMatchObject({ total: 3, successful: 2, failed: 1 });
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('a replayed async submission answers the job’s current status, not the queued it was accepted with', async () => {
    // Arrange: a job accepted under a key, then run to its end
    const idempotencyKey = newKey();
    const body = { html: '<h1>Async once</h1>', async: true };
    const accepted = await post(GENERATE, key, body, idempotencyKey);
    expect(accepted).toMatchObject({ status: 202, body: { status: 'queued' } });
    const deadline = Date.now() + 30_000;
    let job = await request('GET', `/v1/jobs/${accepted.body.job_id}`, { apiKey: key.apiKey });
    while (job.body.status !== 'succeeded' && job.body.status !== 'failed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      job = await request('GET', `/v1/jobs/${accepted.body.job_id}`, { apiKey: key.apiKey });
    }
    expect(job.body.status).toBe('succeeded');
    const usedBefore = await quotaUsed(key);

    // Act
    const replay = await post(GENERATE, key, body, idempotencyKey);

    // Assess
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual({ ...accepted.body, status: 'succeeded' });
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('a generate that died after storing its PDF, retried with its key once its record lapsed, answers that PDF and charges it once', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const body = { html: '<h1>Stored, then the process died</h1>' };
    const usedBefore = await quotaUsed(key);
    const first = await post(GENERATE, key, body, idempotencyKey);
    expect(first.status).toBe(200);
    await asIfItsRequestDied(first.body.id);

    // Act
    const retry = await post(GENERATE, key, body, idempotencyKey);

    // Assess: the PDF the dead request stored is the answer, made and charged once.
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body.id).toBe(first.body.id);
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
    expect((await listedIds(key)).filter((id) => id === first.body.id)).toHaveLength(1);
  });

  it('an async submission that died after queueing its job, retried with its key, answers that job: one job, charged once', async () => {
    // Arrange
    const idempotencyKey = newKey();
    const body = { html: '<h1>Queued, then the process died</h1>', async: true };
    const usedBefore = await quotaUsed(key);
    const first = await post(GENERATE, key, body, idempotencyKey);
    expect(first.status).toBe(202);
    await asIfItsRequestDied(first.body.job_id);

    // Act
    const retry = await post(GENERATE, key, body, idempotencyKey);

    // Assess
    expect(retry.status).toBe(202);
    expect(retry.body.job_id).toBe(first.body.job_id);
    const deadline = Date.now() + 30_000;
    let job = await request('GET', `/v1/jobs/${first.body.job_id}`, { apiKey: key.apiKey });
    while (job.body.status !== 'succeeded' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      job = await request('GET', `/v1/jobs/${first.body.job_id}`, { apiKey: key.apiKey });
    }
    expect(job.body.status).toBe('succeeded');
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });
});
