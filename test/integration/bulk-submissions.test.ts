/**
 * Bulk submissions are read off the event loop, in bounded memory (issue #40, item 2), through the
 * local stack. Before, a 4 MB upload of 2,000,000 invalid lines was read and checked on the event
 * loop that serves every key (14 to 20 s to its 400, another key's GET /v1/usage 5 to 6 s
 * meanwhile), and eight at once ended in 500s after 45 s with the process at 2.23 GB. Now each is
 * read in a worker thread, streamed, and refused once more than 1,000 of its lines are invalid.
 *
 * Asserted by order, never by duration: while eight such submissions of one key and one that reads
 * a million lines (skip_invalid, another key) are under way, a third key's requests answer, none
 * 5xx, before the submissions' refusals; every submission is refused 400 naming its first problems
 * and how many.
 */
import { describe, expect, it } from 'vitest';
import { createKey, expectApiError, request, type TestKey } from '../support/api.ts';

const call = (key: TestKey, method: string, path: string, body?: unknown) =>
  request(method, path, { apiKey: key.apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

async function upload(key: TestKey, bytes: Buffer): Promise<string> {
  const created = await call(key, 'POST', '/v1/uploads');
  expect(created.status).toBe(201);
  expect((await fetch(created.body.url, { method: 'PUT', body: new Uint8Array(bytes) })).status).toBe(200);
  return created.body.upload_id;
}

/** 2,000,000 lines that are not JSON: 4 MB, the upload. */
const INVALID_UPLOAD = Buffer.from('x\n'.repeat(2_000_000));

describe('bulk submissions off the event loop', () => {
  it("eight 2,000,000-line invalid submissions and a million-line read: another key's requests answer first, none 5xx; every submission refused 400, saying how many", async () => {
    // Arrange
    const [heavy, reader, other] = await Promise.all([createKey('pro'), createKey('pro'), createKey('pro')]);
    const [heavyUpload, readerUpload] = await Promise.all([upload(heavy, INVALID_UPLOAD), upload(reader, INVALID_UPLOAD)]);
    let order = 0;
    const answered = <T>(promise: Promise<T>) => promise.then((response) => ({ response, at: ++order }));

    // Act: eight submissions without skip_invalid (refused at line 1,001), one with it (read to line 1,000,001)
    const submissions = Array.from({ length: 8 }, () => answered(call(heavy, 'POST', '/v1/pdf/bulk', { upload_id: heavyUpload })));
    const longRead = answered(call(reader, 'POST', '/v1/pdf/bulk', { upload_id: readerUpload, skip_invalid: true }));
    let readerDone = false;
    void longRead.then(() => (readerDone = true));
    // The other key, meanwhile: its usage and its list of PDFs, one after the other, until the long read is answered.
    const others: { status: number; at: number; path: string }[] = [];
    for (let i = 0; i < 3 || !readerDone; i++) {
      const path = i % 2 === 0 ? '/v1/usage' : '/v1/pdf?limit=1';
      const { response, at } = await answered(call(other, 'GET', path));
      others.push({ status: response.status, at, path });
      // Within the key's rate limit.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const refused = await Promise.all(submissions);
    const read = await longRead;

    // Assert: the other key was answered, never 5xx, before any submission's refusal and all along the long read
    expect(others.every(({ status }) => status === 200)).toBe(true);
    const firstRefusal = Math.min(...refused.map(({ at }) => at), read.at);
    expect(others[0]!.at).toBeLessThan(firstRefusal);
    expect(others.filter(({ path, at }) => path === '/v1/usage' && at < read.at).length).toBeGreaterThanOrEqual(2);
    // Every submission refused 400, none 500, naming the first problems and how many
    for (const { response } of refused) {
      const message = expectApiError(response, 400, 'invalid_request');
      expect(message).toMatch(/^At least 1,001 lines are not valid batch items \(reading stopped at line 1,001, past 1,000 invalid lines\): line 1: The line is not valid JSON/);
      expect(message).toMatch(/line 20: .*; and at least 981 more$/);
    }
    expect(expectApiError(read.response, 400, 'invalid_request')).toMatch(/more than 1000000 lines/);
  }, 90_000);

  it('a submission with invalid lines under the bound is still read whole: the count exact, the first 20 named', async () => {
    // Arrange: 1,000 invalid lines among valid ones
    const key = await createKey('pro');
    const valid = JSON.stringify({ html: '<p>ok</p>' });
    const lines = Array.from({ length: 3_000 }, (_, i) => (i % 3 === 1 ? 'x' : valid));
    const uploadId = await upload(key, Buffer.from(lines.join('\n') + '\n'));

    // Act
    const answer = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: uploadId });

    // Assert
    expect(expectApiError(answer, 400, 'invalid_request')).toMatch(/^1000 lines are not valid batch items \(send "skip_invalid": true to run the others\): line 2: .*; and 980 more$/);
  });
});
