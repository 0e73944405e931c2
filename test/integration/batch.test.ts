/**
 * POST /v1/pdf/batch over HTTP: the batch function fans out to the render function through the
 * local Lambda Invoke endpoint, with real Chromium, S3 and DynamoDB behind it.
 */
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createKey, download, gatheringAt, post, quotaUsed, withinOneRateWindow, type TestKey } from '../support/api.ts';
import { GATHERING_IMAGE_PATH } from '../support/fixture-server.ts';
import { readPdf } from '../support/pdf.ts';

const batch = (key: TestKey, body: unknown) => post('/v1/pdf/batch', body, key.apiKey);

const invoiceHtml = (n: number, pages: number) =>
  `<!doctype html><h1>Invoice ${n}</h1>` +
  Array.from({ length: pages - 1 }, (_, p) => `<p style="break-before:page">Invoice ${n}, page ${p + 2}</p>`).join('');

describe('POST /v1/pdf/batch', () => {
  it('renders 100 mixed items: results in input order, failures per item, quota charged for successes only', async () => {
    // Prepare: every 10th item is malformed, every 10th+1 has a bad option, one item never finishes
    // loading, one comes from an allow-listed URL; the rest are 1 to 3 page invoices.
    const key = await createKey('pro');
    const publicSite = inject('publicSite');
    const expected: ({ ok: true; pages: number; text: string } | { ok: false; code: string })[] = [];
    const pdfs = Array.from({ length: 100 }, (_, i) => {
      if (i === 50) {
        expected.push({ ok: false, code: 'RENDER_TIMEOUT' });
        return { html: '<p>never done</p><script>while (true) {}</script>', metadata: { reference_id: 'r50' } };
      }
      if (i === 77) {
        expected.push({ ok: true, pages: 1, text: 'Fixture page from the public site' });
        return { url: `${publicSite}/page`, metadata: { reference_id: 'r77' } };
      }
      if (i % 10 === 3) {
        expected.push({ ok: false, code: 'INVALID_HTML' });
        return { html: '<div class="unterminated', metadata: { reference_id: `r${i}` } };
      }
      if (i % 10 === 4) {
        expected.push({ ok: false, code: 'INVALID_OPTIONS' });
        return { html: '<p>fine</p>', options: { format: 'A9' } };
      }
      const pages = (i % 3) + 1;
      expected.push({ ok: true, pages, text: `Invoice ${i}` });
      return { html: invoiceHtml(i, pages), options: { format: 'Letter', margin: { top: '10mm' } }, metadata: { filename: `inv-${i}.pdf`, reference_id: `r${i}` } };
    });

    // Act
    const { status, body } = await batch(key, { pdfs });

    // Assess: the envelope
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.total).toBe(100);
    expect(body.successful + body.failed).toBe(100);
    expect(body.successful).toBe(expected.filter((e) => e.ok).length);
    expect(Number.isInteger(body.processing_time_ms)).toBe(true);
    expect(body.results).toHaveLength(100);

    // Assess: each result in its input position
    for (const [i, want] of expected.entries()) {
      const result = body.results[i];
      if (!want.ok) {
        expect(result, `item ${i}`).toEqual({ success: false, error: { code: want.code, message: expect.any(String) } });
        continue;
      }
      expect(result.success, `item ${i}: ${JSON.stringify(result.error)}`).toBe(true);
      expect(result.pdf_id).toMatch(/^pdf_[0-9A-Za-z]{20,}$/);
      expect(result.metadata).toEqual(pdfs[i]!.metadata ?? {});
      expect(result.pages).toBe(want.pages);
    }

    // Assess: every PDF downloads and is the document that was asked for
    const successes = expected.flatMap((want, i) => (want.ok ? [{ want, result: body.results[i] }] : []));
    for (const { want, result } of successes) {
      const bytes = await download(result.download_url);
      const pdf = await readPdf(bytes);
      expect(bytes.byteLength).toBe(result.size_bytes);
      expect(pdf.pageCount).toBe(want.pages);
      expect(pdf.text).toContain(want.text);
    }
    expect(await quotaUsed(key)).toBe(body.successful);
  }, 120_000);

  it('applies every single-endpoint option to an item', async () => {
    // Prepare
    const key = await createKey('starter');

    // Act
    const { body } = await batch(key, {
      pdfs: [
        {
          html: invoiceHtml(1, 2),
          options: { format: 'A5', orientation: 'landscape', scale: 0.8, print_background: false, wait_for: 'networkidle0', footer_html: 'Page {{pageNumber}} of {{totalPages}}' },
        },
      ],
    });
    expect(body.results[0]).toMatchObject({ success: true, content_type: 'application/pdf' });
    const pdf = await readPdf(await download(body.results[0].download_url));

    // Assess: A5 landscape is 595 x 420 points
    expect(Math.round(pdf.pages[0]!.width)).toBeGreaterThan(590);
    expect(Math.round(pdf.pages[0]!.height)).toBeLessThan(425);
    expect(pdf.pages[1]?.text).toContain('Page 2 of 2');
  });

  it('runs items in parallel: its items are rendered at the same moment, not one after another', async () => {
    // Prepare: each document shows an image the fixture site sends only once two of them wait for
    // it at once (on any host: two render slots at least), so the batch succeeds quickly only if its
    // items run together. Serially, each would print without it after its resource wait, and the group would never gather.
    const key = await createKey('pro');
    const group = `batch-${Date.now()}`;
    const image = `${inject('publicSite')}${GATHERING_IMAGE_PATH}?group=${group}&of=2`;
    const pdfs = Array.from({ length: 4 }, (_, i) => ({ html: `<p>Item ${i}</p><img src="${image}&i=${i}">` }));

    // Act
    const { body } = await batch(key, { pdfs });

    // Assess
    expect(body.successful).toBe(4);
    expect((await gatheringAt(inject('publicSite'), group)).gathered).toBe(true);
  });

  it('refuses more items than the tier allows, rendering and charging nothing', async () => {
    // Prepare
    const free = await createKey('free');
    const starter = await createKey('starter');
    const items = (n: number) => Array.from({ length: n }, () => ({ html: '<p>x</p>' }));

    // Act
    const freeTooMany = await batch(free, { pdfs: items(11) });
    const starterTooMany = await batch(starter, { pdfs: items(51) });
    const starterMax = await batch(starter, { pdfs: items(50) });

    // Assess
    expect(freeTooMany.status).toBe(400);
    expect(freeTooMany.body.error).toEqual({ code: 'batch_too_large', message: expect.stringContaining('10'), max_batch_size: 10 });
    expect(starterTooMany.body.error.max_batch_size).toBe(50);
    expect(await quotaUsed(free)).toBe(0);
    expect(starterMax.status).toBe(200);
    expect(starterMax.body.successful).toBe(50);
  }, 120_000);

  it('answers 402 with quota_remaining when the batch does not fit, and renders nothing', async () => {
    // Prepare
    const key = await createKey('pro', ['--monthly-quota', '5']);
    await batch(key, { pdfs: [{ html: '<p>1</p>' }, { html: '<p>2</p>' }] });

    // Act
    const { status, body } = await batch(key, { pdfs: Array.from({ length: 4 }, () => ({ html: '<p>x</p>' })) });

    // Assess
    expect(status).toBe(402);
    expect(body.error.code).toBe('quota_exceeded');
    expect(body.error.quota_remaining).toBe(3);
    expect(body.error.quota_reset_at).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    expect(await quotaUsed(key)).toBe(2);
  });

  it.each([
    ['missing', {}],
    ['not an array', { pdfs: { html: '<p>x</p>' } }],
    ['empty', { pdfs: [] }],
  ])('answers 400 invalid_request when pdfs is %s', async (_case, body) => {
    // Prepare
    const key = await createKey('pro');

    // Act
    const answer = await batch(key, body);

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
    expect(answer.body.error.message).toContain('pdfs');
  });

  it('requires a valid key, and counts a batch as one request against the rate limit', async () => {
    // Prepare
    const key = await createKey('free', ['--rate-limit', '1']);
    await withinOneRateWindow();

    // Act
    const unauthenticated = await post('/v1/pdf/batch', { pdfs: [{ html: '<p>x</p>' }] });
    const first = await batch(key, { pdfs: Array.from({ length: 3 }, () => ({ html: '<p>x</p>' })) });
    const second = await batch(key, { pdfs: [{ html: '<p>x</p>' }] });

    // Assess
    expect(unauthenticated.status).toBe(401);
    expect(first.status).toBe(200);
    expect(first.body.successful).toBe(3);
    expect(second.status).toBe(429);
    expect(second.body.error.retry_after).toBeGreaterThanOrEqual(1);
  });
});
