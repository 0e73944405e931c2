/**
 * Idempotency-Key across a crash (issue #30): a batch sent with a key is killed with SIGKILL (the
 * whole local stack, mid-batch, after it stored some PDFs), the stack starts again on the same data,
 * and the client retries with the same key until it is no longer 409. The retry finishes the dead
 * request's work: every item succeeds, the PDFs the dead request stored are in its answer (adopted,
 * not orphans) and the logical batch is charged once: quota used == PDFs listed == items.
 *
 * The stack is a child process of this file's own (`node lib/local/start.ts`, as `npm start` runs),
 * on a data directory of its own; the shared test stack is never touched.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request, type ApiResponse } from '../support/api.ts';

const ITEMS = 20;
/** Item i waits (i + 1) * this before printing: the batch stores its PDFs over seconds. */
const ITEM_STEP_MS = 150;
/** Stored PDFs the kill waits for: some, not all. */
const STORED_AT_KILL = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Idempotency-Key after kill -9', () => {
  let dataDir: string;
  let stack: StackProcess | undefined;
  let apiKey: string;

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    request(method, stack!.info.apiUrl + path, {
      apiKey,
      ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', ...headers } }),
    });
  const listedIds = async () => ((await call('GET', '/v1/pdf?limit=100')).body.data as { id: string }[]).map((record) => record.id);
  const quotaUsed = async () => (await call('GET', '/v1/usage')).body.quota_used as number;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-idempotency-crash-'));
    stack = await startStackProcess(dataDir);
    ({ apiKey } = await createKeyIn(dataDir, 'pro'));
  }, 90_000);

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a retry with the same key finishes the dead batch: every item once, its stored PDFs adopted, charged once', async () => {
    // Arrange: a batch whose items are stored one after another over seconds
    const body = {
      pdfs: Array.from({ length: ITEMS }, (_, i) => ({
        html: `<!doctype html><h1>Order 77, line ${i}</h1>`,
        options: { wait_delay_ms: (i + 1) * ITEM_STEP_MS },
        metadata: { reference_id: `order-77-${i}` },
      })),
    };
    const headers = { 'Idempotency-Key': 'order-77' };
    const first = call('POST', '/v1/pdf/batch', body, headers).catch(() => undefined);
    let storedAtKill: string[] = [];
    const giveUpAt = Date.now() + 60_000;
    while (storedAtKill.length < STORED_AT_KILL) {
      if (Date.now() > giveUpAt) throw new Error('the batch stored nothing in a minute');
      await sleep(100);
      storedAtKill = await listedIds();
    }

    // Act: kill -9 mid-batch, start again on the same data, retry until it is no longer 409
    await killStackProcess(stack!);
    expect(await first).toBeUndefined(); // the first request never answered
    stack = await startStackProcess(dataDir);
    const restartedAt = Date.now();
    let lastRefusedAt = restartedAt;
    let retry = await call('POST', '/v1/pdf/batch', body, headers);
    while (retry.status === 409 && Date.now() - restartedAt < 90_000) {
      lastRefusedAt = Date.now();
      await sleep(1_000);
      retry = await call('POST', '/v1/pdf/batch', body, headers);
    }
    console.info(`idempotency after a crash: ${storedAtKill.length} PDFs stored at the kill; 409 until ${Math.round((lastRefusedAt - restartedAt) / 1000)} s after the restart`);
    const replay = await call('POST', '/v1/pdf/batch', body, headers);

    // Assess
    expect(storedAtKill.length).toBeLessThan(ITEMS);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ total: ITEMS, successful: ITEMS, failed: 0 });
    const answered = (retry.body.results as { pdf_id: string; metadata: { reference_id: string } }[]).map((result) => result.pdf_id);
    expect((retry.body.results as { metadata: { reference_id: string } }[]).map((result) => result.metadata.reference_id)).toEqual(body.pdfs.map((item) => item.metadata.reference_id));
    // What the dead request stored is in the answer, not left beside it.
    expect(answered).toEqual(expect.arrayContaining(storedAtKill));
    const listed = await listedIds();
    expect([...listed].sort()).toEqual([...answered].sort());
    expect(await quotaUsed()).toBe(ITEMS);
    // And it stays one request: a replay answers the same, charging nothing.
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retry.text);
    expect(await quotaUsed()).toBe(ITEMS);
  }, 300_000);
});
