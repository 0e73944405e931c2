/**
 * Signatures' pure parts (lib/signatures/): a CSR signed through the key's digest signer, a chain
 * checked as a CA issued it, and a PDF signed PAdES-style, read back as a validator reads it: the
 * byte range covers the whole file but the /Contents hole, the CMS verifies against the test CA
 * (pkijs, and `openssl cms -verify`), and one changed byte inside the range breaks it.
 */
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, createPublicKey, privateEncrypt, constants, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pkijs from 'pkijs';
import { decodePDFRawStream, PDFArray, PDFDocument, PDFName, PDFRawStream, rgb, StandardFonts } from 'pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { ecdsaP256SignDigest } from '#lib/local/kms-standin.ts';
import { certificateRequest, checkChain, ChainProblem, selfSignedCertificate, type KeySpec, type SignDigest } from '#lib/signatures/certificates.ts';
import { CMS_OID } from '#lib/signatures/cms.ts';
import { SignedPdfTooLarge, signPdf } from '#lib/signatures/sign-pdf.ts';
import { fetchTimestampToken, TimestampFailure } from '#lib/signatures/timestamps.ts';
import { readPdfFacts } from '../support/pdf.ts';
import { readSignatureAppearance } from '../support/signature-appearance.ts';
import { createTestCa, readSignature, verifyCms } from '../support/test-ca.ts';
import { startTestTsa } from '../support/test-tsa.ts';

/** A key as KMS holds it: its public key out, a digest signer in. */
function kmsLikeKey(keySpec: KeySpec): { publicKey: Uint8Array; sign: SignDigest } {
  const pair = keySpec === 'ECC_NIST_P256' ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : generateKeyPairSync('rsa', { modulusLength: 3072 });
  const privateKey: KeyObject = pair.privateKey;
  const publicKey = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }));
  const digestInfo = Buffer.from('3031300d060960864801650304020105000420', 'hex');
  const sign: SignDigest = async (digest) =>
    new Uint8Array(keySpec === 'ECC_NIST_P256' ? ecdsaP256SignDigest(privateKey, Buffer.from(digest)) : privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([digestInfo, digest])));
  return { publicKey, sign };
}

async function samplePdf(useObjectStreams: boolean): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const text of ['Invoice 2026-0042', 'page two']) document.addPage([595, 842]).drawText(text, { x: 50, y: 780, font, size: 18 });
  return document.save({ useObjectStreams });
}

