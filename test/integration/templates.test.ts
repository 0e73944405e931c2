/**
 * The template store through the local stack (shared/spec/beyond.md "Templates"): create, read,
 * list, version, delete, each scoped to its key; what is refused when saving and why; the tier's
 * limits; previews (a PDF answered, nothing stored or charged, a budget of their own).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { apiUrl, createKey, download, expectApiError, generate, quotaUsed, request, withinOneRateWindow, type ApiResponse, type TestKey } from '../support/api.ts';
import { findItem, readPdf } from '../support/pdf.ts';
import { storedTemplate } from '../support/stored-pdfs.ts';

const json = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
  request(method, path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

const GREETING = {
  name: 'Greeting',
  html: '<!doctype html><html><body><h1>Hello {{ person.name }}</h1><p>Order {{ order }}</p></body></html>',
  options: { format: 'A5' },
  data_schema: {
    type: 'object',
    required: ['person', 'order'],
    properties: { person: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, order: { type: 'integer' } },
  },
  sample_data: { person: { name: 'Sample Sam' }, order: 7 },
};

let key: TestKey;
let refusals: Promise<TestKey> | undefined;

beforeAll(async () => {
  key = await createKey('pro');
});

/** A template over 64 KB as JSON, whose versions keep their bodies in the bucket; `n` tells the versions apart. */
const largeTemplate = (n: number) => ({ name: `Large ${n}`, html: `<!doctype html><html><body><p>Version ${n}</p><!-- ${'x'.repeat(70_000)} --></body></html>` });

