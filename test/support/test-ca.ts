/**
 * A certificate authority for tests: issues a certificate for a signing key's CSR, as a customer's
 * CA would, so a chain of leaf and root can be uploaded and signatures checked against the root.
 * And readers of a signed PDF: its byte range, its CMS, and the CMS's verification by pkijs.
 */
import { webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

const subtle = webcrypto.subtle as unknown as SubtleCrypto;
pkijs.setEngine('node-webcrypto', new pkijs.CryptoEngine({ name: 'node-webcrypto', crypto: webcrypto as unknown as Crypto }));

const pem = (label: string, der: ArrayBuffer) => `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;
const der = (text: string) => {
  const base64 = text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return new Uint8Array(Buffer.from(base64, 'base64')).buffer as ArrayBuffer;
};

function name(commonName: string): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({ typesAndValues: [new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: commonName }) })] });
}

let serial = 1;
function extensions(ca: boolean): pkijs.Extension[] {
  const usage = new asn1js.BitString({ valueHex: new Uint8Array([ca ? 0x06 : 0xc0]).buffer, unusedBits: ca ? 1 : 6 });
  return [
    new pkijs.Extension({ extnID: '2.5.29.19', critical: true, extnValue: new pkijs.BasicConstraints({ cA: ca }).toSchema().toBER() }),
    new pkijs.Extension({ extnID: '2.5.29.15', critical: true, extnValue: usage.toBER() }),
  ];
}

export interface TestCa {
  readonly certificatePem: string;
  /** Issues a certificate for a PEM CSR, valid from `from` until `until`. */
  issue(csrPem: string, validity?: { from?: Date; until?: Date }): Promise<string>;
}

export async function createTestCa(commonName = 'pdf-api Test Root CA'): Promise<TestCa> {
  const keys = (await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const root = new pkijs.Certificate({ version: 2, serialNumber: new asn1js.Integer({ value: serial++ }), issuer: name(commonName), subject: name(commonName) });
  root.notBefore.value = new Date(Date.now() - 86_400_000);
  root.notAfter.value = new Date(Date.now() + 10 * 365 * 86_400_000);
  root.extensions = extensions(true);
  await root.subjectPublicKeyInfo.importKey(keys.publicKey);
  await root.sign(keys.privateKey, 'SHA-256');
  return {
    certificatePem: pem('CERTIFICATE', root.toSchema(true).toBER()),
    async issue(csrPem, validity = {}) {
      const request = pkijs.CertificationRequest.fromBER(der(csrPem));
      if (!(await request.verify())) throw new Error('the CSR is not signed by its own key');
      const leaf = new pkijs.Certificate({ version: 2, serialNumber: new asn1js.Integer({ value: 1000 + serial++ }), issuer: root.subject, subject: request.subject, subjectPublicKeyInfo: request.subjectPublicKeyInfo });
      leaf.notBefore.value = validity.from ?? new Date(Date.now() - 3_600_000);
      leaf.notAfter.value = validity.until ?? new Date(Date.now() + 365 * 86_400_000);
      leaf.extensions = extensions(false);
      await leaf.sign(keys.privateKey, 'SHA-256');
      return pem('CERTIFICATE', leaf.toSchema(true).toBER());
    },
  };
}

export interface SignatureInFile {
  readonly byteRange: readonly [number, number, number, number];
  /** The CMS, DER, without the hole's trailing zeros. */
  readonly cms: Uint8Array;
  /** The bytes the byte range covers. */
  readonly signed: Uint8Array;
  /** The signature dictionary's text (up to /Contents, and after it). */
  readonly dictionary: string;
}

/** The (last) signature of a PDF, read from its bytes as a validator reads it. */
export function readSignature(pdf: Uint8Array): SignatureInFile {
  const text = Buffer.from(pdf).toString('latin1');
  const at = text.lastIndexOf('/ByteRange');
  if (at < 0) throw new Error('no signature in this PDF');
  const match = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(text.slice(at));
  const byteRange = match!.slice(1, 5).map(Number) as [number, number, number, number];
  const hole = text.slice(byteRange[1], byteRange[2]);
  if (!/^<[0-9a-fA-F]+>$/.test(hole)) throw new Error('the byte range does not leave out exactly the /Contents hex string');
  const cmsHex = hole.slice(1, -1).replace(/(00)+$/, '');
  const cms = new Uint8Array(Buffer.from(cmsHex.length % 2 ? cmsHex + '0' : cmsHex, 'hex'));
  const signed = new Uint8Array(Buffer.concat([pdf.subarray(0, byteRange[1]), pdf.subarray(byteRange[2], byteRange[2] + byteRange[3])]));
  const start = text.lastIndexOf('obj', at);
  const end = text.indexOf('endobj', at);
  return { byteRange, cms, signed, dictionary: text.slice(start, byteRange[1]) + text.slice(byteRange[2], end) };
}

/**
 * Verifies a detached CMS over `data` with pkijs, the chain checked up to `trustedPem`. A self-signed
 * signer (`self_signed: true`) is no CA, which pkijs's chain check refuses as an anchor: its
 * certificate must then be exactly `trustedPem`, and the signature verify with it.
 */
export async function verifyCms(cms: Uint8Array, data: Uint8Array, trustedPem: string, { selfSigned = false } = {}): Promise<{ verified: boolean; signedData: pkijs.SignedData }> {
  const info = pkijs.ContentInfo.fromBER(cms.slice().buffer as ArrayBuffer);
  const signedData = new pkijs.SignedData({ schema: info.content });
  const trusted = pkijs.Certificate.fromBER(der(trustedPem));
  try {
    if (selfSigned) {
      const [only, ...more] = signedData.certificates ?? [];
      const same = more.length === 0 && only instanceof pkijs.Certificate && Buffer.from(only.toSchema().toBER()).equals(Buffer.from(der(trustedPem)));
      return { verified: same && Boolean(await signedData.verify({ signer: 0, data: data.slice().buffer as ArrayBuffer, checkChain: false })), signedData };
    }
    const verified = await signedData.verify({ signer: 0, data: data.slice().buffer as ArrayBuffer, checkChain: true, trustedCerts: [trusted] });
    return { verified: Boolean(verified), signedData };
  } catch {
    return { verified: false, signedData };
  }
}
