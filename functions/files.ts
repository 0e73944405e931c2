import { ApiError, notFound } from '#lib/api/errors.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { settings } from '#lib/settings.ts';
import { parseFileLinkId, verifyDownloadLink } from '#lib/storage/links.ts';
import { getPdfRecord, presignPdfDownload } from '#lib/storage/pdfs.ts';

const expired = () => new ApiError('link_expired', 'This download link has expired.');

/**
 * GET /v1/files/{id}?expires&signature: the download link (of a PDF, a picture, or a PDF's thumbnail: `<id>.thumbnail`). Unauthenticated (the signature is the
 * credential); answers with a redirect to a presigned S3 URL that lives for a minute.
 */
export const handler = apiHandler({ body: false }, async ({ event }) => {
  const linkId = event.pathParameters?.id ?? '';
  const { id: pdfId, part } = parseFileLinkId(linkId);
  const now = new Date();
  const check = verifyDownloadLink({
    pdfId: linkId,
    expires: event.queryStringParameters?.expires,
    signature: event.queryStringParameters?.signature,
    secret: settings.linkSigningSecret,
    now,
  });
  if (check === 'invalid') throw notFound('No PDF is available at this link.');
  if (check === 'expired') throw expired();

  const store = pdfStore();
  const record = await getPdfRecord(store, pdfId);
  if (!record || (part === 'thumbnail' && !record.thumbnail)) throw notFound('No PDF is available at this link.');
  if (Date.parse(record.expiresAt) <= now.getTime()) throw expired();

  return {
    statusCode: 302,
    headers: { Location: await presignPdfDownload(store, record, settings.presignedUrlTtlSeconds, part), 'Cache-Control': 'no-store' },
    body: '',
  };
});
