/**
 * The `signature` option of a document (shared/spec/beyond.md "Signatures"): its signing key found
 * for the caller before anything renders (404 SIGNING_KEY_NOT_FOUND, 409 SIGNING_KEY_NOT_READY, both
 * uncharged), then the finished PDF signed as the very last step, after metadata, watermark and
 * everything else was done to the file (lib/signatures/sign-pdf.ts), by KMS Sign on the digest.
 *
 * `encryption` with `signature` is refused (400): a signature over an encrypted file would need the
 * update written through the encryption (strings and streams encrypted with the file's key), which
 * qpdf's output does not leave room for; and encrypting after signing breaks the signature. A caller
 * who needs both gets a clear answer instead of a PDF that shows a broken signature.
 */
import type { BoxStamp, PrintedBox } from '#lib/render/box-stamp.ts';
import { lengthToPixels } from '#lib/render/options.ts';
import { DocumentError, quoteInput } from '#lib/render/errors.ts';
import { pdfTooLarge } from '#lib/render/render.ts';
import { settings } from '#lib/settings.ts';
import { commonName, parseCertificate } from '#lib/signatures/certificates.ts';
import type { SignatureOption } from '#lib/signatures/options.ts';
import { SignedPdfTooLarge, signPdf } from '#lib/signatures/sign-pdf.ts';
import { chainOf, getSigningKey, kmsSigner, type SigningKey } from '#lib/signatures/signing-keys.ts';
import { fetchTimestampToken, TimestampFailure } from '#lib/signatures/timestamps.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { prepareSignatureInWorker } from './pdf-workers.ts';

/** What a signature option says that cannot be checked by its schema alone: 400 INVALID_OPTIONS. */
export function signatureOptionProblem(options: { signature?: SignatureOption | undefined; encryption?: unknown }): string | undefined {
  if (!options.signature) return undefined;
  if (options.encryption !== undefined) {
    return 'signature and encryption cannot be combined: a signed PDF must not be encrypted afterwards (that breaks the signature). Sign without encryption, or encrypt without a signature';
  }
  if (options.signature.timestamp && !settings.signatureTsaUrl) return 'signature.timestamp is not available: this deployment has no time-stamp authority (SIGNATURE_TSA_URL)';
  return undefined;
}

/** The caller's signing key for `option`, ready to sign at `now`; a DocumentError otherwise (before anything is rendered or charged). */
export async function signingKeyFor(store: PdfStore, keyId: string, option: SignatureOption, now: Date): Promise<SigningKey> {
  const key = await getSigningKey(store, keyId, option.signing_key_id);
  if (!key) throw new DocumentError('SIGNING_KEY_NOT_FOUND', `No signing key ${quoteInput(option.signing_key_id)} exists for this API key.`);
  if (key.status !== 'active' || !key.notAfter) {
    throw new DocumentError('SIGNING_KEY_NOT_READY', `Signing key ${key.id} has no certificate yet: have its csr_pem issued by your CA and upload the chain with PUT /v1/signing-keys/${key.id}/certificate (or create a key with self_signed: true for testing).`);
  }
  if (Date.parse(key.notAfter) <= now.getTime()) {
    throw new DocumentError('SIGNING_KEY_NOT_READY', `The certificate of signing key ${key.id} expired on ${key.notAfter}: upload a renewed chain with PUT /v1/signing-keys/${key.id}/certificate.`);
  }
  return key;
}

const POINTS_PER_PIXEL = 72 / 96;
const points = (length: string) => lengthToPixels(length)! * POINTS_PER_PIXEL;

/** Who signs, as the signature names them (/Name) and the box shows: the certificate's common name. */
function signerName(key: SigningKey): string {
  return commonName(parseCertificate(chainOf(key)[0]!).subject) ?? key.subject.common_name;
}

/** The signing time as the box writes it: to the second, UTC, as /M has it. */
const boxDate = (at: Date) => `${at.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

/**
 * What a visible signature's box shows, for Chromium to print with the document (renderPdf's `box`,
 * lib/render/box-stamp.ts): the caller's `visible.text`, or who signed, when, why and where. The time
 * is the moment the box is printed, which is then the signing time written in /M: one time, one source.
 */
export function signatureBox(key: SigningKey, option: SignatureOption): BoxStamp | undefined {
  const visible = option.visible;
  if (!visible) return undefined;
  const signer = signerName(key);
  return {
    width: points(visible.width),
    height: points(visible.height),
    lines: (at) =>
      visible.text
        ? visible.text.split('\n')
        : [`Digitally signed by ${signer}`, `Date: ${boxDate(at)}`, ...(option.reason ? [`Reason: ${option.reason}`] : []), ...(option.location ? [`Location: ${option.location}`] : [])],
  };
}

/**
 * The signed file: `made.bytes` (finished) with a PAdES signature by `key`, as the option asks, at
 * `signingTime` (the printed box's time when there is a box); a visible signature shows `made.box`,
 * printed from {@link signatureBox}. A signed file over `maxPdfBytes` (MAX_PDF_BYTES: the limit is
 * the stored file's) is refused as rendering refuses one, 422 `pdf_too_large`, before KMS signs.
 */
export async function signDocument(
  store: PdfStore,
  key: SigningKey,
  option: SignatureOption,
  made: { readonly bytes: Uint8Array; readonly pages: number; readonly box?: PrintedBox | undefined },
  signingTime: Date,
  maxPdfBytes: number,
): Promise<Uint8Array> {
  // The file is parsed in a finishing worker, on the owner's share, never on the event loop.
  if (!store.kms) throw new Error('signing needs KMS: the store has no KMS client');
  const chain = chainOf(key);
  const visible = option.visible;
  if (visible && visible.page > made.pages) {
    throw new DocumentError('INVALID_OPTIONS', `signature.visible.page is ${visible.page}, but the document has ${made.pages} page${made.pages === 1 ? '' : 's'}`);
  }
  if (visible && !made.box) throw new Error('a visible signature needs its printed box');
  const tsaUrl = settings.signatureTsaUrl;
  try {
    return await signPdf(made.bytes, {
      keySpec: key.keySpec,
      chain,
      sign: kmsSigner(store.kms, key),
      timestamp: option.timestamp && tsaUrl ? (digest) => fetchTimestampToken(tsaUrl, digest, settings.signatureTsaTimeoutMs) : undefined,
      signingTime,
      maxBytes: maxPdfBytes,
      name: signerName(key),
      reason: option.reason,
      location: option.location,
      contactInfo: option.contact_info,
      prepare: prepareSignatureInWorker(key.keyId),
      appearance: visible && made.box && { pageIndex: visible.page - 1, x: points(visible.x), y: points(visible.y), width: points(visible.width), height: points(visible.height), stamp: made.box.bytes },
    });
  } catch (error) {
    if (error instanceof SignedPdfTooLarge) throw pdfTooLarge(error.maxBytes);
    if (error instanceof TimestampFailure) throw new DocumentError('TIMESTAMP_FAILED', `${error.message}. Nothing was charged; retry, or sign without timestamp.`, { cause: error });
    // KMS's request quota (Sign is shared by every signing key of the account and region): the SDK
    // retried with backoff already; what is still throttled is the service's overload, not the document's.
    if (error instanceof Error && (error.name === 'ThrottlingException' || error.name === 'LimitExceededException')) {
      throw new DocumentError('SERVICE_BUSY', 'Signing is busy (the key service is throttling requests). Nothing was charged; retry in a second.', { cause: error });
    }
    throw error;
  }
}
