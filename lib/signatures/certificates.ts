/**
 * The X.509 side of signing keys (shared/spec/beyond.md "Signatures"), pure: a certificate request
 * (PKCS#10) and a self-signed certificate for a KMS key, each signed by a `SignDigest` (KMS Sign on a
 * SHA-256 digest: the private key never leaves KMS), and the checks of a chain a caller uploads.
 *
 * pkijs and asn1js (PeculiarVentures) do the ASN.1: one maintained family covering requests,
 * certificates, CMS and RFC 3161 time stamps, so no part of the signature is hand-encoded.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

export type KeySpec = 'ECC_NIST_P256' | 'RSA_3072';
export const KEY_SPECS: readonly KeySpec[] = ['ECC_NIST_P256', 'RSA_3072'];

/** Signs a SHA-256 digest with the key (KMS Sign, MessageType DIGEST): a DER ECDSA signature, or an RSA PKCS#1 v1.5 one. */
export type SignDigest = (digest: Uint8Array) => Promise<Uint8Array>;

export interface Subject {
  readonly common_name: string;
  readonly organization?: string | undefined;
  readonly country?: string | undefined;
  readonly email?: string | undefined;
}

export const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  country: '2.5.4.6',
  email: '1.2.840.113549.1.9.1',
  sha256: '2.16.840.1.101.3.4.2.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  rsaEncryption: '1.2.840.113549.1.1.1',
  keyUsage: '2.5.29.15',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
} as const;

/** The signature algorithm of a key spec, as X.509 and CMS name it. */
export function signatureAlgorithm(keySpec: KeySpec): pkijs.AlgorithmIdentifier {
  return keySpec === 'ECC_NIST_P256'
    ? new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSha256 })
    : new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256WithRsa, algorithmParams: new asn1js.Null() });
}

const sha256 = (bytes: ArrayBuffer | Uint8Array) => new Uint8Array(createHash('sha256').update(new Uint8Array(bytes)).digest());
const bufferOf = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

function distinguishedName(subject: Subject): pkijs.RelativeDistinguishedNames {
  const name = new pkijs.RelativeDistinguishedNames();
  if (subject.country) name.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: OID.country, value: new asn1js.PrintableString({ value: subject.country }) }));
  if (subject.organization) name.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: OID.organization, value: new asn1js.Utf8String({ value: subject.organization }) }));
  name.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: subject.common_name }) }));
  if (subject.email) name.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: OID.email, value: new asn1js.IA5String({ value: subject.email }) }));
  return name;
}

export function toPem(label: 'CERTIFICATE' | 'CERTIFICATE REQUEST', der: ArrayBuffer | Uint8Array): string {
  const base64 = Buffer.from(new Uint8Array(der)).toString('base64');
  return `-----BEGIN ${label}-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;
}

/** Every PEM block of `label` in `text`, as DER, in order. */
export function fromPem(text: string, label: 'CERTIFICATE' | 'CERTIFICATE REQUEST'): Uint8Array[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+?)-----END ${label}-----`, 'g');
  return [...text.matchAll(pattern)].map((match) => new Uint8Array(Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64')));
}

/** A PKCS#10 certificate request for the key whose public key (SubjectPublicKeyInfo, DER) is `publicKey`, signed by the key. */
export async function certificateRequest(input: { subject: Subject; publicKey: Uint8Array; keySpec: KeySpec; sign: SignDigest }): Promise<string> {
  const request = new pkijs.CertificationRequest({
    version: 0,
    subject: distinguishedName(input.subject),
    subjectPublicKeyInfo: pkijs.PublicKeyInfo.fromBER(bufferOf(input.publicKey)),
    signatureAlgorithm: signatureAlgorithm(input.keySpec),
  });
  // The CertificationRequestInfo: the first element of the whole request as encoded.
  const tbs = (request.toSchema(true) as asn1js.Sequence).valueBlock.value[0]!.toBER();
  const signature = await input.sign(sha256(tbs));
  request.signatureValue = new asn1js.BitString({ valueHex: bufferOf(signature) });
  return toPem('CERTIFICATE REQUEST', request.toSchema(true).toBER());
}

/** A positive serial number of 16 random bytes (RFC 5280: at most 20 octets, unpredictable). */
function serialNumber(): asn1js.Integer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return new asn1js.Integer({ valueHex: bufferOf(bytes) });
}

