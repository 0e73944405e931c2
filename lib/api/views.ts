/**
 * How stored things look in API responses (spec 2.1).
 */
import { settings } from '#lib/settings.ts';
import { signDownloadLink } from '#lib/storage/links.ts';
import { downloadName, type PdfRecord } from '#lib/storage/pdfs.ts';

export function downloadUrl(record: PdfRecord, baseUrl: string): string {
  return signDownloadLink({
    baseUrl,
    pdfId: record.id,
    expiresAt: new Date(record.expiresAt),
    secret: settings.linkSigningSecret,
  });
}

export function pdfRecordView(record: PdfRecord, baseUrl: string) {
  return {
    id: record.id,
    url: downloadUrl(record, baseUrl),
    size: record.size,
    pages: record.pages,
    format: record.format,
    filename: downloadName(record),
    generation_time_ms: record.generationTimeMs,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
  };
}
