/**
 * Random and hostile requests to POST /v1/pdf/generate and POST /v1/pdf/batch through the running
 * local stack (issue #16): whatever a caller sends,
 * - the API never answers 5xx, and every refusal has the documented shape `{ error: { code,
 *   message } }` (no stack, path or key in it) with a message quoting at most ~100 characters of
 *   the request;
 * - quota is charged for exactly the PDFs handed back (a 200 on generate, each successful batch
 *   item), and exactly those PDFs are stored: nothing in S3 or DynamoDB for a refused request.
 *
 * Bodies come from test/support/request-fuzz.ts ("http" profile): mostly invalid, the valid ones
 * tiny documents with options that print at once (a valid request that waits for a condition that
 * never holds is a documented 504, not a bug, and is not generated). Then raw bodies that are not
 * JSON, 20,000-level JSON at the top level, in batch item metadata and options, and headers and
 * footers nested 20,000 elements deep.
 *
 * The seed is fixed (FUZZ_SEED overrides it); fast-check prints it with the shrunk counterexample.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_MARGIN_BOX_CHARS } from '#lib/render/options.ts';
import { apiUrl, createKey, expectApiError, type TestKey } from '../support/api.ts';
import { storedPdfs } from '../support/stored-pdfs.ts';
import {
  batchBodyArb,
  DEEP,
  deepArray,
  deepHtml,
  deepObject,
  generateBodyArb,
  materialize,
  ownObject,
  quotingProblem,
  toJson,
} from '../support/request-fuzz.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 160_003);
const GENERATE = '/v1/pdf/generate';
const BATCH = '/v1/pdf/batch';
/** Mostly refused at once; the valid ones render a one-page document. */
const GENERATE_RUNS = 150;
/** Up to four items each. */
const BATCH_RUNS = 40;
/** Only a failing property runs long (shrinking renders again); a passing run takes seconds. */
const PROPERTY_TIMEOUT_MS = 300_000;
const MB = 1024 * 1024;
const TINY = '<p>x</p>';

interface Answer {
  readonly status: number;
  /** The JSON body, or null when there is none or it is not JSON. */
  readonly body: any;
  readonly text: string;
}

