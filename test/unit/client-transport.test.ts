/**
 * The typed client's behaviour on the wire, against a scripted fetch (the answers a busy, throttled
 * or unreachable API gives): retries of 429, 503 and network failures honouring Retry-After, one
 * Idempotency-Key per creating call reused by its retries, timeouts and AbortSignal, typed errors,
 * `for await` pagination. The client against the real API: test/integration/client-packages.test.ts.
 */
import { describe, expect, it } from 'vitest';
import clientPackage from '../../packages/client/package.json' with { type: 'json' };
import { createPdfApiClient, PdfApiConnectionError, PdfApiError, PdfApiTimeoutError, retryDelayMs, VERSION } from '../../packages/client/src/index.ts';

const RECORD = { id: 'pdf_1', url: 'http://api.test/v1/files/pdf_1', pages: 1, size: 900, format: 'A4', filename: 'a.pdf', generation_time_ms: 5, created_at: '', expires_at: '' };

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body: string | undefined;
}

/** A fetch answering from a script, one entry per request (an Error entry: the network failed), and what it was sent. */
function scriptedFetch(script: (Response | Error | ((signal: AbortSignal) => Promise<Response>))[]) {
  const seen: Seen[] = [];
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    seen.push({ method: init.method ?? 'GET', url: String(input), headers: new Headers(init.headers), body: typeof init.body === 'string' ? init.body : undefined });
    const next = script.shift();
    if (next === undefined) throw new Error('unexpected request');
    if (next instanceof Error) throw next;
    if (typeof next === 'function') return next(init.signal!);
    return next;
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const refused = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
/** Client settings that keep backoff waits to a millisecond. */
const quick = { baseUrl: 'http://api.test', apiKey: 'pdfk_test', initialDelayMs: 1, maxDelayMs: 2 };

describe('the client retries', () => {
  it('sends its own version, the package’s, in its User-Agent', async () => {
    const { fetch, seen } = scriptedFetch([json(200, { status: 'ok' })]);
    await createPdfApiClient({ ...quick, fetch }).health();
    expect(VERSION).toBe(clientPackage.version);
    expect(seen[0]!.headers.get('user-agent')).toBe(`pdfapi-client/${clientPackage.version}`);
  });

  it('a 503 and a 429, waiting what Retry-After says, and sends one Idempotency-Key on every attempt', async () => {
    // Arrange
    const { fetch, seen } = scriptedFetch([
      json(503, { error: { code: 'service_busy', message: 'busy', retry_after: 0 } }, { 'retry-after': '0' }),
      json(429, { error: { code: 'rate_limit_exceeded', message: 'slow down', retry_after: 0 } }, { 'retry-after': '0' }),
      json(200, RECORD),
    ]);
    const api = createPdfApiClient({ ...quick, fetch });

    // Act
    const record = await api.generate({ html: '<p>x</p>', format: 'Letter' });

    // Assess
    expect(record.id).toBe('pdf_1');
    expect(seen).toHaveLength(3);
    const keys = seen.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^pdfapi-[\w-]+$/);
    expect(new Set(keys).size).toBe(1);
    expect(seen.every((request) => request.headers.get('authorization') === 'Bearer pdfk_test')).toBe(true);
    expect(JSON.parse(seen[0]!.body!)).toEqual({ html: '<p>x</p>', format: 'Letter' });
  });

  it('gives each call its own key, uses the key given, and sends none with idempotencyKey: false', async () => {
    // Arrange
    const { fetch, seen } = scriptedFetch([json(200, RECORD), json(200, RECORD), json(200, RECORD), json(200, RECORD)]);
    const api = createPdfApiClient({ ...quick, fetch });

    // Act
    await api.generate({ html: 'a' });
    await api.generate({ html: 'a' });
    await api.generate({ html: 'a' }, { idempotencyKey: 'order-1042' });
    await api.generate({ html: 'a' }, { idempotencyKey: false });

    // Assess
    const keys = seen.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('order-1042');
    expect(keys[3]).toBeNull();
  });

  it('a network failure of a POST with a key, and of a read, but not of a POST without a key', async () => {
    // Arrange
    const keyed = scriptedFetch([refused(), json(200, RECORD)]);
    const read = scriptedFetch([refused(), refused(), json(200, { data: [], next_cursor: null })]);
    const unkeyed = scriptedFetch([refused(), json(200, RECORD)]);

    // Act
    const made = await createPdfApiClient({ ...quick, fetch: keyed.fetch }).generate({ html: 'a' });
    const page = await createPdfApiClient({ ...quick, fetch: read.fetch }).list();
    const failure = await createPdfApiClient({ ...quick, fetch: unkeyed.fetch })
      .generate({ html: 'a' }, { idempotencyKey: false })
      .catch((error: unknown) => error);

    // Assess
    expect(made.id).toBe('pdf_1');
    expect(keyed.seen[0]!.headers.get('idempotency-key')).toBe(keyed.seen[1]!.headers.get('idempotency-key'));
    expect(page.data).toEqual([]);
    expect(read.seen).toHaveLength(3);
    expect(failure).toBeInstanceOf(PdfApiConnectionError);
    expect(failure).toMatchObject({ status: 0, code: 'connection_error', message: 'cannot reach http://api.test: ECONNREFUSED' });
    expect(unkeyed.seen).toHaveLength(1);
  });

  it('no more than maxRetries times, then throws the last answer', async () => {
    // Arrange
    const busy = () => json(503, { error: { code: 'service_busy', message: 'busy', retry_after: 0, request_id: 'req-9' } }, { 'retry-after': '0' });
    const { fetch, seen } = scriptedFetch([busy(), busy(), busy(), busy()]);

    // Act
    const error = await createPdfApiClient({ ...quick, fetch, maxRetries: 1 })
      .usage()
      .catch((caught: unknown) => caught);

    // Assess
    expect(seen).toHaveLength(2);
    expect(error).toBeInstanceOf(PdfApiError);
    expect(error).toMatchObject({ status: 503, code: 'service_busy', message: 'busy', requestId: 'req-9', details: { retry_after: 0, request_id: 'req-9' } });
  });

  it('not when Retry-After asks for longer than the client waits, nor after a refusal that retrying cannot change', async () => {
    // Arrange
    const { fetch, seen } = scriptedFetch([
      json(429, { error: { code: 'rate_limit_exceeded', message: 'slow down', retry_after: 120 } }, { 'retry-after': '120' }),
      json(402, { error: { code: 'quota_exceeded', message: 'Monthly quota of 100 PDFs reached', quota: 100 } }),
    ]);
    const api = createPdfApiClient({ ...quick, fetch });

    // Act
    const throttled = await api.generate({ html: 'a' }).catch((error: unknown) => error);
    const refusedForQuota = await api.generate({ html: 'a' }).catch((error: unknown) => error);

    // Assess
    expect(throttled).toMatchObject({ status: 429, code: 'rate_limit_exceeded', details: { retry_after: 120 } });
    expect(refusedForQuota).toMatchObject({ status: 402, code: 'quota_exceeded', message: 'Monthly quota of 100 PDFs reached', details: { quota: 100 } });
    expect(seen).toHaveLength(2);
  });

  it('waits with exponential backoff and full jitter, capped', () => {
    const settings = { initialDelayMs: 500, maxDelayMs: 8_000 };
    expect(retryDelayMs(1, undefined, settings, () => 1)).toBe(500);
    expect(retryDelayMs(3, undefined, settings, () => 1)).toBe(2_000);
    expect(retryDelayMs(10, undefined, settings, () => 1)).toBe(8_000);
    expect(retryDelayMs(3, undefined, settings, () => 0)).toBe(200);
    expect(retryDelayMs(3, 5_000, settings, () => 0)).toBe(5_000);
  });
});

