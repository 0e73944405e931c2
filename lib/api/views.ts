/**
 * How stored things look in API responses (spec 2.1).
 */
import { settings } from '#lib/settings.ts';
import { fileLinkId, signDownloadLink, type FilePart } from '#lib/storage/links.ts';
import { downloadName, PDF_CONTENT_TYPE, type PdfRecord } from '#lib/storage/pdfs.ts';
import type { TemplateHead, TemplateVersion } from '#lib/storage/templates.ts';
import type { SigningKey } from '#lib/signatures/signing-keys.ts';
import type { ImageRecordView, PdfRecordView, SigningKeyView, TemplateSummaryView, TemplateView } from './schemas.ts';

export function downloadUrl(record: PdfRecord, baseUrl: string, part: FilePart = 'file'): string {
  return signDownloadLink({
    baseUrl,
    pdfId: fileLinkId(record.id, part),
    expiresAt: new Date(record.expiresAt),
    secret: settings.linkSigningSecret,
  });
}

/**
 * A stored record as every endpoint shows it, the shape the OpenAPI document gives
 * (lib/api/schemas.ts): a PDF's, or a picture's (`img_…`), each with its `content_type`.
 */
export function pdfRecordView(record: PdfRecord, baseUrl: string): PdfRecordView | ImageRecordView {
  // What every stored record shows, in the order the OpenAPI document lists it.
  const common = {
    id: record.id,
    url: downloadUrl(record, baseUrl),
    size: record.size,
    filename: downloadName(record),
    generation_time_ms: record.generationTimeMs,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    ...(record.templateId !== undefined && { template_id: record.templateId }),
    ...(record.templateVersion !== undefined && { template_version: record.templateVersion }),
  };
  if (record.contentType !== undefined && record.contentType !== PDF_CONTENT_TYPE) {
    return { ...common, content_type: record.contentType as ImageRecordView['content_type'], width: record.width ?? 0, height: record.height ?? 0 };
  }
  return {
    ...common,
    content_type: PDF_CONTENT_TYPE,
    pages: record.pages,
    format: record.format,
    ...(record.thumbnail && { thumbnail_url: downloadUrl(record, baseUrl, 'thumbnail') }),
    ...(record.signingKeyId !== undefined && { signed: true as const, signing_key_id: record.signingKeyId }),
  };
}

/** A signing key as its routes answer it (never its KMS key's ARN: that names our account). */
export function signingKeyView(key: SigningKey): SigningKeyView {
  const leaf = key.certificateChainPem?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/)?.[0];
  return {
    signing_key_id: key.id,
    key_spec: key.keySpec,
    status: key.status,
    subject: key.subject,
    csr_pem: key.csrPem,
    ...(leaf && { certificate_pem: leaf }),
    ...(key.certificateChainPem && { certificate_chain_pem: key.certificateChainPem }),
    ...(key.notAfter && { not_after: key.notAfter }),
    created_at: key.createdAt,
  };
}

/** A template as listed (`GET /v1/templates`). */
export function templateSummaryView(head: TemplateHead): TemplateSummaryView {
  return { template_id: head.id, name: head.name, version: head.latestVersion, created_at: head.createdAt, updated_at: head.updatedAt };
}

/** One version of a template, whole, as its routes answer it (the shape lib/api/schemas.ts gives). */
export function templateView(head: TemplateHead, version: TemplateVersion): TemplateView {
  const content = JSON.parse(version.body) as Omit<TemplateView, 'template_id' | 'name' | 'version' | 'latest_version' | 'created_at' | 'updated_at'>;
  return {
    template_id: head.id,
    name: version.name,
    version: version.version,
    latest_version: head.latestVersion,
    created_at: head.createdAt,
    updated_at: version.createdAt,
    ...content,
  };
}
