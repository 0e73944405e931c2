/**
 * Bad input that once cost a render, a 500 or a whole render budget (issue #16): each is now a
 * clear 4xx in the documented error shape, quoting at most ~100 characters of what was sent, and
 * leaves nothing charged and nothing stored.
 */
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiUrl, createKey, expectApiError, post, quotaUsed, type TestKey } from '../support/api.ts';
import { storedPdfs } from '../support/stored-pdfs.ts';

const TINY = '<p>x</p>';

function deepObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** JSON nested `depth` objects deep, written without JSON.stringify (which overflows on it). */
const deepJson = (depth: number) => '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);

let key: TestKey;
beforeAll(async () => {
  key = await createKey('enterprise');
});

describe('bad input is a clear 4xx before any work', () => {
  it('a batch item whose metadata nests 20,000 levels: 400, nothing rendered', async () => {
    // Act
    const answer = await post('/v1/pdf/batch', `{"pdfs":[{"html":"<p>x</p>","metadata":${deepJson(20_000)}}]}`, key.apiKey);

    // Assess
    expect(expectApiError(answer, 400, 'invalid_request')).toMatch(/more than 64 levels deep/);
  });

  it('metadata over 16 KiB: the item is INVALID_OPTIONS, the others render', async () => {
    // Act
    const answer = await post('/v1/pdf/batch', { pdfs: [{ html: TINY, metadata: { note: 'x'.repeat(17 * 1024) } }, { html: TINY }] }, key.apiKey);

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.body.results[0]).toEqual({
      success: false,
      error: { code: 'INVALID_OPTIONS', message: 'metadata must be at most 16384 bytes as JSON' },
    });
    expect(answer.body.results[1].success).toBe(true);
  });

  it('a header_html nested 20,000 elements deep: 400 naming the field', async () => {
    // Act
    const answer = await post('/v1/pdf/generate', { html: TINY, header_html: '<b>'.repeat(20_000) }, key.apiKey);

    // Assess
    expect(expectApiError(answer, 400, 'invalid_request')).toMatch(/header_html/);
  });

  it('a header_html nested 100 deep still prints', async () => {
    // Act
    const answer = await post('/v1/pdf/generate', { html: TINY, header_html: '<span>'.repeat(100) + 'Page {{pageNumber}}' }, key.apiKey);

    // Assess
    expect(answer.status).toBe(200);
  });

  it.each([
    ['a margin of 999999999999mm', { margin: '999999999999mm' }],
    ['a margin of 400 nines in px', { margin: `${'9'.repeat(400)}px` }],
    ['a top margin of 400 nines', { margin: { top: '9'.repeat(400) } }],
    ['a bottom margin that leaves the footer no room', { format: 'A5', orientation: 'landscape', margin: { top: '480px' }, footer_html: 'x' }],
  ])('%s: 400 naming margin', async (_name, options) => {
    // Act
    const answer = await post('/v1/pdf/generate', { html: TINY, ...options }, key.apiKey);

    // Assess
    expect(expectApiError(answer, 400, 'invalid_request')).toMatch(/margin/);
  });

  it('a document of 2,000 pages, 40 times the limit: 422 too_many_pages naming the limit, not a 504 after the whole budget', async () => {
    // Prepare: the test stack allows 50 pages and 5 s per document (10,000 pages at the default
    // limit are measured in docs/api.md: refused in about 2.5 s)
    const html = Array.from({ length: 2_000 }, (_, i) => `<p style="break-before:page">Page ${i + 1}</p>`).join('');

    // Act
    const single = await post('/v1/pdf/generate', { html }, key.apiKey);
    const batch = await post('/v1/pdf/batch', { pdfs: [{ html }, { html: TINY }] }, key.apiKey);

    // Assess
    expect(expectApiError(single, 422, 'too_many_pages')).toContain('maximum of 50 pages');
    expect(single.body.error.max_pages).toBe(50);
    expect(batch.body.results[0].error.code).toBe('TOO_MANY_PAGES');
    expect(batch.body.results[1].success).toBe(true);
  });

  it('a document as tall as 2,700 pages: 422 too_many_pages', async () => {
    // Act: one element, 3 million pixels tall (the test stack's limit is 50 pages)
    const answer = await post('/v1/pdf/generate', { html: '<div style="height:3000000px">tall</div>' }, key.apiKey);

    // Assess
    expect(expectApiError(answer, 422, 'too_many_pages')).toContain('maximum of 50 pages');
  });

  it('an unknown field named with 1 MB is quoted in at most ~100 characters', async () => {
    // Act
    const answer = await post('/v1/pdf/generate', `{"html":"<p>x</p>","${'k'.repeat(1024 * 1024)}":1}`, key.apiKey);

    // Assess
    const message = expectApiError(answer, 400, 'invalid_request');
    expect(message).toMatch(/^Unknown field: k+…$/);
    expect(message.length).toBeLessThan(130);
  });

  it('a 125 MB body is refused with 413 as soon as its length is known, before it is read', async () => {
    // Prepare: a client that declares the length and sends nothing until told to continue, as curl does
    const size = 125 * 1024 * 1024;

    // Act
    const answer = await new Promise<{ status: number; body: string; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const request = httpRequest(`${apiUrl}/v1/pdf/generate`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key.apiKey}`, 'Content-Length': String(size), Expect: '100-continue' },
      });
      request.on('continue', () => {
        continued = true;
        request.end(Buffer.alloc(size));
      });
      request.on('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body, continued }));
      });
      request.on('error', reject);
      request.flushHeaders();
    });

    // Assess: not one byte of the body was asked for
    expect(answer.continued).toBe(false);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('a body streamed without a length is cut off at the limit with 413', async () => {
    // Prepare: 64 MB in 1 MB chunks, with no Content-Length
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024);
    const body = new ReadableStream({
      pull(controller) {
        if (sent >= 64 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });

    // Act
    const response = await fetch(`${apiUrl}/v1/pdf/generate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.apiKey}` },
      body,
      duplex: 'half',
    } as RequestInit);

    // Assess
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('afterwards: nothing was charged or stored but the batch items that printed', async () => {
    // Act
    const stored = await storedPdfs(key.keyId);
    const used = await quotaUsed(key);

    // Assess: the metadata test's good item, the 10,000-page batch's good item, the deep header of 100
    expect(used).toBe(3);
    expect(stored.objects).toHaveLength(3);
    expect(stored.records).toEqual(stored.objects);
  });
});

// The depth limit leaves room for any real metadata (run after the tally above, which it would change).
describe('nesting within the limit', () => {
  it('metadata nested 60 levels deep is echoed back as sent', async () => {
    // Act
    const metadata = deepObject(60);
    const answer = await post('/v1/pdf/batch', { pdfs: [{ html: TINY, metadata }] }, key.apiKey);

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.body.results[0].metadata).toEqual(metadata);
  });
});