describe(`generate and batch under random and hostile requests (fast-check seed ${SEED})`, () => {
  let key: TestKey;
  /** Every PDF the API handed back to this key: the ids quota and storage must account for. */
  const handedBack = new Set<string>();
  let requests = 0;

  beforeAll(async () => {
    // A key of its own, so its quota and stored PDFs are this file's alone. The raised rate limit
    // keeps a shrinking property (which sends many more requests) clear of 429s.
    key = await createKey('enterprise', ['--rate-limit', '100000']);
  });

  /** Sends `body` as the request body, exactly as given, and keeps the ids of the PDFs it got. */
  async function send(path: string, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Answer> {
    requests++;
    let response: Response;
    try {
      response = await fetch(apiUrl + path, {
        method: 'POST',
        redirect: 'manual',
        headers: { Authorization: `Bearer ${key.apiKey}`, ...headers },
        body,
      });
    } catch (error) {
      throw new Error(`POST ${path} got no HTTP answer: ${(error as Error).message} (${String((error as Error).cause ?? '')})`);
    }
    const text = await response.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: checked below
    }
    if (response.status === 200 && path === GENERATE && typeof json?.id === 'string') handedBack.add(json.id);
    if (response.status === 200 && path === BATCH && Array.isArray(json?.results)) {
      for (const result of json.results) if (result?.success === true && typeof result.pdf_id === 'string') handedBack.add(result.pdf_id);
    }
    return { status: response.status, body: json, text };
  }

  /** What every answer must be: no 5xx; a PDF record, a batch envelope, or the error shape quoting little of `input`. */
  function checkAnswer(path: string, answer: Answer, input: unknown): void {
    const excerpt = answer.text.length > 300 ? `${answer.text.slice(0, 300)}…` : answer.text;
    if (answer.status >= 500) throw new Error(`POST ${path} answered ${answer.status}: ${excerpt}`);
    if (answer.status >= 200 && answer.status < 300) {
      expect(answer.status, `POST ${path} answered ${answer.status}: ${excerpt}`).toBe(200);
      if (path === GENERATE) {
        expect(answer.body, excerpt).toMatchObject({ id: expect.stringMatching(/^pdf_[0-9A-Za-z]{20,}$/), url: expect.any(String) });
      } else {
        checkBatchEnvelope(answer, input);
      }
      return;
    }
    if (answer.body?.error === undefined) throw new Error(`POST ${path} answered ${answer.status} without the error shape: ${excerpt}`);
    expectApiError(answer, answer.status, String(answer.body.error.code), { secrets: [key.apiKey] });
    const problem = quotingProblem(answer.body.error.message, input);
    if (problem) throw new Error(`POST ${path} answered ${answer.status} ${answer.body.error.code}: ${problem}`);
  }

  /** A batch answer: one result per item, counts that add up, item errors in their documented shape. */
  function checkBatchEnvelope(answer: Answer, input: unknown): void {
    const { body } = answer;
    expect(body).toMatchObject({ success: true, results: expect.any(Array), total: expect.any(Number), successful: expect.any(Number), failed: expect.any(Number) });
    const items = (input as { pdfs?: unknown[] } | null)?.pdfs;
    if (Array.isArray(items)) expect(body.total, 'one result per item').toBe(items.length);
    expect(body.results).toHaveLength(body.total);
    expect(body.successful + body.failed).toBe(body.total);
    body.results.forEach((result: any, index: number) => {
      if (result?.success === true) {
        expect(result).toMatchObject({ pdf_id: expect.stringMatching(/^pdf_/), download_url: expect.any(String) });
        return;
      }
      expect(result, `item ${index}`).toMatchObject({ success: false, error: { code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) } });
      expect(Object.keys(result).sort(), `item ${index} carries only success and error`).toEqual(['error', 'success']);
      expect(result.error.message.length, `item ${index} message`).toBeGreaterThan(0);
      const problem = quotingProblem(result.error.message, Array.isArray(items) ? items[index] : input);
      if (problem) throw new Error(`batch item ${index} ${result.error.code}: ${problem}`);
    });
    expect(body.results.filter((result: any) => result?.success === true)).toHaveLength(body.successful);
  }

  async function sendChecked(path: string, input: unknown): Promise<Answer> {
    const answer = await send(path, toJson(input));
    checkAnswer(path, answer, input);
    return answer;
  }

  it(
    `POST /v1/pdf/generate: ${GENERATE_RUNS} random bodies, no 5xx, every refusal in the error shape`,
    async () => {
      await fc.assert(
        fc.asyncProperty(generateBodyArb('http'), async (generated) => {
          await sendChecked(GENERATE, materialize(generated));
        }),
        { seed: SEED, numRuns: GENERATE_RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    `POST /v1/pdf/batch: ${BATCH_RUNS} random bodies, no 5xx, every refusal and failed item in its documented shape`,
    async () => {
      await fc.assert(
        fc.asyncProperty(batchBodyArb('http'), async (generated) => {
          await sendChecked(BATCH, materialize(generated));
        }),
        { seed: SEED, numRuns: BATCH_RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  describe('bodies that are not JSON, or JSON no option looks like', () => {
    const bytes = (...parts: (string | number[])[]): Uint8Array<ArrayBuffer> =>
      new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part)))));
    const raw: [string, string | Uint8Array<ArrayBuffer>][] = [
      ['an empty body', ''],
      ['plain text', 'not json'],
      ['a cut-off object', '{"html":'],
      ['an unclosed object', '{'],
      ['a trailing comma', `{"html":"${TINY}",}`],
      ['null', 'null'],
      ['an array', '[]'],
      ['a string', `"${TINY}"`],
      ['a number', '42'],
      ['true', 'true'],
      ['a NUL byte', '\u0000'],
      ['a byte order mark before the JSON', `\ufeff{"html":"${TINY}"}`],
      ['bytes that are not UTF-8', bytes('{', [0xff, 0xfe], '}')],
      ['a string with bytes that are not UTF-8', bytes('{"html":"<p>', [0xc3, 0x28], '</p>"}')],
      ['scale 1e400', `{"html":"${TINY}","scale":1e400}`],
      ['wait_delay_ms 1e400', `{"html":"${TINY}","wait_delay_ms":1e400}`],
      ['wait_delay_ms -1e400', `{"html":"${TINY}","wait_delay_ms":-1e400}`],
      ['a margin of 1e400px', `{"html":"${TINY}","margin":"1e400px"}`],
      ['a margin of 400 digits', `{"html":"${TINY}","margin":"${'9'.repeat(400)}mm"}`],
      ['a margin of 22 digits', `{"html":"${TINY}","margin":{"top":"${'9'.repeat(22)}px"}}`],
      ['a __proto__ field', `{"__proto__":{"html":"${TINY}"}}`],
      ['a __proto__ field beside html', `{"html":"${TINY}","__proto__":{"format":"A9"}}`],
      ['constructor.prototype', `{"constructor":{"prototype":{"html":"${TINY}"}}}`],
      ['an escaped NUL in html', '{"html":"<p>\\u0000</p>"}'],
      ['an escaped lone surrogate in html', '{"html":"<p>\\ud800</p>"}'],
      ['a lone surrogate as format', `{"html":"${TINY}","format":"\\udfff"}`],
      ['html twice', `{"html":"${TINY}","html":"<p>y</p>"}`],
      ['pdfs cut off', '{"pdfs":[{"html":'],
      ['pdfs with a trailing comma', `{"pdfs":[{"html":"${TINY}"},]}`],
      ['a batch item with scale 1e400', `{"pdfs":[{"html":"${TINY}","options":{"scale":1e400}}]}`],
      ['a batch item with 1e400 in its metadata', `{"pdfs":[{"html":"${TINY}","metadata":{"n":1e400}}]}`],
      ['a batch item with a __proto__ field', `{"pdfs":[{"__proto__":{"html":"${TINY}"}}]}`],
      ['a batch item with __proto__ in its metadata', `{"pdfs":[{"html":"${TINY}","metadata":{"__proto__":{"filename":12}}}]}`],
    ];

    it.each(raw)('%s, to both endpoints: no 5xx, a refusal in the error shape', async (_name, body) => {
      for (const path of [GENERATE, BATCH]) {
        const answer = await send(path, body);
        checkAnswer(path, answer, typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
      }
    });

    it('a JSON body sent as text/plain: no 5xx, a refusal in the error shape', async () => {
      for (const path of [GENERATE, BATCH]) {
        const answer = await send(path, `{"html":"${TINY}","pdfs":[]}`, { 'Content-Type': 'text/plain' });
        checkAnswer(path, answer, '');
      }
    });
  });

  describe('valid options at their edges', () => {
    const edges: [string, Record<string, unknown>][] = [
      ['margins that leave 60 px, then a header that needs its default 20 mm', { format: 'A5', orientation: 'landscape', margin: { bottom: '500px' }, header_html: 'x' }],
      ['margins that leave 60 px, then a footer that needs its default 20 mm', { format: 'A5', orientation: 'landscape', margin: { top: '500px' }, footer_html: 'y' }],
      ['side margins that leave 50 px, and a header', { format: 'A5', margin: { left: '250px', right: '250px' }, header_html: 'x' }],
      ['the smallest scale on the largest page', { format: 'A3', orientation: 'landscape', scale: 0.1 }],
      ['the largest scale on the smallest page', { format: 'A5', scale: 2, margin: '0' }],
      ['a margin of a millionth of a millimetre', { margin: '0.000001mm' }],
      ['every option at once', { format: 'letter', orientation: 'landscape', margin: { top: '1in', bottom: '1in' }, print_background: false, scale: 0.5, wait_for: 'domcontentloaded', header_html: '{{date}}', footer_html: '{{pageNumber}}/{{totalPages}}', wait_for_selector: 'body', wait_for_expression: 'true', wait_delay_ms: 0, emulate_media: 'screen', tagged: false }],
    ];

    it.each(edges)('%s, on both endpoints: no 5xx', async (_name, options) => {
      await sendChecked(GENERATE, { html: TINY, ...options });
      await sendChecked(BATCH, { pdfs: [{ html: TINY, options }] });
    });
  });

  describe('20,000 levels of nesting', () => {
    const cases: [string, string, () => unknown][] = [
      ['generate', 'a 20,000-level array as the body', () => deepArray(DEEP)],
      ['generate', 'a 20,000-level array under an unknown field', () => ({ html: TINY, extra: deepArray(DEEP) })],
      ['generate', 'a 20,000-level object as html', () => ({ html: deepObject(DEEP) })],
      ['generate', 'a 20,000-level object as margin', () => ({ html: TINY, margin: deepObject(DEEP, 'top') })],
      ['generate', 'a 20,000-level __proto__ chain', () => ownObject([['html', TINY], ['__proto__', deepObject(DEEP, '__proto__')]])],
      ['generate', 'header_html of 20,000 nested <b>', () => ({ html: TINY, header_html: deepHtml('b', DEEP) })],
      ['generate', 'footer_html of 16,666 nested <div> (as deep as the length limit allows)', () => ({ html: TINY, footer_html: deepHtml('div', Math.floor((MAX_MARGIN_BOX_CHARS - 1) / 5)) })],
      ['generate', 'header_html of an <svg> with 16,000 nested <g>', () => ({ html: TINY, header_html: '<svg>' + deepHtml('g', 16_000) })],
      ['generate', 'html of 20,000 nested <div>', () => ({ html: deepHtml('div', DEEP) })],
      ['batch', 'a 20,000-level array as pdfs', () => ({ pdfs: deepArray(DEEP) })],
      ['batch', 'a batch item whose metadata nests 20,000 objects', () => ({ pdfs: [{ html: TINY, metadata: { deep: deepObject(DEEP) } }] })],
      ['batch', 'a batch item whose metadata nests 20,000 arrays', () => ({ pdfs: [{ html: TINY, metadata: { deep: deepArray(DEEP) } }] })],
      ['batch', 'a batch item whose metadata nests 3,000 objects', () => ({ pdfs: [{ html: TINY, metadata: { deep: deepObject(3_000) } }] })],
      ['batch', 'a batch item whose options are 20,000 levels deep', () => ({ pdfs: [{ html: TINY, options: deepObject(DEEP) }] })],
      ['batch', 'a batch item whose html is 20,000 levels deep', () => ({ pdfs: [{ html: deepArray(DEEP) }] })],
      ['batch', 'a batch item with header_html of 20,000 nested <b>', () => ({ pdfs: [{ html: TINY, options: { header_html: deepHtml('b', DEEP) } }] })],
      ['batch', 'good items beside one whose metadata nests 20,000 objects', () => ({ pdfs: [{ html: TINY }, { html: TINY, metadata: { deep: deepObject(DEEP) } }, { html: TINY, metadata: { reference_id: 'r3' } }] })],
    ];

    it.each(cases)('%s with %s: no 5xx, a refusal in the error shape', async (endpoint, _name, body) => {
      await sendChecked(endpoint === 'generate' ? GENERATE : BATCH, body());
    });
  });

  it('afterwards: quota_used and the PDFs stored for the key are exactly the PDFs handed back', async () => {
    // Act
    const usage = await fetch(`${apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${key.apiKey}` } });
    const { quota_used: quotaUsed } = (await usage.json()) as { quota_used: number };
    const stored = await storedPdfs(key.keyId);

    // Assess
    console.info(`request fuzz (seed ${SEED}): ${requests} requests, ${handedBack.size} PDFs handed back`);
    const expected = [...handedBack].sort();
    expect({ quotaUsed, objects: stored.objects, records: stored.records }).toEqual({ quotaUsed: expected.length, objects: expected, records: expected });
  });

  // Last: nothing here may leave a PDF behind, and a broken connection must not cost the count above.
  describe('bodies over the size limits', () => {
    it.each([
      ['6 MB (over the 5 MB body limit)', 6 * MB],
      ['11 MB (over the gateway limit)', 11 * MB],
    ])('a body of %s: 413 payload_too_large on both endpoints, and the next request is answered', async (_name, size) => {
      for (const path of [GENERATE, BATCH]) {
        const padding = 'x'.repeat(size);
        const body = path === GENERATE ? `{"html":"<p>${padding}</p>"}` : `{"pdfs":[{"html":"<p>${padding}</p>"}]}`;
        const answer = await send(path, body);
        checkAnswer(path, answer, '');
        expect(answer.status).toBe(413);
        expect(answer.body.error.code).toBe('payload_too_large');
        // A client keeps its connection open after a 4xx, unless the server says it closes it.
        const next = await send(GENERATE, '{}');
        expect(next.status, 'the request after the 413').toBe(400);
      }
    });
  });
});

