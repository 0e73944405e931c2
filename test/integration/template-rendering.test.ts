/**
 * Rendering stored templates with data through the local stack and real Chromium (shared/spec/
 * beyond.md "Templates"): on generate, in batch items and in asynchronous jobs; the PDF holds the
 * data, formatted for its locale; versions; data failing the schema and templates failing in the
 * engine, each uncharged; and a template's output printed exactly as the same HTML sent directly.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renderTemplate } from '#lib/templates/engine.ts';
import { createKey, download, expectApiError, generate, post, quotaUsed, request, type ApiResponse, type TestKey } from '../support/api.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';
import { rasterizePage } from '../support/raster.ts';

const json = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
  request(method, path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

/**
 * An invoice whose amounts and date are written in the data's `locale` (the engine's `currency` and
 * `date_format` filters), with the page number in its footer.
 */
const INVOICE = {
  name: 'Invoice',
  html: [
    '<!doctype html><html lang="en"><head><style>body { font-family: sans-serif; }</style></head><body>',
    '<h1>Invoice {{ number }}</h1>',
    '<p>Date: {{ issued | date_format }}</p>',
    '<table>{% for line in lines %}<tr><td>{{ line.item }}</td><td>{{ line.price | currency: currency }}</td></tr>{% endfor %}</table>',
    '<p>Total: {{ total | currency: currency }}</p>',
    '</body></html>',
  ].join(''),
  footer_html: '<div style="font-size:9px;width:100%;text-align:center">{{ number }}: page {{ pageNumber }} of {{ totalPages }}</div>',
  options: { format: 'A4', margin: '20mm' },
  data_schema: {
    type: 'object',
    required: ['number', 'locale', 'currency', 'issued', 'lines', 'total'],
    properties: {
      number: { type: 'string' },
      locale: { type: 'string' },
      currency: { type: 'string' },
      issued: { type: 'string' },
      lines: { type: 'array', items: { type: 'object', required: ['item', 'price'], properties: { item: { type: 'string' }, price: { type: 'number' } } } },
      total: { type: 'number' },
    },
  },
  sample_data: { number: 'S-1', locale: 'en-US', currency: 'USD', issued: '2026-03-05', lines: [{ item: 'Sample', price: 1 }], total: 1 },
};

const german = { number: 'R-2026-001', locale: 'de-DE', currency: 'EUR', issued: '2026-03-05', lines: [{ item: 'Beratung', price: 1200 }, { item: 'Reise', price: 80.5 }], total: 1280.5 };
const american = { number: 'US-2026-002', locale: 'en-US', currency: 'USD', issued: '2026-03-05', lines: [{ item: 'Consulting', price: 1200 }, { item: 'Travel', price: 80.5 }], total: 1280.5 };

let key: TestKey;
let invoice: string;

