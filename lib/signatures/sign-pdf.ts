/**
 * Signing a finished PDF (PAdES B-B, or B-T with a time-stamp token), pure but for what it is given:
 * the key's `sign` (KMS Sign on a digest) and, for B-T, `timestamp` (an RFC 3161 request to the
 * operator's authority). The order is the standard's: the update with its hole, the digest of the
 * byte range, the signed attributes over it, their signature by the key, the token over that
 * signature, the CMS into the hole.
 */
import { createHash } from 'node:crypto';
import type { KeySpec, SignDigest } from './certificates.ts';
import { signedAttributes, signedAttributesDigest, signedDataDer } from './cms.ts';
import { byteRangeDigest, fillSignature, prepareSignature, type PlaceholderInput, type PreparedSignature } from './pdf-signature.ts';

/** Room kept for a time-stamp token: a TSA's SignedData with its certificate chain (typically 3 to 6 KB). */
const TIMESTAMP_ROOM_BYTES = 12_288;
/** Room for the CMS's own structure, attributes and signature value (an RSA-3072 value is 384 bytes). */
const CMS_ROOM_BYTES = 4_096;

/** The signature dictionary's fields (who, when, why, where, the visible box) as the update writes them, and: */
export interface SigningInput extends Omit<PlaceholderInput, 'contentsBytes'> {
  readonly keySpec: KeySpec;
  /** The key's certificate chain, leaf first, DER. */
  readonly chain: readonly Uint8Array[];
  readonly sign: SignDigest;
  /** The token (DER ContentInfo) for the SHA-256 of the signature value; absent: no time stamp (B-B). */
  readonly timestamp?: ((signatureValueDigest: Uint8Array) => Promise<Uint8Array>) | undefined;
  /** Largest signed file allowed: a larger one is refused ({@link SignedPdfTooLarge}) before KMS is asked to sign. */
  readonly maxBytes?: number;
  /** Writes the update (parsing the file): prepareSignature here, or the same in a worker thread (lib/documents/pdf-workers.ts). */
  readonly prepare?: (pdf: Uint8Array, input: PlaceholderInput) => Promise<PreparedSignature>;
}

/** The signed file would be larger than allowed. */
export class SignedPdfTooLarge extends Error {
  readonly size: number;
  readonly maxBytes: number;
  constructor(size: number, maxBytes: number) {
    super(`the signed PDF would be ${size} bytes, more than the maximum of ${maxBytes}`);
    this.name = 'SignedPdfTooLarge';
    this.size = size;
    this.maxBytes = maxBytes;
  }
}

export async function signPdf(pdf: Uint8Array, input: SigningInput): Promise<Uint8Array> {
  const chainBytes = input.chain.reduce((sum, certificate) => sum + certificate.length, 0);
  const prepared = await (input.prepare ?? prepareSignature)(pdf, {
    signingTime: input.signingTime,
    name: input.name,
    reason: input.reason,
    location: input.location,
    contactInfo: input.contactInfo,
    appearance: input.appearance,
    contentsBytes: chainBytes + CMS_ROOM_BYTES + (input.timestamp ? TIMESTAMP_ROOM_BYTES : 0),
  });
  // The update with its hole is the signed file's size (the CMS is written into the hole): known
  // here, before a KMS request or a time stamp is spent on a file that would be refused.
  if (input.maxBytes !== undefined && prepared.bytes.length > input.maxBytes) throw new SignedPdfTooLarge(prepared.bytes.length, input.maxBytes);
  const attributes = signedAttributes(byteRangeDigest(prepared), input.chain[0]!);
  const signatureValue = await input.sign(signedAttributesDigest(attributes));
  const timeStampToken = input.timestamp ? await input.timestamp(new Uint8Array(createHash('sha256').update(signatureValue).digest())) : undefined;
  const cms = signedDataDer({ keySpec: input.keySpec, attributes, signatureValue, chain: input.chain, ...(timeStampToken && { timeStampToken }) });
  return fillSignature(prepared, cms);
}