async function createTemplate(apiKey: string, body: Record<string, unknown> = GREETING): Promise<string> {
  const created = await json('POST', '/v1/templates', apiKey, body);
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text}`);
  return created.body.template_id as string;
}

describe('the template store', () => {
  it('creates a template as version 1, reads it back whole, and lists it', async () => {
    // Act
    const created = await json('POST', '/v1/templates', key.apiKey, GREETING);
    const id = created.body.template_id as string;
    const read = await json('GET', `/v1/templates/${id}`, key.apiKey);
    const listed = await json('GET', '/v1/templates?limit=100', key.apiKey);

    // Assess
    expect(created.status, created.text).toBe(201);
    expect(id).toMatch(/^tpl_[0-9A-Za-z]{20,}$/);
    expect(created.headers.get('location')).toMatch(new RegExp(`/v1/templates/${id}$`));
    expect(created.body).toMatchObject({ version: 1, latest_version: 1, name: 'Greeting', html: GREETING.html, options: GREETING.options, data_schema: GREETING.data_schema, sample_data: GREETING.sample_data });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect(listed.body.data).toContainEqual({ template_id: id, name: 'Greeting', version: 1, created_at: created.body.created_at, updated_at: created.body.updated_at });
  });

  it('saves a new version with PUT: the latest changes, the old one stays readable and renderable, a version that never was is 404', async () => {
    // Prepare
    const id = await createTemplate(key.apiKey);

    // Act
    const saved = await json('PUT', `/v1/templates/${id}`, key.apiKey, { ...GREETING, name: 'Greeting v2', html: '<h1>Good day {{ person.name }}</h1>' });
    const latest = await json('GET', `/v1/templates/${id}`, key.apiKey);
    const first = await json('GET', `/v1/templates/${id}?version=1`, key.apiKey);
    const never = await json('GET', `/v1/templates/${id}?version=3`, key.apiKey);
    const notANumber = await json('GET', `/v1/templates/${id}?version=two`, key.apiKey);

    // Assess
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ template_id: id, version: 2, latest_version: 2, name: 'Greeting v2' });
    expect(latest.body).toMatchObject({ version: 2, html: '<h1>Good day {{ person.name }}</h1>' });
    expect(first.body).toMatchObject({ version: 1, latest_version: 2, name: 'Greeting', html: GREETING.html });
    expect(expectApiError(never, 404, 'not_found')).toContain('no version 3');
    expect(expectApiError(notANumber, 400, 'invalid_request')).toContain('version');
  });

  it('gives each of 100 simultaneous saves a version of its own: every one 200, versions 2 to 101 with none lost, each read back as saved', async () => {
    // Prepare: an enterprise key keeps 500 versions, so every one stays readable
    const saver = await createKey('enterprise');
    const id = await createTemplate(saver.apiKey, { name: 'Race 0', html: '<p>save 0</p>' });

    // Act
    const saves = await Promise.all(
      Array.from({ length: 100 }, (_, i) => json('PUT', `/v1/templates/${id}`, saver.apiKey, { name: `Race ${i + 1}`, html: `<p>save ${i + 1}</p>` })),
    );

    // Assess
    expect(saves.map((save) => save.status)).toEqual(Array(100).fill(200));
    expect(saves.map((save) => save.body.version as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
    const latest = await json('GET', `/v1/templates/${id}`, saver.apiKey);
    expect(latest.body).toMatchObject({ version: 101, latest_version: 101, html: saves.find((save) => save.body.version === 101)!.body.html });
    const readBack = await Promise.all(saves.map((save) => json('GET', `/v1/templates/${id}?version=${save.body.version}`, saver.apiKey)));
    readBack.forEach((read, i) => expect(read.body).toMatchObject({ version: saves[i]!.body.version, name: saves[i]!.body.name, html: saves[i]!.body.html }));
    expect(new Set(readBack.map((read) => read.body.html)).size).toBe(100);
  });

  it('keeps exactly the tier’s newest versions however many large saves race, and a delete leaves none of their records or bodies', async () => {
    // Prepare: a free key keeps 10 versions (its rate limit raised for the saves); each version is
    // over 64 KB, so its body is an object in the bucket
    const keeper = await createKey('free', ['--rate-limit', '100']);
    const { versionsKept } = TEMPLATE_LIMITS.free;
    const id = await createTemplate(keeper.apiKey, largeTemplate(1));
    expect(await storedTemplate(keeper.keyId, id)).toMatchObject({ objects: [expect.any(String)], versions: [1] });

    // Act: versions 2 to 21 at once, twice as many as are kept
    const saves = await Promise.all(Array.from({ length: 2 * versionsKept }, (_, i) => json('PUT', `/v1/templates/${id}`, keeper.apiKey, largeTemplate(i + 2))));
    const kept = await storedTemplate(keeper.keyId, id);
    const oldestKeptVersion = 2 * versionsKept + 1 - versionsKept + 1;
    const oldestKept = await json('GET', `/v1/templates/${id}?version=${oldestKeptVersion}`, keeper.apiKey);
    const dropped = await json('GET', `/v1/templates/${id}?version=${oldestKeptVersion - 1}`, keeper.apiKey);
    const deleted = await json('DELETE', `/v1/templates/${id}`, keeper.apiKey);
    const afterDelete = await storedTemplate(keeper.keyId, id);

    // Assess
    expect(saves.map((save) => save.status)).toEqual(Array(2 * versionsKept).fill(200));
    expect(kept.versions).toEqual(Array.from({ length: versionsKept }, (_, i) => i + oldestKeptVersion));
    expect(kept.objects).toHaveLength(versionsKept);
    expect(oldestKept.status).toBe(200);
    expect(oldestKept.body.html).toBe(saves.find((save) => save.body.version === oldestKeptVersion)!.body.html);
    expectApiError(dropped, 404, 'not_found');
    expect(deleted.status).toBe(204);
    expect(afterDelete).toEqual({ objects: [], versions: [] });
  });

  it('leaves nothing of a large template whose saves race its delete: a save the delete overtook removes what it wrote', async () => {
    // Prepare
    const id = await createTemplate(key.apiKey, largeTemplate(1));

    // Act
    const [deleted, ...saves] = await Promise.all([
      json('DELETE', `/v1/templates/${id}`, key.apiKey),
      ...Array.from({ length: 10 }, (_, i) => json('PUT', `/v1/templates/${id}`, key.apiKey, largeTemplate(i + 2))),
    ]);

    // Assess: each save either came first (and the delete removed it) or found the template gone
    expect(deleted!.status).toBe(204);
    for (const save of saves) expect([200, 404], save.text).toContain(save.status);
    expect(await storedTemplate(key.keyId, id)).toEqual({ objects: [], versions: [] });
    expectApiError(await json('GET', `/v1/templates/${id}`, key.apiKey), 404, 'not_found');
  });

  it('lists page by page with signed cursors; a cursor of the PDF listing or another key is refused', async () => {
    // Prepare
    const mine = await createKey('pro');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createTemplate(mine.apiKey, { ...GREETING, name: `T${i}` }));
    await generate(mine.apiKey, { html: '<p>one</p>' });
    await generate(mine.apiKey, { html: '<p>two</p>' });

    // Act
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse = await json('GET', `/v1/templates?limit=2${cursor ? `&cursor=${cursor}` : ''}`, mine.apiKey);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((t: { template_id: string }) => t.template_id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    const firstPage = await json('GET', '/v1/templates?limit=1', mine.apiKey);
    const pdfPage = await json('GET', '/v1/pdf?limit=1', mine.apiKey);

    // Assess
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(2);
    expectApiError(await json('GET', `/v1/templates?cursor=${pdfPage.body.next_cursor}`, mine.apiKey), 400, 'invalid_request');
    expectApiError(await json('GET', `/v1/pdf?cursor=${firstPage.body.next_cursor}`, mine.apiKey), 400, 'invalid_request');
    expectApiError(await json('GET', `/v1/templates?cursor=${firstPage.body.next_cursor}`, key.apiKey), 400, 'invalid_request');
  });

  it.each([
    ['no name', { html: '<p>x</p>' }, 'name'],
    ['no html', { name: 'T' }, 'html'],
    ['an unknown field', { ...GREETING, colour: 'red' }, 'colour'],
    ['an option out of range', { ...GREETING, options: { format: 'A9' } }, 'options: format'],
    ['a url-only option', { ...GREETING, options: { user_agent: 'x' } }, 'options.user_agent'],
    ['a header inside options', { ...GREETING, options: { header_html: '<p>x</p>' } }, 'top level'],
    ['Liquid that does not parse', { ...GREETING, html: '<p>{% for x in items %}never closed</p>' }, 'html line 1'],
    ['a file include', { ...GREETING, footer_html: '{% include "/etc/passwd" %}' }, 'footer_html'],
    ['a data_schema that is not a schema', { ...GREETING, data_schema: { type: 'numbr' } }, 'data_schema'],
    ['a data_schema with a remote reference', { ...GREETING, data_schema: { $ref: 'https://example.com/schema.json' } }, 'https://example.com/schema.json'],
    ['sample_data that does not match data_schema', { ...GREETING, sample_data: { person: { name: 'Sam' }, order: 'seven' } }, 'sample_data does not match data_schema: /order: must be integer'],
  ])('refuses a template with %s: 400 naming the problem, nothing saved', async (_, body, named) => {
    // Prepare: a key that only ever sends refused templates.
    refusals ??= createKey('pro');
    const { apiKey } = await refusals;

    // Act
    const answer = await json('POST', '/v1/templates', apiKey, body);

    // Assess
    expect(expectApiError(answer, 400, 'invalid_request')).toContain(named);
    expect((await json('GET', '/v1/templates', apiKey)).body.data).toEqual([]);
  });

  it('keeps to the tier: a free key holds 10 templates (the 11th is 403 naming the limit, deleting one makes room), and 256 KB a template (413)', async () => {
    // Prepare: a free key with room for the requests this takes (its tier allows 10 a minute).
    const free = await createKey('free', ['--rate-limit', '100']);
    const limits = TEMPLATE_LIMITS.free;
    const ids = [];
    for (let i = 0; i < limits.maxTemplates; i++) ids.push(await createTemplate(free.apiKey, { name: `T${i}`, html: '<p>{{ i }}</p>' }));

    // Act
    const over = await json('POST', '/v1/templates', free.apiKey, { name: 'one too many', html: '<p>x</p>' });
    const deleted = await json('DELETE', `/v1/templates/${ids[0]}`, free.apiKey);
    const again = await json('POST', '/v1/templates', free.apiKey, { name: 'room again', html: '<p>x</p>' });
    const tooLarge = await json('PUT', `/v1/templates/${ids[1]}`, free.apiKey, { name: 'big', html: `<p>${'x'.repeat(limits.maxTemplateBytes)}</p>` });

    // Assess
    expectApiError(over, 403, 'template_limit_exceeded');
    expect(over.body.error.max_templates).toBe(limits.maxTemplates);
    expect(deleted.status).toBe(204);
    expect(again.status).toBe(201);
    expect(expectApiError(tooLarge, 413, 'payload_too_large')).toContain(String(limits.maxTemplateBytes));
    expect((await json('GET', `/v1/templates/${ids[1]}`, free.apiKey)).body.version).toBe(1);
  });

  it('stores a template larger than a record holds (in the bucket) and gives it back exactly, and renders from it', async () => {
    // Prepare: about 150 KB of HTML, over the 64 KB kept in the record.
    const rows = Array.from({ length: 3000 }, (_, i) => `<tr><td>Row ${i}</td><td>{{ label }}</td></tr>`).join('');
    const html = `<!doctype html><html><body><table>${rows}</table></body></html>`;

    // Act
    const id = await createTemplate(key.apiKey, { name: 'Large', html });
    const read = await json('GET', `/v1/templates/${id}`, key.apiKey);
    const made = await generate(key.apiKey, { template_id: id, data: { label: 'LargeLabel' }, page_ranges: '1' });

    // Assess
    expect(read.body.html).toBe(html);
    expect(made.status).toBe(200);
    const pdf = await readPdf(await download(made.body.url));
    expect(pdf.text).toContain('Row 0');
    expect(pdf.text).toContain('LargeLabel');
  });

  it('deletes: 204, then 404 for reading, saving, rendering, previewing and deleting again; gone from the list; PDFs made from it stay', async () => {
    // Prepare
    const id = await createTemplate(key.apiKey);
    const before = await generate(key.apiKey, { template_id: id, data: { person: { name: 'Kept' }, order: 1 } });
    expect(before.status).toBe(200);

    // Act
    const deleted = await json('DELETE', `/v1/templates/${id}`, key.apiKey);

    // Assess
    expect(deleted.status).toBe(204);
    expectApiError(await json('GET', `/v1/templates/${id}`, key.apiKey), 404, 'not_found');
    expectApiError(await json('PUT', `/v1/templates/${id}`, key.apiKey, GREETING), 404, 'not_found');
    expectApiError(await json('DELETE', `/v1/templates/${id}`, key.apiKey), 404, 'not_found');
    expectApiError(await json('POST', `/v1/templates/${id}/preview`, key.apiKey, {}), 404, 'not_found');
    const render = await generate(key.apiKey, { template_id: id, data: { person: { name: 'Refused' }, order: 2 } });
    expect(expectApiError(render, 404, 'not_found')).toContain(id);
    const listed = await json('GET', '/v1/templates?limit=100', key.apiKey);
    expect(listed.body.data.map((t: { template_id: string }) => t.template_id)).not.toContain(id);
    const kept = await readPdf(await download((await json('GET', `/v1/pdf/${before.body.id}`, key.apiKey)).body.url));
    expect(kept.text).toContain('Hello Kept');
  });

  it('is scoped to its key: another key can neither read, list, save, delete, preview nor render it', async () => {
    // Prepare
    const id = await createTemplate(key.apiKey);
    const other = await createKey('pro');
    const usedBefore = await quotaUsed(other);

    // Act
    const answers = {
      read: await json('GET', `/v1/templates/${id}`, other.apiKey),
      readVersion: await json('GET', `/v1/templates/${id}?version=1`, other.apiKey),
      save: await json('PUT', `/v1/templates/${id}`, other.apiKey, { ...GREETING, html: '<p>hijacked</p>' }),
      remove: await json('DELETE', `/v1/templates/${id}`, other.apiKey),
      preview: await json('POST', `/v1/templates/${id}/preview`, other.apiKey, {}),
      render: await generate(other.apiKey, { template_id: id, data: GREETING.sample_data }),
    };
    const theirList = await json('GET', '/v1/templates?limit=100', other.apiKey);
    const batch = await json('POST', '/v1/pdf/batch', other.apiKey, { pdfs: [{ template_id: id, data: GREETING.sample_data }] });

    // Assess
    for (const [what, answer] of Object.entries(answers)) expect(answer.status, what).toBe(404);
    expect(theirList.body.data).toEqual([]);
    expect(batch.body.results[0]).toMatchObject({ success: false, error: { code: 'TEMPLATE_NOT_FOUND' } });
    expect(await quotaUsed(other)).toBe(usedBefore);
    const mine = await json('GET', `/v1/templates/${id}`, key.apiKey);
    expect(mine.body).toMatchObject({ version: 1, html: GREETING.html });
  });
});

describe('previews', () => {
  it('answer the PDF itself, rendered with the sample data or with the data sent; nothing stored, listed or charged', async () => {
    // Prepare
    const previewer = await createKey('pro');
    const id = await createTemplate(previewer.apiKey);
    const usedBefore = await quotaUsed(previewer);

    // Act
    const sample = await fetch(`${apiUrl}/v1/templates/${id}/preview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${previewer.apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const sampleBytes = new Uint8Array(await sample.arrayBuffer());
    const given = await fetch(`${apiUrl}/v1/templates/${id}/preview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${previewer.apiKey}`, 'Content-Type': 'application/json', Accept: 'application/pdf' },
      body: JSON.stringify({ data: { person: { name: 'Given Gina' }, order: 9 } }),
    });
    const givenBytes = new Uint8Array(await given.arrayBuffer());

    // Assess
    expect(sample.status).toBe(200);
    expect(sample.headers.get('content-type')).toBe('application/pdf');
    expect(sample.headers.get('x-template-version')).toBe('1');
    expect(Buffer.from(sampleBytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect((await readPdf(sampleBytes)).text).toContain('Hello Sample Sam');
    const givenPdf = await readPdf(givenBytes);
    expect(givenPdf.text).toContain('Hello Given Gina');
    // The template's default options apply: A5 is 420 x 595 points.
    expect(Math.round(givenPdf.pages[0]!.width)).toBe(420);
    expect(await quotaUsed(previewer)).toBe(usedBefore);
    expect((await json('GET', '/v1/pdf?limit=100', previewer.apiKey)).body.data).toEqual([]);
  });

  it('are no free documents: a free key past its quota (402 on generate) previews 30 pages, each marked PREVIEW, uncharged and unlisted', async () => {
    // Prepare: a free key whose month allows one PDF, spent
    const free = await createKey('free', ['--monthly-quota', '1']);
    const id = await createTemplate(free.apiKey, {
      name: 'Report',
      html: '<!doctype html><html><body>{% for i in (1..30) %}<section{% unless forloop.first %} style="break-before: page"{% endunless %}>Report page {{ i }}</section>{% endfor %}</body></html>',
    });
    expect((await generate(free.apiKey, { template_id: id })).status).toBe(200);
    expectApiError(await generate(free.apiKey, { template_id: id }), 402, 'quota_exceeded');
    const usedBefore = await quotaUsed(free);

    // Act
    const preview = await fetch(`${apiUrl}/v1/templates/${id}/preview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${free.apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const pdf = await readPdf(new Uint8Array(await preview.arrayBuffer()));

    // Assess
    expect(preview.status).toBe(200);
    expect(preview.headers.get('x-pdf-pages')).toBe('30');
    expect(pdf.pageCount).toBe(30);
    pdf.pages.forEach((page, i) => {
      expect(page.text).toContain(`Report page ${i + 1}`);
      expect(page.text).toContain('PREVIEW');
    });
    expect(await quotaUsed(free)).toBe(usedBefore);
    expect((await json('GET', '/v1/pdf?limit=100', free.apiKey)).body.data).toHaveLength(1);
  });

  it('draw their mark as the watermark option draws "PREVIEW", in place of the template’s own watermark, which generate still draws', async () => {
    // Prepare: a template whose options carry a faint watermark of its own
    const id = await createTemplate(key.apiKey, { name: 'Draft', html: '<!doctype html><html><body><p>Quarterly numbers</p></body></html>', options: { watermark: { text: 'DRAFT', opacity: 0.05 } } });

    // Act
    const preview = await fetch(`${apiUrl}/v1/templates/${id}/preview`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.apiKey}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const previewed = (await readPdf(new Uint8Array(await preview.arrayBuffer()))).pages[0]!;
    const asOption = (await readPdf(await download((await generate(key.apiKey, { template_id: id, watermark: { text: 'PREVIEW' } })).body.url))).pages[0]!;
    const generated = (await readPdf(await download((await generate(key.apiKey, { template_id: id })).body.url))).pages[0]!;

    // Assess: the same text at the same place, size and angle as the option's stamp
    expect(preview.status).toBe(200);
    expect(previewed.text).toContain('Quarterly numbers');
    expect(previewed.text).not.toContain('DRAFT');
    const mark = findItem(previewed, 'PREVIEW');
    const option = findItem(asOption, 'PREVIEW');
    expect(mark.fontSize).toBeCloseTo(option.fontSize, 1);
    expect(mark.x).toBeCloseTo(option.x, 1);
    expect(mark.y).toBeCloseTo(option.y, 1);
    expect(mark.width).toBeCloseTo(option.width, 1);
    expect(generated.text).toContain('DRAFT');
    expect(generated.text).not.toContain('PREVIEW');
  });

  it('refuse data that does not match the schema (400 naming the path) and a template the engine cannot render (422), uncharged', async () => {
    // Prepare
    const id = await createTemplate(key.apiKey);
    const looping = await createTemplate(key.apiKey, { name: 'Loop', html: '{% for i in (1..1000000000) %}x{% endfor %}' });

    // Act
    const mismatch = await json('POST', `/v1/templates/${id}/preview`, key.apiKey, { data: { person: {}, order: 1 } });
    const failing = await json('POST', `/v1/templates/${looping}/preview`, key.apiKey, {});

    // Assess
    expect(expectApiError(mismatch, 400, 'invalid_request')).toContain('/person/name: is required');
    expectApiError(failing, 422, 'template_error');
  });

  it('have a per-minute budget of their own by tier: past it 429 with Retry-After, while the key’s other requests still pass', async () => {
    // Prepare: a free key's previews, spent by requests refused for their body (they count, and render nothing).
    const free = await createKey('free');
    const id = await createTemplate(free.apiKey, { name: 'Budget', html: '<p>{{ x }}</p>' });
    await withinOneRateWindow();
    for (let i = 0; i < TEMPLATE_LIMITS.free.previewsPerMinute; i++) {
      expect((await json('POST', `/v1/templates/${id}/preview`, free.apiKey, { version: 'not a number' })).status).toBe(400);
    }

    // Act
    const refused = await json('POST', `/v1/templates/${id}/preview`, free.apiKey, {});
    const usage = await json('GET', '/v1/usage', free.apiKey);

    // Assess
    expect(expectApiError(refused, 429, 'rate_limit_exceeded')).toContain('template previews');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(usage.status).toBe(200);
  });
});
