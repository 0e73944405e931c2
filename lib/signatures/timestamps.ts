/**
 * RFC 3161 time stamps for PAdES B-T: the SHA-256 of the signature value sent to the operator's
 * time-stamp authority (SIGNATURE_TSA_URL, the one address the signer reaches, over plain HTTP(S)
 * as RFC 3161 3.4 has it), its token checked against what was asked (status granted, our digest,
 * our nonce) before it goes into the signature. Any failure is a TimestampFailure: the document
 * fails TIMESTAMP_FAILED, uncharged.
 */
import { randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID } from './certificates.ts';

export class TimestampFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TimestampFailure';
  }
}

/** Largest answer read from the authority: a token with its chain is a few KB. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const bufferOf = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

/** A TimeStampReq (DER) for a SHA-256 digest, with a nonce, asking for the authority's certificate. */
export function timestampRequest(digest: Uint8Array, nonce: Uint8Array): Uint8Array {
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({ hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }), hashedMessage: new asn1js.OctetString({ valueHex: bufferOf(digest) }) }),
    nonce: new asn1js.Integer({ valueHex: bufferOf(nonce) }),
    certReq: true,
  });
  return new Uint8Array(request.toSchema().toBER());
}

/** The token (DER ContentInfo) of an authority's answer, once it is granted and is for `digest` and `nonce`. */
export function tokenOf(response: Uint8Array, digest: Uint8Array, nonce: Uint8Array): Uint8Array {
  let parsed: pkijs.TimeStampResp;
  try {
    parsed = pkijs.TimeStampResp.fromBER(bufferOf(response));
  } catch (error) {
    throw new TimestampFailure('The time-stamp authority answered something that is not an RFC 3161 response', { cause: error });
  }
  const status = parsed.status.status;
  if (status !== 0 && status !== 1) throw new TimestampFailure(`The time-stamp authority refused the request (PKIStatus ${status})`);
  if (!parsed.timeStampToken) throw new TimestampFailure('The time-stamp authority granted the request but sent no token');
  const signedData = new pkijs.SignedData({ schema: parsed.timeStampToken.content });
  const content = signedData.encapContentInfo.eContent;
  if (!content) throw new TimestampFailure('The time-stamp token holds no TSTInfo');
  // getValue: the whole content, whether the OCTET STRING came primitive or constructed (in pieces).
  const info = pkijs.TSTInfo.fromBER(content.getValue());
  const imprint = new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (!Buffer.from(imprint).equals(Buffer.from(digest))) throw new TimestampFailure('The time-stamp token is for another digest than the one sent');
  const answeredNonce = info.nonce ? Buffer.from(info.nonce.valueBlock.valueHexView) : undefined;
  if (!answeredNonce || !stripLeadingZeros(answeredNonce).equals(stripLeadingZeros(Buffer.from(nonce)))) throw new TimestampFailure('The time-stamp token does not carry the nonce sent');
  return new Uint8Array(parsed.timeStampToken.toSchema().toBER());
}

const stripLeadingZeros = (bytes: Buffer) => {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.subarray(start);
};

/** Asks `url` for a token over `digest` within `timeoutMs`. */
export async function fetchTimestampToken(url: string, digest: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
  const nonce = randomBytes(16);
  nonce[0] = nonce[0]! & 0x7f; // a positive INTEGER
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/timestamp-query', Accept: 'application/timestamp-reply' },
      body: Buffer.from(timestampRequest(digest, nonce)),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new TimestampFailure(timedOut ? `The time-stamp authority did not answer within ${timeoutMs} ms` : 'The time-stamp authority could not be reached', { cause: error });
  }
  if (!response.ok) throw new TimestampFailure(`The time-stamp authority answered HTTP ${response.status}`);
  const body = new Uint8Array(await response.arrayBuffer());
  if (body.length > MAX_RESPONSE_BYTES) throw new TimestampFailure('The time-stamp authority answered more than a token');
  return tokenOf(body, digest, nonce);
}
