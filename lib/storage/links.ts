/**
 * Download links: `<base>/v1/files/<pdf id>?expires=<epoch s>&signature=<hmac>`.
 *
 * A link must work for up to 365 days, longer than any S3 presigned URL can live, so it points at
 * the service instead. The HMAC makes the link unforgeable and its expiry tamper-proof without a
 * database read; the files function then checks that the PDF still exists and redirects to a
 * presigned S3 URL that lives for a minute.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const FILES_PATH = '/v1/files';

/** The files a record has a link to: its own, and a PDF's thumbnail. */
export type FilePart = 'file' | 'thumbnail';
const THUMBNAIL_SUFFIX = '.thumbnail';

/**
 * What a link names: the record's id, or `<id>.thumbnail` for its thumbnail. Signed as it stands, so
 * a link to one never opens the other (ids have no dot).
 */
export function fileLinkId(id: string, part: FilePart): string {
  return part === 'thumbnail' ? `${id}${THUMBNAIL_SUFFIX}` : id;
}

/** The record and the part a link's id names. */
export function parseFileLinkId(linkId: string): { id: string; part: FilePart } {
  return linkId.endsWith(THUMBNAIL_SUFFIX) ? { id: linkId.slice(0, -THUMBNAIL_SUFFIX.length), part: 'thumbnail' } : { id: linkId, part: 'file' };
}

function sign(pdfId: string, expiresEpochSeconds: number, secret: string): string {
  return createHmac('sha256', secret).update(`${pdfId}.${expiresEpochSeconds}`).digest('base64url');
}

export function signDownloadLink(input: { baseUrl: string; pdfId: string; expiresAt: Date; secret: string }): string {
  const expires = Math.floor(input.expiresAt.getTime() / 1000);
  const signature = sign(input.pdfId, expires, input.secret);
  return `${input.baseUrl}${FILES_PATH}/${encodeURIComponent(input.pdfId)}?expires=${expires}&signature=${signature}`;
}

export type LinkCheck = 'valid' | 'expired' | 'invalid';

/** Whether a link's parameters are genuine and unexpired. Expiry is only reported for genuine links. */
export function verifyDownloadLink(input: {
  pdfId: string;
  expires: string | undefined;
  signature: string | undefined;
  secret: string;
  now: Date;
}): LinkCheck {
  if (!input.expires || !/^\d{1,12}$/.test(input.expires) || !input.signature) return 'invalid';
  const expected = Buffer.from(sign(input.pdfId, Number(input.expires), input.secret));
  const presented = Buffer.from(input.signature);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return 'invalid';
  return input.now.getTime() >= Number(input.expires) * 1000 ? 'expired' : 'valid';
}
