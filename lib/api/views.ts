/**
 * How stored things look in API responses (spec 2.1).
 */
import { settings } from '#lib/settings.ts';
import { signDownloadLink } from '#lib/storage/links.ts';
import { downloadName, type PdfRecord } from '#lib/storage/pdfs.ts';
import type { PdfRecordView } from './schemas.ts';

export function downloadUrl(record: PdfRecord, baseUrl: string): string {
  return signDownloadLink({
    baseUrl,
    pdfId: record.id,
    expiresAt: new Date(record.expiresAt),
    secret: settings.linkSigningSecret,
  });
}

/** A PDF record as every endpoint shows it: the shape the OpenAPI document gives (lib/api/schemas.ts). */
export function pdfRecordView(record: PdfRecord, baseUrl: string): PdfRecordView {
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