/** Key usage digitalSignature and nonRepudiation (contentCommitment): what a document-signing certificate carries. */
function documentSigningKeyUsage(): pkijs.Extension {
  // Bits 0 and 1 set: 0b11000000, 6 unused bits.
  const bits = new asn1js.BitString({ valueHex: new Uint8Array([0xc0]).buffer, unusedBits: 6 });
  return new pkijs.Extension({ extnID: OID.keyUsage, critical: true, extnValue: bits.toBER() });
}

/**
 * A certificate for the key issued by itself, valid `days` from `now`: for testing only (no viewer
 * trusts it unless told to), as `self_signed: true` says.
 */
export async function selfSignedCertificate(input: { subject: Subject; publicKey: Uint8Array; keySpec: KeySpec; sign: SignDigest; now: Date; days: number }): Promise<string> {
  const name = distinguishedName(input.subject);
  const certificate = new pkijs.Certificate({
    version: 2,
    serialNumber: serialNumber(),
    issuer: name,
    subject: name,
    subjectPublicKeyInfo: pkijs.PublicKeyInfo.fromBER(bufferOf(input.publicKey)),
    signature: signatureAlgorithm(input.keySpec),
    signatureAlgorithm: signatureAlgorithm(input.keySpec),
  });
  // Certificates keep whole seconds.
  const now = Math.floor(input.now.getTime() / 1000) * 1000;
  certificate.notBefore.value = new Date(now - 60_000);
  certificate.notAfter.value = new Date(now + input.days * 86_400_000);
  certificate.extensions = [
    new pkijs.Extension({ extnID: OID.basicConstraints, critical: true, extnValue: new pkijs.BasicConstraints({ cA: false }).toSchema().toBER() }),
    documentSigningKeyUsage(),
    new pkijs.Extension({ extnID: OID.subjectKeyIdentifier, extnValue: new asn1js.OctetString({ valueHex: bufferOf(sha256(input.publicKey).subarray(0, 20)) }).toBER() }),
  ];
  const tbs = certificate.encodeTBS().toBER();
  certificate.signatureValue = new asn1js.BitString({ valueHex: bufferOf(await input.sign(sha256(tbs))) });
  return toPem('CERTIFICATE', certificate.toSchema(true).toBER());
}

/** Why an uploaded chain was refused, in words for the caller. */
export class ChainProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainProblem';
  }
}

export interface CheckedChain {
  /** The certificates, leaf first, as DER. */
  readonly chain: readonly Uint8Array[];
  /** Until when the chain is valid: the earliest notAfter of its certificates. */
  readonly notAfter: Date;
  readonly notBefore: Date;
  /** The leaf's subject, as text (CN=..., O=...), for the signature's /Name and the key's view. */
  readonly subject: string;
}

const NAMES: Record<string, string> = { [OID.commonName]: 'CN', [OID.organization]: 'O', [OID.country]: 'C', [OID.email]: 'E', '2.5.4.11': 'OU', '2.5.4.7': 'L', '2.5.4.8': 'ST' };
export function nameText(name: pkijs.RelativeDistinguishedNames): string {
  return name.typesAndValues.map((entry) => `${NAMES[entry.type] ?? entry.type}=${String((entry.value as { valueBlock: { value: unknown } }).valueBlock.value)}`).join(', ');
}