beforeAll(async () => {
  key = await createKey('pro');
  const created = await json('POST', '/v1/templates', key.apiKey, INVOICE);
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text}`);
  invoice = created.body.template_id;
});

const pdfText = async (url: string) => normalizeText((await readPdf(await download(url))).text);

describe('rendering a template with data', () => {
  it('generate: the PDF holds the data, formatted for de-DE and en-US, and its record names the template and version', async () => {
    // Act
    const de = await generate(key.apiKey, { template_id: invoice, data: german });
    const us = await generate(key.apiKey, { template_id: invoice, data: american, format: 'Letter' });

    // Assess
    expect(de.status).toBe(200);
    expect(de.body).toMatchObject({ template_id: invoice, template_version: 1, format: 'A4' });
    expect(us.body).toMatchObject({ template_id: invoice, template_version: 1, format: 'Letter' });
    const deText = await pdfText(de.body.url);
    expect(deText).toContain('Invoice R-2026-001');
    expect(deText).toContain('1.200,00 €');
    expect(deText).toContain('1.280,50 €');
    expect(deText).toContain('05.03.2026');
    expect(deText).toContain('R-2026-001: page 1 of 1');
    const usText = await pdfText(us.body.url);
    expect(usText).toContain('$1,200.00');
    expect(usText).toContain('$1,280.50');
    expect(usText).toContain('Mar 5, 2026');
    expect(usText).toContain('US-2026-002: page 1 of 1');
    const record = await json('GET', `/v1/pdf/${de.body.id}`, key.apiKey);
    expect(record.body).toMatchObject({ template_id: invoice, template_version: 1 });
  });

  it('batch: template items render per item beside an html item; a bad item fails alone with its code, uncharged', async () => {
    // Prepare
    const usedBefore = await quotaUsed(key);

    // Act
    const answer = await post(
      '/v1/pdf/batch',
      {
        pdfs: [
          { template_id: invoice, data: german, metadata: { reference_id: 'de' } },
          { html: '<p>Plain html item</p>' },
          { template_id: invoice, data: american, options: { format: 'A5' } },
          { template_id: invoice, data: { ...german, lines: [{ item: 'A', price: 1 }, { item: 'B', price: 'two' }] } },
          { template_id: 'tpl_doesnotexist0000000000000', data: german },
          { template_id: invoice, html: '<p>both</p>' },
        ],
      },
      key.apiKey,
    );

    // Assess
    expect(answer.status).toBe(200);
    const [de, plain, us, mismatch, unknown, both] = answer.body.results;
    expect(de).toMatchObject({ success: true, metadata: { reference_id: 'de' } });
    expect(plain.success).toBe(true);
    expect(us.success).toBe(true);
    expect(mismatch).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });
    expect(mismatch.error.message).toContain('/lines/1/price: must be number');
    expect(unknown).toMatchObject({ success: false, error: { code: 'TEMPLATE_NOT_FOUND' } });
    expect(both).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });
    expect(await pdfText(de.download_url)).toContain('1.280,50 €');
    expect(await pdfText(us.download_url)).toContain('$1,280.50');
    const usRecord = await json('GET', `/v1/pdf/${us.pdf_id}`, key.apiKey);
    expect(usRecord.body).toMatchObject({ template_id: invoice, template_version: 1, format: 'A5' });
    expect(await quotaUsed(key)).toBe(usedBefore + 3);
  });

  it('async job: generate with a template answers 202, and the job’s PDF holds the data', async () => {
    // Act
    const accepted = await generate(key.apiKey, { template_id: invoice, data: german, async: true });
    let job: ApiResponse;
    const giveUpAt = Date.now() + 60_000;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      job = await json('GET', `/v1/jobs/${accepted.body.job_id}`, key.apiKey);
    } while (job.body.status !== 'succeeded' && job.body.status !== 'failed' && Date.now() < giveUpAt);

    // Assess
    expect(accepted.status).toBe(202);
    expect(job.body.status).toBe('succeeded');
    expect(job.body.result).toMatchObject({ template_id: invoice, template_version: 1 });
    expect(await pdfText(job.body.result.url)).toContain('1.280,50 €');
  });

  it('a new version changes new renders, not the PDFs made before it; the old version stays renderable by number', async () => {
    // Prepare
    const created = await json('POST', '/v1/templates', key.apiKey, { name: 'Letter', html: '<h1>First wording for {{ who }}</h1>' });
    const id = created.body.template_id;
    const before = await generate(key.apiKey, { template_id: id, data: { who: 'Ada' } });

    // Act
    await json('PUT', `/v1/templates/${id}`, key.apiKey, { name: 'Letter', html: '<h1>Second wording for {{ who }}</h1>' });
    const after = await generate(key.apiKey, { template_id: id, data: { who: 'Ada' } });
    const pinned = await generate(key.apiKey, { template_id: id, template_version: 1, data: { who: 'Ada' } });

    // Assess
    expect(await pdfText(before.body.url)).toContain('First wording for Ada');
    expect(after.body.template_version).toBe(2);
    expect(await pdfText(after.body.url)).toContain('Second wording for Ada');
    expect(pinned.body.template_version).toBe(1);
    expect(await pdfText(pinned.body.url)).toContain('First wording for Ada');
    // The first PDF, downloaded again after the new version: unchanged.
    const again = await json('GET', `/v1/pdf/${before.body.id}`, key.apiKey);
    expect(again.body.template_version).toBe(1);
    expect(await pdfText(again.body.url)).toContain('First wording for Ada');
  });

  it('data failing the schema is 400 naming the JSON pointer; a template failing in the engine is 422; neither is charged', async () => {
    // Prepare
    const usedBefore = await quotaUsed(key);
    const looping = await json('POST', '/v1/templates', key.apiKey, { name: 'Loop', html: '{% for i in (1..1000000000) %}{{ i }}{% endfor %}' });

    // Act
    const wrongType = await generate(key.apiKey, { template_id: invoice, data: { ...german, lines: [german.lines[0], german.lines[1], { item: 'C', price: 3 }, { item: 'D', price: '4' }] } });
    const missing = await generate(key.apiKey, { template_id: invoice, data: { ...german, total: undefined } });
    const notAnObject = await generate(key.apiKey, { template_id: invoice, data: [1, 2] });
    const badLocale = await generate(key.apiKey, { template_id: invoice, data: { ...german, locale: 'not a locale!' } });
    const engine = await generate(key.apiKey, { template_id: looping.body.template_id });
    const unknownVersion = await generate(key.apiKey, { template_id: invoice, template_version: 99, data: german });

    // Assess
    expect(expectApiError(wrongType, 400, 'invalid_request')).toContain('/lines/3/price: must be number');
    expect(expectApiError(missing, 400, 'invalid_request')).toContain('/total: is required');
    expect(expectApiError(notAnObject, 400, 'invalid_request')).toContain('data must be a JSON object');
    expect(expectApiError(badLocale, 400, 'invalid_request')).toContain('data.locale');
    expectApiError(engine, 422, 'template_error');
    expect(expectApiError(unknownVersion, 404, 'not_found')).toContain('version 99');
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('merges the template’s options under the request’s: the request wins option by option', async () => {
    // Prepare
    const created = await json('POST', '/v1/templates', key.apiKey, { name: 'Landscape', html: '<p>{{ x }}</p>', options: { format: 'A5', orientation: 'landscape' } });

    // Act
    const defaults = await generate(key.apiKey, { template_id: created.body.template_id, data: { x: 'defaults' } });
    const overridden = await generate(key.apiKey, { template_id: created.body.template_id, data: { x: 'overridden' }, orientation: 'portrait' });

    // Assess
    const landscape = (await readPdf(await download(defaults.body.url))).pages[0]!;
    expect(defaults.body.format).toBe('A5');
    expect(landscape.width).toBeGreaterThan(landscape.height);
    const portrait = (await readPdf(await download(overridden.body.url))).pages[0]!;
    expect(overridden.body.format).toBe('A5');
    expect(portrait.width).toBeLessThan(portrait.height);
  });

  it('replays the same request with an Idempotency-Key: same PDF, charged once', async () => {
    // Prepare
    const headers = { 'Idempotency-Key': `tpl-${Date.now()}-${Math.random()}` };
    const usedBefore = await quotaUsed(key);

    // Act
    const first = await post('/v1/pdf/generate', { template_id: invoice, data: german }, key.apiKey, { headers });
    const replay = await post('/v1/pdf/generate', { template_id: invoice, data: german }, key.apiKey, { headers });
    const otherData = await post('/v1/pdf/generate', { template_id: invoice, data: american }, key.apiKey, { headers });

    // Assess
    expect(first.status).toBe(200);
    expect(replay.body.id).toBe(first.body.id);
    expect(otherData.status).toBe(422);
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });
});

describe('fidelity', () => {
  it('a template rendered with its sample data prints exactly as the same HTML sent directly: same text, pages and pixels', async () => {
    // Prepare: the HTML the engine makes of the template with its sample data, sent as html.
    const rendered = await renderTemplate({ html: INVOICE.html, footer_html: INVOICE.footer_html }, INVOICE.sample_data, { locale: INVOICE.sample_data.locale });
    const options = { ...INVOICE.options, footer_html: rendered.footer_html };

    // Act
    const fromTemplate = await generate(key.apiKey, { template_id: invoice, data: INVOICE.sample_data });
    const direct = await generate(key.apiKey, { html: rendered.html, ...options });

    // Assess
    const [templateBytes, directBytes] = await Promise.all([download(fromTemplate.body.url), download(direct.body.url)]);
    const [templatePdf, directPdf] = await Promise.all([readPdf(templateBytes), readPdf(directBytes)]);
    expect(templatePdf.pageCount).toBe(directPdf.pageCount);
    expect(templatePdf.text).toBe(directPdf.text);
    expect(templatePdf.text).toContain('$1.00');
    const [templateRaster, directRaster] = await Promise.all([rasterizePage(templateBytes), rasterizePage(directBytes)]);
    expect(templateRaster.width).toBe(directRaster.width);
    expect(Buffer.compare(Buffer.from(templateRaster.pixels), Buffer.from(directRaster.pixels))).toBe(0);
  });
});