describe('the client stops', () => {
  it('an attempt that outlasts timeoutMs, with an error saying so', async () => {
    // Arrange: an answer that never comes, until the request is aborted
    const never = (signal: AbortSignal) => new Promise<Response>((_, reject) => signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    const { fetch, seen } = scriptedFetch([never]);

    // Act
    const error = await createPdfApiClient({ ...quick, fetch })
      .get('pdf_1', { timeoutMs: 20, maxRetries: 0 })
      .catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(PdfApiTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', message: 'no answer from GET /v1/pdf/pdf_1 within 20 ms' });
    expect(seen).toHaveLength(1);
  });

  it('at once when the caller aborts, retries included', async () => {
    // Arrange
    const controller = new AbortController();
    const never = (signal: AbortSignal) =>
      new Promise<Response>((_, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason));
        controller.abort(new Error('user gave up'));
      });
    const { fetch, seen } = scriptedFetch([never, json(200, RECORD)]);

    // Act
    const error = await createPdfApiClient({ ...quick, fetch })
      .generate({ html: 'a' }, { signal: controller.signal })
      .catch((caught: unknown) => caught);

    // Assess
    expect(error).toEqual(new Error('user gave up'));
    expect(seen).toHaveLength(1);
  });
});

describe('the client pages', () => {
  it('one page when awaited, every item of every page with for await', async () => {
    // Arrange
    const page = (ids: string[], next: string | null) => json(200, { data: ids.map((id) => ({ ...RECORD, id })), next_cursor: next });
    const { fetch, seen } = scriptedFetch([page(['pdf_1', 'pdf_2'], 'c2'), page(['pdf_3', 'pdf_4'], 'c3'), page(['pdf_5'], null), page(['pdf_1', 'pdf_2'], 'c2')]);
    const api = createPdfApiClient({ ...quick, fetch });

    // Act
    const ids: string[] = [];
    for await (const pdf of api.list({ limit: 2 })) ids.push(pdf.id);
    const first = await api.list({ limit: 2 });

    // Assess
    expect(ids).toEqual(['pdf_1', 'pdf_2', 'pdf_3', 'pdf_4', 'pdf_5']);
    expect(seen.map((request) => new URL(request.url).search)).toEqual(['?limit=2', '?limit=2&cursor=c2', '?limit=2&cursor=c3', '?limit=2']);
    expect(first.next_cursor).toBe('c2');
  });
});
