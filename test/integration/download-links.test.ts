/**
 * The download link and the PDF record endpoints: the link redirects to a short-lived S3 URL that
 * serves the very PDF described by the record; forged, expired and deleted links never do.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { signDownloadLink } from '#lib/storage/links.ts';
import { apiUrl, createKey, expectApiError, generate, request, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const PDF_MAGIC = '%PDF-';

async function fetchBytes(url: string): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()), type: response.headers.get('content-type') };
}

const startsWithPdfMagic = (bytes: Uint8Array) => Buffer.from(bytes.subarray(0, PDF_MAGIC.length)).toString('latin1') === PDF_MAGIC;

/** The stack's own link-signing secret, from its data directory. */
const readSigningSecret = async () => (await readFile(join(inject('dataDir'), 'link-signing-secret'), 'utf8')).trim();

describe('download links and PDF records', () => {
  let owner: TestKey;
  let stranger: TestKey;
  beforeAll(async () => {
    [owner, stranger] = await Promise.all([createKey('pro'), createKey('pro')]);
  });

  /** A fresh PDF for the owner: its record as returned by generate. */
  async function newPdf(text = 'Stored document'): Promise<any> {
    const { status, body } = await generate(owner.apiKey, { html: `<!doctype html><h1>${text}</h1>` });
    expect(status).toBe(200);
    return body;
  }

  describe('GET the record url', () => {
    it('answers 302 to a short-lived presigned S3 URL that serves the PDF of the record', async () => {
      // Prepare
      const record = await newPdf('Quarterly report');

      // Act
      const link = await request('GET', record.url);
      const location = link.headers.get('location') ?? '';
      const file = await fetchBytes(location);

      // Assess
      expect(link.status).toBe(302);
      const presigned = new URL(location);
      expect(presigned.origin).not.toBe(new URL(apiUrl).origin);
      expect(presigned.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
      expect(Number(presigned.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(0);
      expect(Number(presigned.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(300);
      expect(file.status).toBe(200);
      expect(startsWithPdfMagic(file.bytes)).toBe(true);
      expect(file.bytes.byteLength).toBe(record.size);
      const pdf = await readPdf(file.bytes);
      expect(pdf.pageCount).toBe(record.pages);
      expect(pdf.text).toContain('Quarterly report');
    });

    it('works without any API key, and keeps working for repeated downloads', async () => {
      // Prepare
      const record = await newPdf();

      // Act
      const first = await fetch(record.url);
      const second = await fetch(record.url);

      // Assess
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      const [a, b] = [new Uint8Array(await first.arrayBuffer()), new Uint8Array(await second.arrayBuffer())];
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
      expect(a.byteLength).toBe(record.size);
    });

    it('a tampered signature is 404 not_found', async () => {
      // Prepare
      const record = await newPdf();
      const url = new URL(record.url);
      const signature = url.searchParams.get('signature') ?? '';
      url.searchParams.set('signature', (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1));

      // Act
      const response = await request('GET', url.href);

      // Assess
      expectApiError(response, 404, 'not_found');
      expect(response.headers.get('location')).toBeNull();
    });

    it('a link whose expiry was pushed later without re-signing is 404 not_found', async () => {
      // Prepare
      const record = await newPdf();
      const url = new URL(record.url);
      url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 365 * 86_400));

      // Act
      const response = await request('GET', url.href);

      // Assess
      expectApiError(response, 404, 'not_found');
    });

    it("a genuine signature moved to another PDF's id is 404 not_found", async () => {
      // Prepare
      const [mine, other] = await Promise.all([newPdf('Mine'), newPdf('Other')]);
      const url = new URL(mine.url);
      url.pathname = url.pathname.replace(mine.id, other.id);

      // Act
      const response = await request('GET', url.href);

      // Assess
      expectApiError(response, 404, 'not_found');
    });

    it.each([
      ['without a signature', (url: URL) => url.searchParams.delete('signature')],
      ['without an expiry', (url: URL) => url.searchParams.delete('expires')],
    ])('a link %s is 404 not_found', async (_what, damage) => {
      // Prepare
      const record = await newPdf();
      const url = new URL(record.url);
      damage(url);

      // Act
      const response = await request('GET', url.href);

      // Assess
      expectApiError(response, 404, 'not_found');
    });

    it('a genuinely signed link past its expiry is 410 link_expired', async () => {
      // Prepare: sign with the stack's own secret, as the service would, but an hour in the past.
      const record = await newPdf();
      const expired = signDownloadLink({
        baseUrl: apiUrl,
        pdfId: record.id,
        expiresAt: new Date(Date.now() - 3_600_000),
        secret: await readSigningSecret(),
      });

      // Act
      const response = await request('GET', expired);

      // Assess
      expectApiError(response, 410, 'link_expired');
      expect(response.headers.get('location')).toBeNull();
    });

    it('a genuinely signed link for an id that never existed is 404 not_found', async () => {
      // Prepare
      const forged = signDownloadLink({
        baseUrl: apiUrl,
        pdfId: 'pdf_' + 'x'.repeat(24),
        expiresAt: new Date(Date.now() + 3_600_000),
        secret: await readSigningSecret(),
      });

      // Act
      const response = await request('GET', forged);

      // Assess
      expectApiError(response, 404, 'not_found');
    });
  });

  describe('GET /v1/pdf/{id}', () => {
    it("returns the owner's record with a working link", async () => {
      // Prepare
      const created = await newPdf('Fetch me again');

      // Act
      const response = await request('GET', `/v1/pdf/${created.id}`, { apiKey: owner.apiKey });

      // Assess
      expect(response.status).toBe(200);
      const { url, ...fields } = response.body;
      const { url: _createdUrl, ...createdFields } = created;
      expect(fields).toEqual(createdFields);
      const file = await fetch(url);
      expect(file.status).toBe(200);
      expect((await readPdf(new Uint8Array(await file.arrayBuffer()))).text).toContain('Fetch me again');
    });

    it("is 404 not_found for another key's PDF, exactly as for a missing one", async () => {
      // Prepare
      const created = await newPdf();

      // Act
      const foreign = await request('GET', `/v1/pdf/${created.id}`, { apiKey: stranger.apiKey });
      const missing = await request('GET', `/v1/pdf/pdf_${'0'.repeat(24)}`, { apiKey: stranger.apiKey });

      // Assess
      const foreignMessage = expectApiError(foreign, 404, 'not_found', { secrets: [stranger.apiKey] });
      expect(foreignMessage).toBe(expectApiError(missing, 404, 'not_found'));
      expect(foreign.text).not.toContain(created.url);
    });

    it('is 401 unauthorized without a key', async () => {
      // Prepare
      const created = await newPdf();

      // Act
      const response = await request('GET', `/v1/pdf/${created.id}`);

      // Assess
      expectApiError(response, 401, 'unauthorized');
    });
  });

  describe('DELETE /v1/pdf/{id}', () => {
    it('answers 204, after which the link, the record and an earlier S3 URL no longer give the PDF', async () => {
      // Prepare
      const created = await newPdf('Delete me');
      const before = await request('GET', created.url);
      const earlierS3Url = before.headers.get('location') ?? '';
      expect(before.status).toBe(302);

      // Act
      const deleted = await request('DELETE', `/v1/pdf/${created.id}`, { apiKey: owner.apiKey });

      // Assess
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const link = await request('GET', created.url);
      expect([404, 410]).toContain(link.status);
      expectApiError(link, link.status, link.status === 404 ? 'not_found' : 'link_expired');
      expect(link.headers.get('location')).toBeNull();
      expectApiError(await request('GET', `/v1/pdf/${created.id}`, { apiKey: owner.apiKey }), 404, 'not_found');
      const stale = await fetchBytes(earlierS3Url);
      expect(stale.status).not.toBe(200);
      expect(startsWithPdfMagic(stale.bytes)).toBe(false);
    });

    it('a second DELETE is 404 not_found', async () => {
      // Prepare
      const created = await newPdf();
      expect((await request('DELETE', `/v1/pdf/${created.id}`, { apiKey: owner.apiKey })).status).toBe(204);

      // Act
      const again = await request('DELETE', `/v1/pdf/${created.id}`, { apiKey: owner.apiKey });

      // Assess
      expectApiError(again, 404, 'not_found');
    });

    it("another key cannot delete the owner's PDF: 404, and the PDF stays downloadable", async () => {
      // Prepare
      const created = await newPdf();

      // Act
      const response = await request('DELETE', `/v1/pdf/${created.id}`, { apiKey: stranger.apiKey });

      // Assess
      expectApiError(response, 404, 'not_found', { secrets: [stranger.apiKey] });
      const file = await fetch(created.url);
      expect(file.status).toBe(200);
      expect(new Uint8Array(await file.arrayBuffer()).byteLength).toBe(created.size);
    });
  });
});
