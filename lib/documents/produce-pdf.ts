/**
 * Producing one stored PDF from one validated request: the path shared by the single endpoint and
 * by each batch item, so both validate, render and store in exactly the same way.
 */
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { randomBase62 } from '#lib/random.ts';
import { assertUrlAllowed } from '#lib/render/document-url.ts';
import { documentReadingPool } from '#lib/customer-code/pool.ts';
import { describeIssue, resolveRenderOptions, type RenderOptions } from '#lib/render/options.ts';
import { renderPdf, type DocumentSource, type RenderLimits } from '#lib/render/render.ts';
import { finishInWorker } from './pdf-workers.ts';
import { recordPdfGenerated } from '#lib/observability/metrics.ts';
import { settings } from '#lib/settings.ts';
import { describePdf, putPdfObject, putPdfRecord, type PdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { itemOptionsSchema } from './document-options.ts';
import { sourceProblem } from './source.ts';
import { URL_ONLY_OPTIONS } from '#lib/render/url-access-options.ts';
import type { SignatureOption } from '#lib/signatures/options.ts';
import { signatureOptionProblem, signDocument, signingKeyFor } from './signing.ts';

/** A document request that passed every check that can be made before rendering. */
export interface DocumentRequest {
  readonly source: DocumentSource;
  readonly options: RenderOptions;
  /** The download name (`filename`), always ending in .pdf; `<id>.pdf` when absent. */
  readonly filename?: string;
  /** The stored template and version its HTML was rendered from (lib/documents/templates.ts), named in its PDF's record. */
  readonly template?: { readonly id: string; readonly version: number };
  /** The `signature` option: the PDF is signed as its last step (lib/documents/signing.ts). */
  readonly signature?: SignatureOption;
}

/** 24 base62 characters: about 143 random bits, neither guessable nor sequential. */
export function newPdfId(): string {
  return 'pdf_' + randomBase62(24);
}

/**
 * Validates source and options, in the order a caller fixes them: which source, each option, then
 * the HTML itself or the URL's destination.
 */
export async function prepareDocument(input: {
  html?: unknown;
  url?: string | undefined;
  options: unknown;
  /** Whose document it is: a large html is read in a customer-code worker, on this key's share. */
  keyId: string;
}): Promise<DocumentRequest> {
  const missingOrBoth = sourceProblem(input);
  if (missingOrBoth) throw missingOrBoth;
  const parsed = itemOptionsSchema.safeParse(input.options ?? {});
  if (!parsed.success) throw new DocumentError('INVALID_OPTIONS', describeIssue(parsed.error));
  const options = resolveRenderOptions(parsed.data);
  if ('error' in options) throw new DocumentError('INVALID_OPTIONS', options.error);
  const filename = parsed.data.filename;
  const signatureProblem = signatureOptionProblem(parsed.data);
  if (signatureProblem) throw new DocumentError('INVALID_OPTIONS', signatureProblem);
  const signature = parsed.data.signature;

  if (input.url !== undefined) {
    const url = await assertUrlAllowed(input.url, { allowPrivateHosts: settings.allowPrivateHosts });
    return { source: { url: url.href }, options, ...(filename !== undefined && { filename }), ...(signature && { signature }) };
  }
  const urlOnly = URL_ONLY_OPTIONS.find((name) => parsed.data[name] !== undefined);
  if (urlOnly) throw new DocumentError('INVALID_OPTIONS', `${urlOnly} applies to url documents only; this request gives html`);
  const inspection = await documentReadingPool().inspectHtml(input.keyId, input.html);
  if (inspection.problem !== undefined) throw new DocumentError('INVALID_HTML', inspection.problem);
  const { problem: _valid, ...traits } = inspection;
  return { source: { html: input.html as string, ...traits }, options, ...(filename !== undefined && { filename }), ...(signature && { signature }) };
}

/**
 * The limits every document renders under, from the settings; an asynchronous job's documents get
 * the job's longer render time (lib/jobs/jobs.ts).
 */
export function renderLimits({ timeoutMs = settings.renderTimeoutMs }: { timeoutMs?: number } = {}): RenderLimits {
  return {
    timeoutMs,
    maxPages: settings.maxPdfPages,
    maxPdfBytes: settings.maxPdfBytes,
    maxDownloadBytes: settings.maxDocumentDownloadBytes,
    resourceTimeoutMs: settings.resourceTimeoutMs,
    settleQuietMs: settings.settleQuietMs,
    settleMaxMs: settings.settleMaxMs,
    allowPrivateHosts: settings.allowPrivateHosts,
    workspaces: { prepared: settings.preparedWorkspaces },
  };
}

/** What a PDF is made under: the quota reservation it is charged to, and the id it is given. */
export interface Making {
  readonly reservationId: string;
  /**
   * The PDF's id when the caller decides it: an asynchronous job's PDFs have ids derived from the
   * job (lib/jobs/jobs.ts), so a job run again after a crash finds what it already made. New otherwise.
   */
  readonly pdfId?: string;
  /** Longest the render may take; the settings' render timeout by default. */
  readonly renderTimeoutMs?: number;
}

/**
 * Renders one prepared document and stores its file. The PDF exists for its owner only once its
 * record is written, by whoever settles the quota for it: the single endpoint at once
 * ({@link producePdf}), a batch only for the items it reports as done (lib/documents/batch.ts), so
 * an item the batch gave up on never appears, and is never charged.
 */
export async function renderToObject(
  store: PdfStore,
  owner: Pick<ApiKey, 'keyId' | 'tier'>,
  request: DocumentRequest,
  making: Making,
  now: () => Date = () => new Date(),
): Promise<PdfRecord> {
  const started = performance.now();
  const createdAt = now();
  const limits = renderLimits(making.renderTimeoutMs !== undefined ? { timeoutMs: making.renderTimeoutMs } : {});
  // The signing key is found first: an unknown or unready one fails before Chromium's time is spent.
  const signingKey = request.signature && (await signingKeyFor(store, owner.keyId, request.signature, createdAt));
  const rendered = await renderPdf(request.source, request.options, limits, { now: createdAt, finish: finishInWorker(owner.keyId) });
  // Signing is the last step: after metadata, watermark and everything else done to the file.
  const bytes = signingKey && request.signature ? await signDocument(store, signingKey, request.signature, rendered.bytes, rendered.pages, now()) : rendered.bytes;
  recordPdfGenerated({ renderMs: performance.now() - started, pages: rendered.pages, bytes: bytes.byteLength });
  const record = describePdf({
    id: making.pdfId ?? newPdfId(),
    keyId: owner.keyId,
    size: bytes.byteLength,
    pages: rendered.pages,
    format: request.options.format,
    generationTimeMs: Math.round(performance.now() - started),
    createdAt: createdAt.toISOString(),
    retentionDays: TIERS[owner.tier].linkValidityDays,
    reservationId: making.reservationId,
    ...(request.filename !== undefined && { filename: request.filename }),
    ...(request.template && { templateId: request.template.id, templateVersion: request.template.version }),
    ...(signingKey && { signingKeyId: signingKey.id }),
  });
  await putPdfObject(store, record, bytes);
  return record;
}

/** Renders and stores one prepared document for the key that asked for it: file first, then record. */
export async function producePdf(
  store: PdfStore,
  owner: Pick<ApiKey, 'keyId' | 'tier'>,
  request: DocumentRequest,
  making: Making,
  now: () => Date = () => new Date(),
): Promise<PdfRecord> {
  const record = await renderToObject(store, owner, request, making, now);
  return putPdfRecord(store, record);
}