export function commonName(name: pkijs.RelativeDistinguishedNames): string | undefined {
  const entry = name.typesAndValues.find((candidate) => candidate.type === OID.commonName);
  return entry ? String((entry.value as { valueBlock: { value: unknown } }).valueBlock.value) : undefined;
}

export function parseCertificate(der: Uint8Array): pkijs.Certificate {
  return pkijs.Certificate.fromBER(bufferOf(der));
}

const sameBytes = (a: ArrayBuffer | Uint8Array, b: ArrayBuffer | Uint8Array) => Buffer.from(new Uint8Array(a)).equals(Buffer.from(new Uint8Array(b)));

/** Most certificates a chain may have: a leaf, intermediates and a root are a handful. */
export const MAX_CHAIN_CERTIFICATES = 10;

/**
 * Checks a chain a caller uploads for a key: PEM certificates, leaf first; the leaf's public key is
 * the key's; each certificate is signed by the next (the last by itself, or by a root the caller
 * left out); each is valid at `now`; the leaf may sign documents (key usage, if it says). Answers
 * the chain, or throws ChainProblem saying what is wrong.
 */
export async function checkChain(pem: string, publicKey: Uint8Array, now: Date): Promise<CheckedChain> {
  const ders = fromPem(pem, 'CERTIFICATE');
  if (ders.length === 0) throw new ChainProblem('certificate_chain_pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  if (ders.length > MAX_CHAIN_CERTIFICATES) throw new ChainProblem(`certificate_chain_pem holds ${ders.length} certificates; at most ${MAX_CHAIN_CERTIFICATES}`);
  const certificates = ders.map((der, index) => {
    try {
      return parseCertificate(der);
    } catch {
      throw new ChainProblem(`certificate ${index + 1} of certificate_chain_pem is not an X.509 certificate`);
    }
  });
  const leaf = certificates[0]!;
  if (!sameBytes(leaf.subjectPublicKeyInfo.toSchema().toBER(), publicKey)) {
    throw new ChainProblem("The first certificate's public key is not this signing key's: upload the certificate issued for this key's CSR, leaf first");
  }
  for (const [index, certificate] of certificates.entries()) {
    const position = index === 0 ? 'The leaf certificate' : `Certificate ${index + 1}`;
    if (now < certificate.notBefore.value) throw new ChainProblem(`${position} is not valid before ${certificate.notBefore.value.toISOString()}`);
    if (now > certificate.notAfter.value) throw new ChainProblem(`${position} expired on ${certificate.notAfter.value.toISOString()}`);
    const issuer = certificates[index + 1];
    if (issuer) {
      if (!sameBytes(certificate.issuer.toSchema().toBER(), issuer.subject.toSchema().toBER())) {
        throw new ChainProblem(`${position} was issued by ${nameText(certificate.issuer)}, but the next certificate is ${nameText(issuer.subject)}: list the chain leaf first, each followed by its issuer`);
      }
      if (!(await certificate.verify(issuer))) throw new ChainProblem(`${position}'s signature does not verify with the next certificate's key`);
    } else if (sameBytes(certificate.issuer.toSchema().toBER(), certificate.subject.toSchema().toBER()) && !(await certificate.verify())) {
      throw new ChainProblem(`${position} names itself as its issuer but its signature does not verify with its own key`);
    }
  }
  const usage = leaf.extensions?.find((extension) => extension.extnID === OID.keyUsage);
  if (usage) {
    const bits = new Uint8Array((usage.parsedValue as asn1js.BitString).valueBlock.valueHexView);
    if (!((bits[0] ?? 0) & 0xc0)) throw new ChainProblem('The leaf certificate does not allow digital signatures (key usage digitalSignature or nonRepudiation)');
  }
  return {
    chain: ders,
    notAfter: new Date(Math.min(...certificates.map((certificate) => certificate.notAfter.value.getTime()))),
    notBefore: new Date(Math.max(...certificates.map((certificate) => certificate.notBefore.value.getTime()))),
    subject: nameText(leaf.subject),
  };
}
