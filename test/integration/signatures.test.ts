/**
 * Signed PDFs through the local stack (shared/spec/beyond.md "Signatures"), as a customer meets
 * them: a signing key made in the KMS stand-in, its CSR issued by a CA, the chain uploaded, then
 * PDFs signed through generate, a batch, a template and an async job, each read back as a validator
 * reads it (the byte range covers the file but the hole, the CMS verifies against the CA, a time
 * stamp from the test TSA). Another key's signing key is 404 everywhere; a failed signature is
 * never charged. On the shared test stack, whose SIGNATURE_TSA_URL is the test TSA (global-setup.ts).
 */
import { PDFDocument, PDFHexString } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { apiUrl, createKey, download, expectApiError, request, type ApiResponse } from '../support/api.ts';
import { readPdfFacts } from '../support/pdf.ts';
import { readPdfText } from '../support/pdf-text.ts';
import { readSignatureAppearance } from '../support/signature-appearance.ts';
import { createTestCa, readSignature, verifyCms, type TestCa } from '../support/test-ca.ts';
import { setTsaMode } from '../support/test-tsa.ts';

const SIGNATURE_TIME_STAMP_TOKEN = '1.2.840.113549.1.9.16.2.14';
/** A visible box's own text: longer than its small box is wide, and a line in Arabic. */
const BOX_TEXT = 'Signed for Acme Trading Company International Holdings GmbH & Co. KG, Berlin\nعقد موقع';

let ca: TestCa;
let owner: string;
let stranger: string;
let freeKey: string;
let signingKeyId: string;