const work = mkdtempSync(join(tmpdir(), 'signatures-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function opensslVerifies(cms: Uint8Array, content: Uint8Array, caPem: string): boolean {
  writeFileSync(join(work, 'sig.der'), cms);
  writeFileSync(join(work, 'content.bin'), content);
  writeFileSync(join(work, 'ca.pem'), caPem);
  try {
    execFileSync('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', join(work, 'sig.der'), '-content', join(work, 'content.bin'), '-CAfile', join(work, 'ca.pem'), '-purpose', 'any', '-out', '/dev/null'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

describe('signing keys: CSR and chain', () => {
  it.each(['ECC_NIST_P256', 'RSA_3072'] as const)('a %s CSR is signed by the key and carries its subject; the CA-issued chain checks, a wrong one is refused with why', async (keySpec) => {
    const key = kmsLikeKey(keySpec);
    const csrPem = await certificateRequest({ subject: { common_name: 'Acme Invoicing', organization: 'Acme GmbH', country: 'DE', email: 'billing@acme.example' }, publicKey: key.publicKey, keySpec, sign: key.sign });
    expect(csrPem).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
    const ca = await createTestCa();
    const leafPem = await ca.issue(csrPem); // verifies the CSR's self-signature first

    const checked = await checkChain(leafPem + ca.certificatePem, key.publicKey, new Date());
    expect(checked.chain).toHaveLength(2);
    expect(checked.subject).toBe('C=DE, O=Acme GmbH, CN=Acme Invoicing, E=billing@acme.example');

    const other = kmsLikeKey('ECC_NIST_P256');
    await expect(checkChain(leafPem + ca.certificatePem, other.publicKey, new Date())).rejects.toThrow(/public key is not this signing key's/);
    await expect(checkChain(ca.certificatePem + leafPem, key.publicKey, new Date())).rejects.toThrow(ChainProblem);
    const otherCa = await createTestCa('Another CA');
    await expect(checkChain(leafPem + otherCa.certificatePem, key.publicKey, new Date())).rejects.toThrow(/issued by CN=pdf-api Test Root CA, but the next certificate is CN=Another CA/);
    const expired = await ca.issue(csrPem, { from: new Date(Date.now() - 3 * 86_400_000), until: new Date(Date.now() - 86_400_000) });
    await expect(checkChain(expired + ca.certificatePem, key.publicKey, new Date())).rejects.toThrow(/The leaf certificate expired on/);
    await expect(checkChain('not a certificate', key.publicKey, new Date())).rejects.toThrow(/no PEM certificate/);
  });

  it('a self-signed certificate for testing checks as a chain of one', async () => {
    const key = kmsLikeKey('ECC_NIST_P256');
    const now = new Date();
    const pem = await selfSignedCertificate({ subject: { common_name: 'Test Signer' }, publicKey: key.publicKey, keySpec: 'ECC_NIST_P256', sign: key.sign, now, days: 30 });
    const checked = await checkChain(pem, key.publicKey, now);
    expect(checked.subject).toBe('CN=Test Signer');
    expect(checked.notAfter.getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000 + 30 * 86_400_000);
  });
});

describe('signing a PDF (PAdES B-B)', () => {
  it.each([
    ['ECC_NIST_P256', false],
    ['RSA_3072', true],
  ] as const)('a %s signature (object streams: %s) covers the whole file but its hole, verifies against the CA, and breaks on one changed byte', async (keySpec, useObjectStreams) => {
    const key = kmsLikeKey(keySpec);
    const ca = await createTestCa();
    const leafPem = await ca.issue(await certificateRequest({ subject: { common_name: 'Acme Invoicing' }, publicKey: key.publicKey, keySpec, sign: key.sign }));
    const { chain } = await checkChain(leafPem + ca.certificatePem, key.publicKey, new Date());
    const original = await samplePdf(useObjectStreams);

    const signed = await signPdf(original, { keySpec, chain, sign: key.sign, signingTime: new Date('2026-11-28T09:00:00Z'), name: 'Acme Invoicing', reason: 'Invoice issued', location: 'Berlin', contactInfo: 'billing@acme.example' });

    // An incremental update: the original bytes are untouched at the start of the file.
    expect(Buffer.from(signed.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    const signature = readSignature(signed);
    expect(signature.byteRange[0]).toBe(0);
    expect(signature.byteRange[2] + signature.byteRange[3]).toBe(signed.length);
    expect(signature.dictionary).toContain('/SubFilter /ETSI.CAdES.detached');
    expect(signature.dictionary).toContain('/Reason (Invoice issued)');
    expect(signature.dictionary).toContain('/M (D:20261128090000Z)');

    const { verified, signedData } = await verifyCms(signature.cms, signature.signed, ca.certificatePem);
    expect(verified).toBe(true);
    expect(signedData.certificates).toHaveLength(2);
    const attributes = signedData.signerInfos[0]!.signedAttrs!.attributes.map((attribute) => attribute.type);
    expect(attributes).toEqual(expect.arrayContaining([CMS_OID.contentType, CMS_OID.messageDigest, CMS_OID.signingCertificateV2]));
    expect(attributes).not.toContain('1.2.840.113549.1.9.5'); // no signing-time: PAdES puts it in /M
    expect(opensslVerifies(signature.cms, signature.signed, ca.certificatePem)).toBe(true);

    // Still a PDF any reader opens (pdf.js resolves the new objects beside the old object streams), with its pages and a signature field.
    expect((await readPdfFacts(signed)).pageTexts).toEqual(['Invoice 2026-0042', 'page two']);
    const reopened = await PDFDocument.load(signed);
    expect(reopened.getPageCount()).toBe(2);
    expect(reopened.getForm().getFields().map((field) => field.constructor.name)).toEqual(['PDFSignature']);

    // One byte changed inside the signed range: the signature no longer holds.
    const tampered = signed.slice();
    const at = Buffer.from(tampered).indexOf('Invoice 2026');
    const target = at >= 0 ? at : 200;
    tampered[target] = tampered[target]! ^ 0x01;
    const broken = readSignature(tampered);
    expect((await verifyCms(broken.cms, broken.signed, ca.certificatePem)).verified).toBe(false);
    expect(opensslVerifies(broken.cms, broken.signed, ca.certificatePem)).toBe(false);
  });
});

describe('the size limit (MAX_PDF_BYTES) applies to the signed file', () => {
  it('a file under the limit that signing takes past it is refused before KMS signs; at its signed size it is signed', async () => {
    const key = kmsLikeKey('ECC_NIST_P256');
    let signatures = 0;
    const sign: SignDigest = (digest) => {
      signatures++;
      return key.sign(digest);
    };
    const ca = await createTestCa();
    const leafPem = await ca.issue(await certificateRequest({ subject: { common_name: 'Acme' }, publicKey: key.publicKey, keySpec: 'ECC_NIST_P256', sign: key.sign }));
    const { chain } = await checkChain(leafPem + ca.certificatePem, key.publicKey, new Date());
    const original = await samplePdf(false);
    const input = { keySpec: 'ECC_NIST_P256' as const, chain, sign, signingTime: new Date('2026-11-28T09:00:00Z') };
    const signedSize = (await signPdf(original, input)).length;
    expect(signatures).toBe(1);

    await expect(signPdf(original, { ...input, maxBytes: signedSize - 1 })).rejects.toThrow(new SignedPdfTooLarge(signedSize, signedSize - 1));
    expect(original.length).toBeLessThan(signedSize - 1); // the unsigned file was within the limit
    expect(signatures).toBe(1); // KMS was not asked
    expect(await signPdf(original, { ...input, maxBytes: signedSize })).toHaveLength(signedSize);
  });
});

describe('a visible signature', () => {
  it('lays the printed box on the page as the widget\'s appearance, its fonts and streams written into the update past every number the file uses', async () => {
    const key = kmsLikeKey('ECC_NIST_P256');
    const ca = await createTestCa();
    const leafPem = await ca.issue(await certificateRequest({ subject: { common_name: 'Acme' }, publicKey: key.publicKey, keySpec: 'ECC_NIST_P256', sign: key.sign }));
    const { chain } = await checkChain(leafPem + ca.certificatePem, key.publicKey, new Date());
    // The box as Chromium would print it (lib/render/box-stamp.ts): a page its size, a frame and text.
    const box = await PDFDocument.create();
    const font = await box.embedFont(StandardFonts.Helvetica);
    const boxPage = box.addPage([226.77, 70.87]);
    boxPage.drawRectangle({ x: 0.4, y: 0.4, width: 226, height: 70, borderColor: rgb(0.2, 0.3, 0.6), borderWidth: 0.8 });
    boxPage.drawText('Digitally signed by Acme', { x: 4, y: 56, font, size: 10 });
    const stamp = await box.save();
    const original = await samplePdf(true); // object streams: numbers pdf-lib does not count

    const signed = await signPdf(original, { keySpec: 'ECC_NIST_P256', chain, sign: key.sign, signingTime: new Date(), appearance: { pageIndex: 1, x: 56.69, y: 700, width: 226.77, height: 70.87, stamp } });

    expect(Buffer.from(signed.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    const signature = readSignature(signed);
    expect(signature.byteRange[2] + signature.byteRange[3]).toBe(signed.length);
    expect((await verifyCms(signature.cms, signature.signed, ca.certificatePem)).verified).toBe(true);
    const appearance = await readSignatureAppearance(signed);
    expect(appearance.bbox).toEqual([0, 0, 226.77, 70.87]);
    expect(appearance.rect).toEqual([56.69, 842 - 770.87, 56.69 + 226.77, 842 - 700].map((n) => Number(n.toFixed(2))));
    expect(appearance.fonts).toEqual(['Helvetica']);
    // The appearance draws what the box's page draws.
    const reopened = await PDFDocument.load(signed);
    const [field] = reopened.getForm().getFields();
    const form = reopened.context.lookup(field!.acroField.getWidgets()[0]!.getNormalAppearance()) as PDFRawStream;
    const stampPage = (await PDFDocument.load(stamp)).getPage(0).node;
    const stampContents = stampPage.lookup(PDFName.of('Contents'), PDFArray).asArray().map((ref) => stampPage.context.lookup(ref) as PDFRawStream);
    const text = (streams: PDFRawStream[]) => streams.map((stream) => Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1')).join('\n').replace(/\s+/g, ' ').trim();
    expect(text(stampContents)).toMatch(/ RG .* Tj /);
    expect(text([form])).toContain(text(stampContents));
    // The document's own objects still resolve (no new object took the number of one in an object stream), on the page the widget is on.
    expect((await readPdfFacts(signed)).pageTexts).toEqual(['Invoice 2026-0042', 'page two']);
    expect(reopened.getPage(1).node.Annots()?.size()).toBe(1);
  });
});

describe('time stamps (PAdES B-T)', () => {
  it('puts an RFC 3161 token over the signature value in the unsigned attributes, which openssl ts verifies against the TSA; a TSA that stalls or refuses fails with why', async () => {
    const tsa = await startTestTsa();
    try {
      const key = kmsLikeKey('ECC_NIST_P256');
      const ca = await createTestCa();
      const leafPem = await ca.issue(await certificateRequest({ subject: { common_name: 'Acme' }, publicKey: key.publicKey, keySpec: 'ECC_NIST_P256', sign: key.sign }));
      const { chain } = await checkChain(leafPem + ca.certificatePem, key.publicKey, new Date());

      const signed = await signPdf(await samplePdf(false), { keySpec: 'ECC_NIST_P256', chain, sign: key.sign, signingTime: new Date(), timestamp: (digest) => fetchTimestampToken(tsa.url, digest, 5_000) });

      const signature = readSignature(signed);
      const { verified, signedData } = await verifyCms(signature.cms, signature.signed, ca.certificatePem);
      expect(verified).toBe(true);
      const signer = signedData.signerInfos[0]!;
      const token = signer.unsignedAttrs!.attributes.find((attribute) => attribute.type === CMS_OID.signatureTimeStampToken)!;
      expect(token).toBeDefined();
      writeFileSync(join(work, 'token.der'), Buffer.from(token.values[0]!.toBER()));
      writeFileSync(join(work, 'tsa.pem'), tsa.certificatePem);
      const signatureValueDigest = createHash('sha256').update(Buffer.from(signer.signature.valueBlock.valueHexView)).digest('hex');
      const output = execFileSync('openssl', ['ts', '-verify', '-digest', signatureValueDigest, '-in', join(work, 'token.der'), '-token_in', '-CAfile', join(work, 'tsa.pem')], { encoding: 'utf8' });
      expect(output).toContain('Verification: OK');

      tsa.mode = 'stall';
      await expect(fetchTimestampToken(tsa.url, new Uint8Array(32), 300)).rejects.toThrow(new TimestampFailure('The time-stamp authority did not answer within 300 ms'));
      tsa.mode = 'refuse';
      await expect(fetchTimestampToken(tsa.url, new Uint8Array(32), 5_000)).rejects.toThrow(/refused the request \(PKIStatus 2\)/);
    } finally {
      await tsa.close();
    }
  });
});
