import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, download, generate, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

describe('POST /v1/pdf/generate', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('starter');
  });

  it('returns the PDF record with every field measured on the stored file', async () => {
    // Prepare
    const html = '<!doctype html><h1>Invoice 42</h1><p style="break-before:page">Second page</p>';
    const before = Date.now();

    // Act
    const { status, body } = await generate(key.apiKey, { html });

    // Assess
    expect(status).toBe(200);
    expect(body.id).toMatch(/^pdf_[0-9A-Za-z]{20,}$/);
    expect(body.format).toBe('A4');
    const bytes = await download(body.url);
    const pdf = await readPdf(bytes);
    expect(body.size).toBe(bytes.byteLength);
    expect(body.pages).toBe(2);
    expect(pdf.pageCount).toBe(2);
    expect(pdf.pages[0]?.text).toContain('Invoice 42');
    expect(pdf.pages[1]?.text).toContain('Second page');
    expect(Number.isInteger(body.generation_time_ms)).toBe(true);
    const created = Date.parse(body.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.expires_at) - created).toBe(30 * 86_400_000);
    expect(body.created_at).toMatch(/Z$/);
  });
});
