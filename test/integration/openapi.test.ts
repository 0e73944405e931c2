/**
 * The OpenAPI document against behaviour, through the local stack and real Chromium: the served
 * document is valid, every option it documents is accepted with the document's own example, its
 * examples work, and what the API answers (successes and errors alike) is what it documents.
 */
import { validate } from '@readme/openapi-parser';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { apiUrl, createKey, download, post, quotaUsed, request, withinOneRateWindow, type TestKey } from '../support/api.ts';
import { responseChecker } from '../support/openapi.ts';
import { readPdf } from '../support/pdf.ts';

const publicSite = inject('publicSite');

let document: any;
let expectDocumented: ReturnType<typeof responseChecker>;
let key: TestKey;

beforeAll(async () => {
  const response = await request('GET', '/v1/openapi.json');
  document = response.body;
  expectDocumented = responseChecker(document);
  key = await createKey('pro');
});

/**
 * A document that every documented example can hold true for: five pages (page_ranges "1-3, 5"),
 * the element wait_for_selector waits for, the flag wait_for_expression waits for, and headings
 * for the outline.
 */
const EXAMPLE_HTML = `<!doctype html><html><body>
<script>window.chartsReady = true</script>
<div id="chart" class="ready">chart</div>
${[1, 2, 3, 4, 5].map((n) => `<h1 style="break-after:page">Section ${n}</h1>`).join('\n')}
</body></html>`;

/** A value of an option as its documentation suggests: its example, else the non-default choice. */
function documentedValue(property: any): unknown {
  if (property.examples?.length) return property.examples[0];
  if (property.type === 'boolean') return !(property.default ?? false);
  if (property.enum) return property.enum.find((value: unknown) => value !== property.default);
  throw new Error(`no example for ${JSON.stringify(property).slice(0, 200)}`);
}

