/**
 * Customer code off the event loop (issue #39), through the local stack: while one key's templates
 * each hold a worker for as long as they may, another key's documents print and /health answers,
 * and the hostile documents end 422 naming the limit, uncharged, in generate, batch and preview
 * alike. Asserted by the order of events (the neighbour answered before any hostile document
 * ended), never by a duration.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_FILL_TIME_LIMIT_MS } from '#lib/customer-code/limits.ts';
import { createKey, expectApiError, generate, quotaUsed, request, type ApiResponse, type TestKey } from '../support/api.ts';
import { ONE_LONG_FILTER_CALL } from '../support/hostile-templates.ts';

const json = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
  request(method, path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

const LIMIT_WORDS = `took longer than ${TEMPLATE_FILL_TIME_LIMIT_MS} ms, its time limit`;

describe('one key’s templates that hold their workers', () => {
  let hostile: TestKey;
  let neighbour: TestKey;
  let templateId: string;

  beforeAll(async () => {
    [hostile, neighbour] = await Promise.all([createKey('pro'), createKey('pro')]);
    const created = await json('POST', '/v1/templates', hostile.apiKey, { name: 'Hostile', html: ONE_LONG_FILTER_CALL });
    expect(created.status).toBe(201);
    templateId = created.body.template_id;
  });

  it('leave another key’s documents and /health answering, and end 422 template_error naming the limit, uncharged', async () => {
    // Prepare
    const usedBefore = await quotaUsed(hostile);
    const events: string[] = [];
    const noted = <T>(name: string, work: Promise<T>) => work.then((value) => (events.push(name), value));

    // Act: three hostile documents at once, then the neighbour's document and /health
    const hostileAnswers = Promise.all([1, 2, 3].map((n) => noted(`hostile ${n}`, generate(hostile.apiKey, { template_id: templateId }))));
    const health = await noted('health', request('GET', '/health'));
    const plain = await noted('neighbour', generate(neighbour.apiKey, { html: '<!doctype html><p>Business as usual</p>' }));
    const answers = await hostileAnswers;

    // Assess
    expect(health.status).toBe(200);
    expect(plain.status).toBe(200);
    expect(events.slice(0, 2)).toEqual(['health', 'neighbour']);
    for (const answer of answers) expect(expectApiError(answer, 422, 'template_error')).toContain(LIMIT_WORDS);
    expect(await quotaUsed(hostile)).toBe(usedBefore);
  }, 90_000);

  it('end the same way as batch items, beside an item that prints', async () => {
    // Act
    const batch = await json('POST', '/v1/pdf/batch', hostile.apiKey, { pdfs: [{ template_id: templateId }, { html: '<!doctype html><p>Fine</p>' }] });

    // Assess
    expect(batch.status).toBe(200);
    const [failed, printed] = batch.body.results;
    expect(failed).toMatchObject({ success: false, error: { code: 'TEMPLATE_ERROR', message: expect.stringContaining(LIMIT_WORDS) } });
    expect(printed).toMatchObject({ success: true });
  }, 90_000);

  it('end the same way as a preview', async () => {
    // Act
    const preview = await json('POST', `/v1/templates/${templateId}/preview`, hostile.apiKey, {});

    // Assess
    expect(expectApiError(preview, 422, 'template_error')).toContain(LIMIT_WORDS);
  }, 90_000);
});
