/**
 * Overload (issue 17): far more simultaneous requests than the machine can render get only 200, 429
 * or 503 `service_busy` with Retry-After (never a 500 or 504), nothing is charged for what was not
 * made, and a batch sent in the middle of another key's flood gets its items rendered.
 *
 * This file floods a local stack of its own (test/support/private-stack.ts), with a small queue so
 * that it fills with a few hundred requests, and leaves the shared stack to the other files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBrowser } from '#lib/render/browser.ts';
import type { ApiResponse } from '../support/api.ts';
import { renderCapacity } from '#lib/render/capacity.ts';
import { startPrivateStack, until, type PrivateStack } from '../support/private-stack.ts';

/** Small, so a flood of a few hundred tiny documents fills the queue many times over. */
const SETTINGS = { RENDER_CONCURRENCY: '4', MAX_QUEUED_RENDERS: '12', MAX_QUEUE_WAIT_MS: '4000' };
/** High limits: only the machine's capacity may refuse anything. */
const HIGH_LIMITS = ['--rate-limit', '100000', '--monthly-quota', '100000'];
const tiny = (i: number) => ({ html: `<!doctype html><p>Flood document ${i}</p>` });

function tally(responses: readonly ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** Every 503 is `service_busy` with a whole number of seconds to wait, in the body and in Retry-After. */
function expectHonestBusyAnswers(responses: readonly ApiResponse[]): void {
  for (const busy of responses.filter((r) => r.status === 503)) {
    expect(busy.body?.error?.code).toBe('service_busy');
    const retryAfter = busy.body.error.retry_after;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(busy.headers.get('retry-after')).toBe(String(retryAfter));
  }
}

describe('overload', () => {
  let service: PrivateStack;

  beforeAll(async () => {
    service = await startPrivateStack(SETTINGS);
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('answers 400 simultaneous requests with only 200, 429 or 503 with Retry-After, and charges exactly the 200s', async () => {
    // Prepare: four keys with high limits, 100 requests each
    const keys = await Promise.all([1, 2, 3, 4].map(() => service.createKey('enterprise', HIGH_LIMITS)));
    const browserPid = (await getBrowser()).process()?.pid;

    // Act
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) => service.generate(keys[i % keys.length] as string, tiny(i))),
    );
    const seconds = (performance.now() - started) / 1000;

    // Assess
    const counts = tally(answers);
    console.info(`400 simultaneous requests in ${seconds.toFixed(1)} s: ${JSON.stringify(counts)}`);
    expect(Object.keys(counts).map(Number).every((status) => [200, 429, 503].includes(status))).toBe(true);
    expect(counts[200]).toBeGreaterThan(0);
    expect(counts[503]).toBeGreaterThan(0);
    expectHonestBusyAnswers(answers);
    // The browser was never taken for hung and killed under the load.
    expect((await getBrowser()).process()?.pid).toBe(browserPid);
    for (const [index, key] of keys.entries()) {
      const made = answers.filter((answer, i) => i % keys.length === index && answer.status === 200).length;
      expect(await service.quotaUsed(key)).toBe(made);
    }
  });

  it("renders every item of a batch sent in the middle of another key's flood", async () => {
    // Prepare: one key floods with singles; another sends a batch once the flood is under way
    const [flooder, batcher] = await Promise.all([
      service.createKey('enterprise', HIGH_LIMITS),
      service.createKey('enterprise', HIGH_LIMITS),
    ]);
    const flood = Array.from({ length: 200 }, (_, i) => service.generate(flooder as string, tiny(i)));
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Act
    const started = performance.now();
    const batch = await service.batch(batcher as string, {
      pdfs: Array.from({ length: 10 }, (_, i) => ({ html: `<!doctype html><p>Batch item ${i}</p>`, metadata: { i } })),
    });
    const batchSeconds = (performance.now() - started) / 1000;
    const floodAnswers = await Promise.all(flood);

    // Assess
    console.info(`batch of 10 during a flood of 200: ${batchSeconds.toFixed(1)} s, ${batch.body?.successful} rendered; flood ${JSON.stringify(tally(floodAnswers))}`);
    expect(batch.status).toBe(200);
    expect(batch.body.successful).toBe(10);
    expect(batch.body.results.map((r: { metadata: { i: number } }) => r.metadata.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(floodAnswers.every((answer) => [200, 429, 503].includes(answer.status))).toBe(true);
    expectHonestBusyAnswers(floodAnswers);
    expect(await service.quotaUsed(batcher as string)).toBe(10);
    expect(await service.quotaUsed(flooder as string)).toBe(floodAnswers.filter((answer) => answer.status === 200).length);
  });

  it('drops, uncharged, a document whose caller left while it waited for its turn', async () => {
    // Prepare: every slot busy with slow documents of two keys (one key alone never holds every slot)
    const [busy, alsoBusy, leaver] = await Promise.all([
      service.createKey('enterprise', HIGH_LIMITS),
      service.createKey('enterprise', HIGH_LIMITS),
      service.createKey('enterprise', HIGH_LIMITS),
    ]);
    const slots = renderCapacity().state.slots;
    const slow = Array.from({ length: slots }, (_, i) => service.generate((i % 2 === 0 ? busy : alsoBusy) as string, { ...tiny(i), wait_delay_ms: 3_000 }));
    await until(() => renderCapacity().state.running === slots, 10_000);
    const caller = new AbortController();
    const leaving = fetch(`${service.apiUrl}/v1/pdf/generate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${leaver}` },
      body: JSON.stringify(tiny(0)),
      signal: caller.signal,
    }).then(
      (response) => response.status,
      () => 'left',
    );
    await until(() => renderCapacity().state.waiting === 1, 10_000);

    // Act
    caller.abort();
    await until(() => renderCapacity().state.waiting === 0, 5_000);
    const stillRunning = renderCapacity().state.running;
    const slowAnswers = await Promise.all(slow);

    // Assess: it left the queue at once, without taking a slot, and cost nothing
    expect(await leaving).toBe('left');
    expect(stillRunning).toBe(slots);
    expect(slowAnswers.map((answer) => answer.status)).toEqual(Array.from({ length: slots }, () => 200));
    expect(await service.quotaUsed(leaver as string)).toBe(0);
    expect((await service.quotaUsed(busy as string)) + (await service.quotaUsed(alsoBusy as string))).toBe(slots);
  });
});
