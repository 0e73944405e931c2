/**
 * The CMS SignedData of a PAdES baseline signature (ETSI EN 319 142-1, B-B and B-T), pure: detached
 * (no content: the PDF's byte range is the content), one signer identified by issuer and serial,
 * signed attributes content-type, message-digest and signing-certificate-v2 (no signing-time: PAdES
 * puts the time in the signature dictionary's /M), the chain in `certificates`, and, for B-T, an
 * RFC 3161 time-stamp token over the signature value as the unsigned attribute
 * signature-time-stamp-token.
 *
 * The signature value is computed elsewhere (KMS Sign on the digest of the signed attributes):
 * {@link signedAttributesDigest} gives that digest, {@link signedDataDer} the CMS around the value.
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID, parseCertificate, type KeySpec } from './certificates.ts';

export const CMS_OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
} as const;

const bufferOf = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;
const sha256 = (bytes: Uint8Array | ArrayBuffer) => new Uint8Array(createHash('sha256').update(new Uint8Array(bytes)).digest());

/** SHA-256 with absent parameters, as RFC 5754 asks for. */
const sha256Algorithm = () => new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 });

/** The signer's algorithm in SignerInfo: ecdsa-with-SHA256, or rsaEncryption (RFC 5754 3.2 allows either for RSA). */
function signerAlgorithm(keySpec: KeySpec): pkijs.AlgorithmIdentifier {
  return keySpec === 'ECC_NIST_P256'
    ? new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSha256 })
    : new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256WithRsa, algorithmParams: new asn1js.Null() });
}

/** ESS signing-certificate-v2 (RFC 5035): the SHA-256 of the leaf and its issuer and serial, binding the signature to that certificate. */
function signingCertificateV2(leafDer: Uint8Array): pkijs.Attribute {
  const leaf = parseCertificate(leafDer);
  const issuerSerial = new asn1js.Sequence({
    value: [
      // GeneralNames: one directoryName [4] holding the issuer's Name.
      new asn1js.Sequence({ value: [new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 4 }, value: [leaf.issuer.toSchema()] })] }),
      leaf.serialNumber,
    ],
  });
  // hashAlgorithm is omitted: its default is SHA-256 (DER leaves defaults out).
  const essCertIdV2 = new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: bufferOf(sha256(leafDer)) }), issuerSerial] });
  return new pkijs.Attribute({ type: CMS_OID.signingCertificateV2, values: [new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] })] });
}

/** The signed attributes over the content's digest. */
export function signedAttributes(contentDigest: Uint8Array, leafDer: Uint8Array): pkijs.SignedAndUnsignedAttributes {
  return new pkijs.SignedAndUnsignedAttributes({
    type: 0,
    attributes: [
      new pkijs.Attribute({ type: CMS_OID.contentType, values: [new asn1js.ObjectIdentifier({ value: CMS_OID.data })] }),
      new pkijs.Attribute({ type: CMS_OID.messageDigest, values: [new asn1js.OctetString({ valueHex: bufferOf(contentDigest) })] }),
      signingCertificateV2(leafDer),
    ],
  });
}

/**
 * What the signer signs: the DER of the signed attributes as a SET OF (RFC 5652 5.4: the [0]
 * IMPLICIT tag replaced by SET's), hashed with SHA-256.
 */
export function signedAttributesDigest(attributes: pkijs.SignedAndUnsignedAttributes): Uint8Array {
  const der = new Uint8Array(attributes.toSchema().toBER());
  der[0] = 0x31;
  return sha256(der);
}

/**
 * The ContentInfo (DER) of a detached SignedData: `signatureValue` over the attributes, by the key
 * of `chain[0]`; `timeStampToken` (a DER ContentInfo from a TSA) as the unsigned attribute, if given.
 */
export function signedDataDer(input: {
  keySpec: KeySpec;
  attributes: pkijs.SignedAndUnsignedAttributes;
  signatureValue: Uint8Array;
  chain: readonly Uint8Array[];
  timeStampToken?: Uint8Array;
}): Uint8Array {
  const leaf = parseCertificate(input.chain[0]!);
  const signer = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }),
    digestAlgorithm: sha256Algorithm(),
    signedAttrs: input.attributes,
    signatureAlgorithm: signerAlgorithm(input.keySpec),
    signature: new asn1js.OctetString({ valueHex: bufferOf(input.signatureValue) }),
  });
  if (input.timeStampToken) {
    const token = asn1js.fromBER(bufferOf(input.timeStampToken));
    if (token.offset === -1) throw new Error('the time-stamp token is not DER');
    signer.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [new pkijs.Attribute({ type: CMS_OID.signatureTimeStampToken, values: [token.result] })],
    });
  }
  const signedData = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [sha256Algorithm()],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: CMS_OID.data }),
    certificates: input.chain.map(parseCertificate),
    signerInfos: [signer],
  });
  const contentInfo = new pkijs.ContentInfo({ contentType: CMS_OID.signedData, content: signedData.toSchema(true) });
  return new Uint8Array(contentInfo.toSchema().toBER());
}
