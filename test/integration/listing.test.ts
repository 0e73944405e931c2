/**
 * GET /v1/pdf (shared/spec/beyond.md "Listing"): what a customer was charged for, page by page.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, expectApiError, generate, request, type TestKey } from '../support/api.ts';

let key: TestKey;
const made: string[] = [];

beforeAll(async () => {
  key = await createKey('pro');
  for (let i = 0; i < 5; i++) {
    const answer = await generate(key.apiKey, { html: `<p>Listed ${i}</p>` });
    if (answer.status !== 200) throw new Error(`generate answered ${answer.status}`);
    made.push(answer.body.id);
  }
});

async function listAll(apiKey: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let pages = 0;
  let cursor: string | null = null;
  do {
    const answer = await request('GET', `/v1/pdf?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { apiKey });
    expect(answer.status).toBe(200);
    ids.push(...answer.body.data.map((record: { id: string }) => record.id));
    cursor = answer.body.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

describe('GET /v1/pdf', () => {
  it('lists the caller’s PDFs newest first, page by page, each with its record and a working link', async () => {
    // Act
    const first = await request('GET', '/v1/pdf?limit=2', { apiKey: key.apiKey });
    const all = await listAll(key.apiKey, 2);

    // Assess
    expect(first.body.data).toHaveLength(2);
    expect(first.body.data[0]).toMatchObject({ id: made[4], pages: 1, format: 'A4', url: expect.stringContaining('/v1/files/') });
    expect(all.ids).toEqual([...made].reverse());
    expect(all.pages).toBeGreaterThanOrEqual(3);
    const download = await fetch(first.body.data[0].url, { redirect: 'follow' });
    expect(download.status).toBe(200);
  });

  it('shows neither another key’s PDFs nor deleted ones', async () => {
    // Prepare
    const other = await createKey('pro');
    const theirs = await generate(other.apiKey, { html: '<p>Not yours</p>' });
    const deleted = await generate(other.apiKey, { html: '<p>Deleted</p>' });
    await request('DELETE', `/v1/pdf/${deleted.body.id}`, { apiKey: other.apiKey });

    // Act
    const mine = await listAll(key.apiKey, 100);
    const theirList = await listAll(other.apiKey, 100);

    // Assess
    expect(mine.ids).not.toContain(theirs.body.id);
    expect(theirList.ids).toEqual([theirs.body.id]);
  });

  it.each([
    ['limit=0', 'limit must be a whole number from 1 to 100'],
    ['limit=101', 'limit must be a whole number from 1 to 100'],
    ['limit=abc', 'limit must be a whole number from 1 to 100'],
    ['cursor=not-a-cursor', 'cursor is not a cursor this API gave out'],
    [`cursor=${Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'APIKEY#x'])).toString('base64url')}`, 'cursor is not a cursor this API gave out'],
  ])('%s is 400 naming the parameter', async (query, message) => {
    // Act
    const answer = await request('GET', `/v1/pdf?${query}`, { apiKey: key.apiKey });

    // Assess
    expect(expectApiError(answer, 400, 'invalid_request')).toContain(message);
  });

  it('refuses a cursor it did not give to this key: another key’s, or one made up from the caller’s own PDF, is 400', async () => {
    // Prepare: a real cursor of this key's listing, and one made up to skip ahead to one of its own
    // PDFs (what an unsigned cursor would have taken)
    const page = await request('GET', '/v1/pdf?limit=1', { apiKey: key.apiKey });
    const cursor = page.body.next_cursor as string;
    const own = (await request('GET', `/v1/pdf/${made[2]}`, { apiKey: key.apiKey })).body as { id: string; created_at: string };
    const madeUp = Buffer.from(JSON.stringify([own.created_at, own.id])).toString('base64url');
    const other = await createKey('pro');
    await generate(other.apiKey, { html: '<p>Other key’s page</p>' });

    // Act
    const foreign = await request('GET', `/v1/pdf?limit=1&cursor=${cursor}`, { apiKey: other.apiKey });
    const forged = await request('GET', `/v1/pdf?limit=1&cursor=${madeUp}`, { apiKey: key.apiKey });
    const tampered = await request('GET', `/v1/pdf?limit=1&cursor=${madeUp}.${cursor.split('.')[1]}`, { apiKey: key.apiKey });
    const genuine = await request('GET', `/v1/pdf?limit=1&cursor=${cursor}`, { apiKey: key.apiKey });

    // Assess
    for (const answer of [foreign, forged, tampered]) {
      expect(expectApiError(answer, 400, 'invalid_request')).toContain('cursor is not a cursor this API gave out');
    }
    expect(genuine.status).toBe(200);
    expect(genuine.body.data[0].id).toBe(made[3]);
  });

  it('needs a key', async () => {
    // Act / Assess
    expectApiError(await request('GET', '/v1/pdf'), 401, 'unauthorized');
  });
});