const call = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
  request(method, apiUrl + path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

/** What a validator checks of a signed PDF: the range, the CMS against the CA; the time stamp when asked. */
async function expectValidSignature(bytes: Uint8Array, { timestamped = false } = {}) {
  const signature = readSignature(bytes);
  expect(signature.byteRange[0]).toBe(0);
  expect(signature.byteRange[2] + signature.byteRange[3]).toBe(bytes.length);
  expect(signature.dictionary).toContain('/SubFilter /ETSI.CAdES.detached');
  const { verified, signedData } = await verifyCms(signature.cms, signature.signed, ca.certificatePem);
  expect(verified).toBe(true);
  const unsigned = signedData.signerInfos[0]!.unsignedAttrs?.attributes.map((attribute) => attribute.type) ?? [];
  expect(unsigned.includes(SIGNATURE_TIME_STAMP_TOKEN)).toBe(timestamped);
  // One changed byte inside the signed range: no longer valid.
  const tampered = bytes.slice();
  tampered[Math.floor(signature.byteRange[1] / 2)]! ^= 0x20;
  const broken = readSignature(tampered);
  expect((await verifyCms(broken.cms, broken.signed, ca.certificatePem)).verified).toBe(false);
  return signature;
}

/** The key's quota used this month (GET /v1/usage). */
const quotaUsed = async (apiKey: string) => (await call('GET', '/v1/usage', apiKey)).body.quota_used as number;

beforeAll(async () => {
  ca = await createTestCa();
  [owner, stranger, freeKey] = (await Promise.all([createKey('pro'), createKey('starter'), createKey('free')])).map((key) => key.apiKey) as [string, string, string];
});

describe('signing keys', () => {
  it('creates a key in KMS with a CSR, takes the CA-issued chain, refuses a wrong one, and hides it from every other key', async () => {
    const created = await call('POST', '/v1/signing-keys', owner, { subject: { common_name: 'Acme Invoicing', organization: 'Acme GmbH', country: 'DE' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ key_spec: 'ECC_NIST_P256', status: 'pending_certificate', csr_pem: expect.stringMatching(/^-----BEGIN CERTIFICATE REQUEST-----/) });
    signingKeyId = created.body.signing_key_id;
    expect(created.headers.get('location')).toMatch(new RegExp(`/v1/signing-keys/${signingKeyId}$`));

    // Not ready yet: 409 with what to do, nothing charged.
    const early = await call('POST', '/v1/pdf/generate', owner, { html: '<p>too early</p>', signature: { signing_key_id: signingKeyId } });
    expect(expectApiError(early, 409, 'signing_key_not_ready')).toContain(`PUT /v1/signing-keys/${signingKeyId}/certificate`);

    const otherCa = await createTestCa('Some Other CA');
    const wrong = await call('PUT', `/v1/signing-keys/${signingKeyId}/certificate`, owner, { certificate_chain_pem: (await otherCa.issue(created.body.csr_pem)) + ca.certificatePem });
    expect(expectApiError(wrong, 400, 'invalid_request')).toContain('issued by CN=Some Other CA');

    const leaf = await ca.issue(created.body.csr_pem); // the stand-in's KMS signature on the CSR verifies
    const uploaded = await call('PUT', `/v1/signing-keys/${signingKeyId}/certificate`, owner, { certificate_chain_pem: leaf + ca.certificatePem });
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body).toMatchObject({ signing_key_id: signingKeyId, status: 'active', not_after: expect.any(String), certificate_pem: leaf });

    const listed = await call('GET', '/v1/signing-keys', owner);
    expect(listed.body.data.map((key: { signing_key_id: string }) => key.signing_key_id)).toEqual([signingKeyId]);
    expect(JSON.stringify(listed.body)).not.toContain('arn:aws:kms');

    // Another key never sees, uses or learns of it.
    expectApiError(await call('GET', `/v1/signing-keys/${signingKeyId}`, stranger), 404, 'signing_key_not_found');
    expectApiError(await call('DELETE', `/v1/signing-keys/${signingKeyId}`, stranger), 404, 'signing_key_not_found');
    expect((await call('GET', '/v1/signing-keys', stranger)).body.data).toEqual([]);
    expectApiError(await call('POST', '/v1/pdf/generate', stranger, { html: '<p>not mine</p>', signature: { signing_key_id: signingKeyId } }), 404, 'signing_key_not_found');
    expect(await quotaUsed(stranger)).toBe(0);
    expect(await quotaUsed(owner)).toBe(0);
  });

  it('a free key keeps one self-signed key (active at once), no second; deleted, it signs nothing more', async () => {
    const own = await call('POST', '/v1/signing-keys', freeKey, { subject: { common_name: 'Free Tester' }, key_spec: 'RSA_3072', self_signed: true });
    expect(own.status, own.text).toBe(201);
    expect(own.body).toMatchObject({ key_spec: 'RSA_3072', status: 'active', certificate_pem: expect.stringMatching(/^-----BEGIN CERTIFICATE-----/) });
    expectApiError(await call('POST', '/v1/signing-keys', freeKey, { subject: { common_name: 'Second' } }), 403, 'signing_key_limit_exceeded');

    const signed = await call('POST', '/v1/pdf/generate', freeKey, { html: '<p>self-signed</p>', signature: { signing_key_id: own.body.signing_key_id } });
    expect(signed.status, signed.text).toBe(200);
    const selfSigned = readSignature(await download(signed.body.url));
    expect(selfSigned.dictionary).toContain('/Name (Free Tester)');
    expect((await verifyCms(selfSigned.cms, selfSigned.signed, own.body.certificate_pem, { selfSigned: true })).verified).toBe(true);

    expect((await call('DELETE', `/v1/signing-keys/${own.body.signing_key_id}`, freeKey)).status).toBe(204);
    expectApiError(await call('POST', '/v1/pdf/generate', freeKey, { html: '<p>after delete</p>', signature: { signing_key_id: own.body.signing_key_id } }), 404, 'signing_key_not_found');
    expect(await quotaUsed(freeKey)).toBe(1);
  });
});

describe('signed documents', () => {
  it('generate: watermark and metadata first, then a visible, time-stamped PAdES signature whose box shows any script; the record says signed', async () => {
    const reason = 'விலைப்பட்டியல் வழங்கப்பட்டது'; // Tamil: "invoice issued"
    const location = 'دبي'; // Arabic: Dubai
    const made = await call('POST', '/v1/pdf/generate', owner, {
      html: '<h1>Invoice 2026-0042</h1><p>Total: 1,234.00 EUR</p>',
      metadata_pdf: { title: 'Invoice 2026-0042' },
      watermark: { text: 'PAID' },
      signature: { signing_key_id: signingKeyId, reason, location, timestamp: true, visible: { page: 1, x: '20mm', y: '250mm', width: '80mm', height: '25mm' } },
    });
    expect(made.status, made.text).toBe(200);
    expect(made.body).toMatchObject({ signed: true, signing_key_id: signingKeyId });
    const bytes = await download(made.body.url);
    const signature = await expectValidSignature(bytes, { timestamped: true });
    expect(signature.dictionary).toContain(`/Reason ${PDFHexString.fromText(reason).toString()}`);
    expect(signature.dictionary).toContain('/Name (Acme Invoicing)');
    // What a reader shows: the finished document, and the signature's appearance on page 1.
    const facts = await readPdfFacts(bytes);
    expect(facts.info.Title).toBe('Invoice 2026-0042');
    expect(facts.pageTexts[0]).toContain('Invoice 2026-0042');
    const page = await (await getDocument({ data: bytes.slice(), verbosity: 0 }).promise).getPage(1);
    const [widget, ...others] = await page.getAnnotations();
    expect(others).toEqual([]);
    expect(widget).toMatchObject({ subtype: 'Widget', fieldType: 'Sig' });
    // 20 mm from the left, 250 mm from the top of an A4 page, 80 x 25 mm.
    const mm = 72 / 25.4;
    expect(widget.rect.map((n: number) => Math.round(n))).toEqual([20 * mm, 841.89 - 275 * mm, 100 * mm, 841.89 - 250 * mm].map(Math.round));
    // The box: drawn by Chromium with the bundled fonts, its text read back through the fonts'
    // ToUnicode maps as a user copies it; the time it shows is the signature's /M.
    const appearance = await readSignatureAppearance(bytes);
    expect(appearance.bbox.map(Math.round)).toEqual([0, 0, 80 * mm, 25 * mm].map(Math.round));
    const fontNames = appearance.fonts.join(' ');
    for (const family of ['NotoSans-', 'NotoSansTamil-', 'NotoSansArabic-']) expect(fontNames).toContain(family);
    const [, y, mo, d, h, mi, sec] = /\/M \(D:(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z\)/.exec(signature.dictionary)!;
    const boxText = (await readPdfText(appearance.flattened)).at(-1)!.text;
    expect(boxText.split('\n')).toEqual(['Digitally signed by Acme Invoicing', `Date: ${y}-${mo}-${d} ${h}:${mi}:${sec} UTC`, `Reason: ${reason}`, `Location: ${location}`]);
    const form = (await PDFDocument.load(bytes)).getForm().getFields();
    expect(form.map((field) => field.constructor.name)).toEqual(['PDFSignature']);
    expect(await quotaUsed(owner)).toBe(1);
  });

  it('refuses what cannot be signed, before anything is charged: with encryption (400), a TSA that does not answer (502)', async () => {
    const encrypted = await call('POST', '/v1/pdf/generate', owner, { html: '<p>x</p>', encryption: { owner_password: 'owner-secret' }, signature: { signing_key_id: signingKeyId } });
    expect(expectApiError(encrypted, 400, 'invalid_request')).toContain('signature and encryption cannot be combined');
    await setTsaMode(inject('tsaUrl'), 'stall');
    try {
      const stalled = await call('POST', '/v1/pdf/generate', owner, { html: '<p>needs a time stamp</p>', signature: { signing_key_id: signingKeyId, timestamp: true } });
      expect(expectApiError(stalled, 502, 'timestamp_failed')).toContain(`did not answer within ${inject('tsaTimeoutMs')} ms`);
    } finally {
      await setTsaMode(inject('tsaUrl'), 'answer');
    }
    expect(await quotaUsed(owner)).toBe(1);
    expect((await call('GET', '/v1/pdf?limit=100', owner)).body.data).toHaveLength(1);
  });

  it('a batch of 10 signs each item; an item naming another key’s signing key fails alone, uncharged', async () => {
    const batch = await call('POST', '/v1/pdf/batch', owner, {
      pdfs: [
        { html: '<p>Item one</p>', options: { signature: { signing_key_id: signingKeyId, reason: 'Batch', visible: { page: 1, x: '10mm', y: '10mm', width: '60mm', height: '12mm', text: BOX_TEXT } } } },
        ...Array.from({ length: 9 }, (_, i) => ({ html: `<p>Item ${i + 2}</p>`, options: { signature: { signing_key_id: signingKeyId } } })),
        { html: '<p>Foreign</p>', options: { signature: { signing_key_id: 'sk_doesnotexist0000000000' } } },
      ],
    });
    expect(batch.status, batch.text).toBe(200);
    const results = batch.body.results as { success: boolean; download_url: string }[];
    expect(results.at(-1)).toMatchObject({ success: false, error: { code: 'SIGNING_KEY_NOT_FOUND' } });
    const signed = await Promise.all(results.slice(0, 10).map((item) => download(item.download_url)));
    for (const bytes of signed) await expectValidSignature(bytes);
    const first = signed[0];
    // The caller's text in a small box: shrunk and wrapped to stay inside it; the Arabic line reads
    // right to left, from the box's right edge, the Latin one from its left.
    const { bbox, flattened } = await readSignatureAppearance(first!);
    const flat = await getDocument({ data: flattened, verbosity: 0 }).promise;
    const items = ((await (await flat.getPage(flat.numPages)).getTextContent()).items as { str: string; transform: number[]; width: number; height: number }[]).filter((item) => item.str.trim() !== '');
    expect(items.map((item) => item.str).join(' ')).toContain('Signed for Acme Trading');
    for (const item of items) {
      expect(item.transform[4]).toBeGreaterThanOrEqual(bbox[0]!);
      expect(item.transform[4]! + item.width).toBeLessThanOrEqual(bbox[2]!);
      expect(item.transform[5]).toBeGreaterThanOrEqual(bbox[1]!);
      expect(item.transform[5]! + item.height).toBeLessThanOrEqual(bbox[3]!);
    }
    // pdf.js reads Arabic glyph by glyph, in their contextual (presentation) forms.
    const arabicLine = items.filter((item) => item.transform[5] === items.find((one) => /[\u0600-\u06ff\ufb50-\ufdff\ufe70-\ufeff]/.test(one.str))!.transform[5]);
    const latinLine = items.filter((item) => item.transform[5] === items.find((one) => one.str.includes('Signed'))!.transform[5]);
    const frameAndPadding = 3.8; // 0.8 pt + 3 pt
    expect(bbox[2]! - Math.max(...arabicLine.map((item) => item.transform[4]! + item.width))).toBeLessThan(frameAndPadding + 1);
    expect(Math.min(...arabicLine.map((item) => item.transform[4]!))).toBeGreaterThan(bbox[2]! / 2);
    expect(Math.min(...latinLine.map((item) => item.transform[4]!)) - bbox[0]!).toBeLessThan(frameAndPadding + 1);
    expect(await quotaUsed(owner)).toBe(11);
  });

  it('a template whose options sign, and an async job, give signed PDFs too', async () => {
    const template = await call('POST', '/v1/templates', owner, { name: 'Signed receipt', html: '<h1>Receipt {{ number }}</h1>', options: { signature: { signing_key_id: signingKeyId, reason: 'Receipt' } } });
    expect(template.status, template.text).toBe(201);
    const fromTemplate = await call('POST', '/v1/pdf/generate', owner, { template_id: template.body.template_id, data: { number: 7 } });
    expect(fromTemplate.status, fromTemplate.text).toBe(200);
    expect(fromTemplate.body).toMatchObject({ signed: true, signing_key_id: signingKeyId });
    expect((await expectValidSignature(await download(fromTemplate.body.url))).dictionary).toContain('/Reason (Receipt)');

    const submitted = await call('POST', '/v1/pdf/generate', owner, { html: '<p>Later</p>', async: true, signature: { signing_key_id: signingKeyId } });
    expect(submitted.status, submitted.text).toBe(202);
    let job = await call('GET', `/v1/jobs/${submitted.body.job_id}`, owner);
    while (job.body.status === 'queued' || job.body.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 250)); // polling for the job's end, as a client does
      job = await call('GET', `/v1/jobs/${submitted.body.job_id}`, owner);
    }
    expect(job.body).toMatchObject({ status: 'succeeded', result: { signed: true, signing_key_id: signingKeyId } });
    await expectValidSignature(await download(job.body.result.url));
    expect(await quotaUsed(owner)).toBe(13);
  });

  it('a bulk job whose shared options sign: every line’s PDF is signed, charged as stored', async () => {
    const submitted = await call('POST', '/v1/pdf/bulk', owner, { items: [{ html: '<p>Bulk one</p>' }, { html: '<p>Bulk two</p>' }], options: { signature: { signing_key_id: signingKeyId, reason: 'Bulk' } } });
    expect(submitted.status, submitted.text).toBe(202);
    let job = await call('GET', `/v1/jobs/${submitted.body.job_id}`, owner);
    while (!job.body.completed_at) {
      await new Promise((resolve) => setTimeout(resolve, 250)); // polling for the job's end, as a client does
      job = await call('GET', `/v1/jobs/${submitted.body.job_id}`, owner);
    }
    expect(job.body).toMatchObject({ status: 'succeeded', total: 2, succeeded: 2, failed: 0 });
    const listed = (await call('GET', '/v1/pdf?limit=100', owner)).body.data as { url: string; signed?: boolean; signing_key_id?: string }[];
    expect(listed).toHaveLength(15);
    expect(listed.every((record) => record.signed === true && record.signing_key_id === signingKeyId)).toBe(true);
    const [newest] = listed;
    expect((await expectValidSignature(await download(newest!.url))).dictionary).toContain('/Reason (Bulk)');
    expect(await quotaUsed(owner)).toBe(15);
  });
});