describe('GET /v1/openapi.json', () => {
  test('is served without a key, as JSON, valid OpenAPI 3.1, naming the address it was reached at', async () => {
    const response = await request('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: apiUrl }]);
    const result = await validate(structuredClone(document));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expectDocumented('getOpenApiDocument', response);
  });
});

describe('every documented option is accepted', () => {
  test('each option of DocumentOptions, with its documented example, renders in a batch item; the answer is the documented one', async () => {
    // Prepare: one item per option. Options for url documents get a url of the fixture site.
    const properties = document.components.schemas.DocumentOptions.properties as Record<string, any>;
    const names = Object.keys(properties);
    expect(names.length).toBeGreaterThan(25);
    // width and height are documented as a pair: each is sent with the other's example.
    const partner: Record<string, string> = { width: 'height', height: 'width' };
    // `image` is a picture's (a batch item with output: image), `css` a Markdown document's.
    const sourceOf = (name: string, urlOnly: boolean) =>
      urlOnly ? { url: `${publicSite}/page` } : name === 'css' ? { markdown: '# Example' } : name === 'image' ? { html: EXAMPLE_HTML, output: 'image' } : { html: EXAMPLE_HTML };
    // `signature` names a signing key: the caller's own, made for the example (self-signed); without
    // its time stamp, which signatures.test.ts tests against the shared test TSA while, at moments,
    // it makes that TSA stall for every caller.
    const signingKey = await post('/v1/signing-keys', { subject: { common_name: 'Example Ltd' }, self_signed: true }, key.apiKey);
    expect(signingKey.status, JSON.stringify(signingKey.body)).toBe(201);
    const valueOf = (name: string) =>
      name === 'signature' ? { ...(documentedValue(properties[name]) as object), signing_key_id: signingKey.body.signing_key_id, timestamp: false } : documentedValue(properties[name]);
    const items = names.map((name) => {
      const urlOnly = /^url only/.test(properties[name].description);
      const pair = partner[name];
      return {
        ...sourceOf(name, urlOnly),
        options: { [name]: valueOf(name), ...(pair && { [pair]: documentedValue(properties[pair]) }) },
        metadata: { option: name },
      };
    });

    // Act
    const response = await post('/v1/pdf/batch', { pdfs: items }, key.apiKey);

    // Assess: every item made a PDF, and the body is what the document describes.
    expect(response.status).toBe(200);
    const failures = response.body.results.flatMap((result: any, i: number) => (result.success ? [] : [`${names[i]}: ${result.error.code} ${result.error.message}`]));
    expect(failures).toEqual([]);
    expect(response.body.successful).toBe(names.length);
    expectDocumented('generateBatch', response);
    // page_ranges "1-3, 5" printed four of five pages: the example did what the document says.
    expect(response.body.results[names.indexOf('page_ranges')].pages).toBe(4);
  });

  test('the documented generate example makes the PDF it describes, and its record is the documented one', async () => {
    const example = document.components.schemas.GenerateRequest.examples[0];
    const response = await post('/v1/pdf/generate', example, key.apiKey);
    expect(response.status).toBe(200);
    expectDocumented('generatePdf', response);
    const pdf = await readPdf(await download(response.body.url));
    expect(pdf.pages[0]!.text).toContain('Invoice 2026-001');
    expect(response.body.format).toBe('A4');
  });

  test('the documented batch example works, with merge', async () => {
    const example = document.components.schemas.BatchRequest.examples[0];
    const response = await post('/v1/pdf/batch', { ...example, merge: true }, key.apiKey);
    expect(response.status).toBe(200);
    expect(response.body.successful).toBe(example.pdfs.length);
    expect(response.body.merged.pages).toBe(2);
    expectDocumented('generateBatch', response);
  });
});

describe('answers are the documented ones', () => {
  test('reading: usage, list, get, download, delete, health', async () => {
    const reader = await createKey('pro');
    await post('/v1/pdf/batch', { pdfs: [{ html: '<p>first</p>' }, { html: '<p>second</p>' }] }, reader.apiKey);
    const created = await post('/v1/pdf/generate', { html: '<p>to list</p>' }, reader.apiKey);
    const usage = await request('GET', '/v1/usage', { apiKey: reader.apiKey });
    expectDocumented('getUsage', usage);
    const list = await request('GET', '/v1/pdf?limit=2', { apiKey: reader.apiKey });
    expectDocumented('listPdfs', list);
    expect(list.body.data).toHaveLength(2);
    expect(typeof list.body.next_cursor).toBe('string');
    const one = await request('GET', `/v1/pdf/${created.body.id}`, { apiKey: reader.apiKey });
    expectDocumented('getPdf', one);
    const link = await request('GET', created.body.url);
    expectDocumented('downloadPdf', link);
    const deleted = await request('DELETE', `/v1/pdf/${created.body.id}`, { apiKey: reader.apiKey });
    expectDocumented('deletePdf', deleted);
    expectDocumented('getPdf', await request('GET', `/v1/pdf/${created.body.id}`, { apiKey: reader.apiKey }));
    expectDocumented('downloadPdf', await request('GET', created.body.url));
    expectDocumented('getHealth', await request('GET', '/health'));
  });

  test('refusals: 400, 401, 404, 413, 422, and 405 from any path, each in its documented shape', async () => {
    expectDocumented('generatePdf', await request('POST', '/v1/pdf/generate', { body: '{"html":"<p>x</p>"}' }));
    expectDocumented('generatePdf', await post('/v1/pdf/generate', { html: '<p>x</p>', format: 'A9' }, key.apiKey));
    expectDocumented('generatePdf', await post('/v1/pdf/generate', { html: '<p>x</p>', url: `${publicSite}/page` }, key.apiKey));
    expectDocumented('generatePdf', await post('/v1/pdf/generate', { url: `${publicSite}/not-found` }, key.apiKey));
    expectDocumented('generatePdf', await post('/v1/pdf/generate', { html: `<p>${'x'.repeat(6 * 1024 * 1024)}</p>` }, key.apiKey));
    expectDocumented('generateBatch', await post('/v1/pdf/batch', { pdfs: [] }, key.apiKey));
    expectDocumented('listPdfs', await request('GET', '/v1/pdf?limit=0', { apiKey: key.apiKey }));
    expectDocumented('getPdf', await request('GET', '/v1/pdf/pdf_doesnotexist00000000000', { apiKey: key.apiKey }));
    expectDocumented('getAsset', await request('GET', '/assets/no-such-asset.js'));

    const notAllowed = await request('DELETE', '/v1/usage', { apiKey: key.apiKey });
    expect(notAllowed.status).toBe(405);
    const checkAgainstComponent = responseChecker({
      paths: { '/x': { get: { operationId: 'any', responses: { 405: { content: { 'application/json': { schema: { $ref: '#/components/schemas/MethodNotAllowedError' } } } } } } } },
      components: document.components,
    } as any);
    checkAgainstComponent('any', notAllowed);
  });

  test('limits: batch_too_large, quota_exceeded and rate_limit_exceeded, each in its documented shape, charging nothing', async () => {
    const free = await createKey('free');
    const tooLarge = await post('/v1/pdf/batch', { pdfs: Array.from({ length: 11 }, () => ({ html: '<p>x</p>' })) }, free.apiKey);
    expect(tooLarge.body.error.code).toBe('batch_too_large');
    expectDocumented('generateBatch', tooLarge);

    const small = await createKey('pro', ['--monthly-quota', '1']);
    const overQuota = await post('/v1/pdf/batch', { pdfs: [{ html: '<p>1</p>' }, { html: '<p>2</p>' }] }, small.apiKey);
    expect(overQuota.body.error.code).toBe('quota_exceeded');
    expectDocumented('generateBatch', overQuota);
    expect(await quotaUsed(small)).toBe(0);

    const slow = await createKey('pro', ['--rate-limit', '1']);
    await withinOneRateWindow();
    expectDocumented('getUsage', await request('GET', '/v1/usage', { apiKey: slow.apiKey }));
    const limited = await request('GET', '/v1/usage', { apiKey: slow.apiKey });
    expect(limited.status).toBe(429);
    expectDocumented('getUsage', limited);
  });
});
