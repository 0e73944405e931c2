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
import { renderImage, renderPdf, type DocumentSource, type RenderLimits } from '#lib/render/render.ts';
import type { BoxStamp, PrintedBox } from '#lib/render/box-stamp.ts';
import { pictureFirstPage } from '#lib/render/thumbnail.ts';
import { finishInWorker } from './pdf-workers.ts';
import { recordPdfGenerated } from '#lib/observability/metrics.ts';
import { settings } from '#lib/settings.ts';
import { describePdf, putPdfObject, putPdfRecord, putThumbnailObject, thumbnailObjectKey, type PdfRecord, type PdfStore, type StoredThumbnail } from '#lib/storage/pdfs.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { itemOptionsSchema, PDF_ONLY_OPTIONS } from './document-options.ts';
import type { z } from 'zod';
import { IMAGE_CONTENT_TYPES, IMAGE_EXTENSIONS, resolveImageOptions, resolveThumbnailOptions, type ImageOptions, type ThumbnailOptions } from '#lib/render/image-options.ts';
import { markdownCssProblem } from '#lib/render/markdown.ts';
import { withExtension } from '#lib/storage/filenames.ts';
import { sourceProblem, type DocumentOutput } from './source.ts';
import { URL_ONLY_OPTIONS } from '#lib/render/url-access-options.ts';
import type { SignatureOption } from '#lib/signatures/options.ts';
import { signatureBox, signatureOptionProblem, signDocument, signingKeyFor } from './signing.ts';

export type { DocumentOutput } from './source.ts';

/** A document request that passed every check that can be made before rendering. */
export interface DocumentRequest {
  readonly source: DocumentSource;
  readonly options: RenderOptions;
  /** The download name (`filename`), always ending in the file's extension; `<id>.<extension>` when absent. */
  readonly filename?: string;
  /** Present when the document is to be pictured rather than printed: how. */
  readonly image?: ImageOptions;
  /** A PDF's picture of its first page (`thumbnail`), when asked for. */
  readonly thumbnail?: ThumbnailOptions;
  /** The stored template and version its HTML was rendered from (lib/documents/templates.ts), named in its PDF's record. */
  readonly template?: { readonly id: string; readonly version: number };
  /** The `signature` option: the PDF is signed as its last step (lib/documents/signing.ts). */
  readonly signature?: SignatureOption;
}

/** 24 base62 characters: about 143 random bits, neither guessable nor sequential. */
export function newPdfId(): string {
  return 'pdf_' + randomBase62(24);
}

/** A picture's id: `img_` and as many random characters as a PDF's. */
export function newImageId(): string {
  return 'img_' + randomBase62(24);
}


/**
 * Validates source and options, in the order a caller fixes them: which source, each option, then
 * the HTML itself or the URL's destination.
 */
export async function prepareDocument(input: {
  html?: unknown;
  url?: string | undefined;
  /** Markdown (lib/render/markdown.ts): turned into an html document, then checked as html is. */
  markdown?: unknown;
  options: unknown;
  /** Whose document it is: a large html is read in a customer-code worker, on this key's share. */
  keyId: string;
  /** A PDF unless said otherwise. */
  output?: DocumentOutput;
}): Promise<DocumentRequest> {
  const missingOrBoth = sourceProblem(input);
  if (missingOrBoth) throw missingOrBoth;
  const output = input.output ?? 'pdf';
  const parsed = itemOptionsSchema.safeParse(input.options ?? {});
  if (!parsed.success) throw new DocumentError('INVALID_OPTIONS', describeIssue(parsed.error));
  const resolved = resolveRenderOptions(parsed.data);
  if ('error' in resolved) throw new DocumentError('INVALID_OPTIONS', resolved.error);
  const made = outputOf(output, parsed.data);
  // A picture is taken of the page as a screen shows it unless the caller asks for print media.
  const options: RenderOptions = made.image && parsed.data.emulate_media === undefined ? { ...resolved, emulateMedia: 'screen' } : resolved;
  const filename = parsed.data.filename === undefined ? undefined : withExtension(parsed.data.filename, made.image ? IMAGE_EXTENSIONS[made.image.format] : 'pdf');
  const signatureProblem = signatureOptionProblem(parsed.data);
  if (signatureProblem) throw new DocumentError('INVALID_OPTIONS', signatureProblem);
  const signature = parsed.data.signature;
  const request = { options, ...made, ...(filename !== undefined && { filename }), ...(signature && { signature }) };
  if (parsed.data.css !== undefined && input.markdown === undefined) throw new DocumentError('INVALID_OPTIONS', 'css applies to markdown documents only; an html document carries its own <style>');

  if (input.url !== undefined) {
    const url = await assertUrlAllowed(input.url, { allowPrivateHosts: settings.allowPrivateHosts });
    return { source: { url: url.href }, ...request };
  }
  const urlOnly = URL_ONLY_OPTIONS.find((name) => parsed.data[name] !== undefined);
  if (urlOnly) throw new DocumentError('INVALID_OPTIONS', `${urlOnly} applies to url documents only; this request gives ${input.markdown !== undefined ? 'markdown' : 'html'}`);
  if (input.markdown !== undefined) {
    if (typeof input.markdown !== 'string') throw new DocumentError('INVALID_HTML', 'markdown must be a string');
    const cssProblem = parsed.data.css === undefined ? undefined : markdownCssProblem(parsed.data.css);
    if (cssProblem) throw new DocumentError('INVALID_OPTIONS', cssProblem);
    const read = await documentReadingPool().readMarkdown(input.keyId, input.markdown, parsed.data.css);
    if (read.inspection.problem !== undefined) throw new DocumentError('INVALID_HTML', read.inspection.problem);
    const { problem: _valid, ...traits } = read.inspection;
    return { source: { html: read.html, ...traits }, ...request };
  }
  const inspection = await documentReadingPool().inspectHtml(input.keyId, input.html);
  if (inspection.problem !== undefined) throw new DocumentError('INVALID_HTML', inspection.problem);
  const { problem: _valid, ...traits } = inspection;
  return { source: { html: input.html as string, ...traits }, ...request };
}

/**
 * What the request makes, from its options: a picture's `image` options (an image request), or a
 * PDF's `thumbnail`. Options of the other kind are refused by name rather than silently ignored.
 */
function outputOf(output: DocumentOutput, parsed: z.output<typeof itemOptionsSchema>): { image?: ImageOptions; thumbnail?: ThumbnailOptions } {
  if (output === 'image') {
    const pdfOnly = PDF_ONLY_OPTIONS.find((name) => parsed[name] !== undefined);
    if (pdfOnly) throw new DocumentError('INVALID_OPTIONS', `${pdfOnly} applies to PDFs only; this request makes an image`);
    const image = resolveImageOptions(parsed.image);
    if ('error' in image) throw new DocumentError('INVALID_OPTIONS', image.error);
    return { image };
  }
  if (parsed.image !== undefined) throw new DocumentError('INVALID_OPTIONS', 'image applies to images only: use POST /v1/image/generate (or "output": "image" on a batch item)');
  return parsed.thumbnail === undefined ? {} : { thumbnail: resolveThumbnailOptions(parsed.thumbnail) };
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
  // A visible signature's box is printed by Chromium with the document, in its workspace.
  const box = signingKey && request.signature ? signatureBox(signingKey, request.signature) : undefined;
  const made = request.image ? await pictureDocument(request, request.image, limits) : await printDocument(request, limits, createdAt, owner.keyId, box);
  // Signing is the last step: after metadata, watermark and everything else done to the file (a
  // picture is never signed: `signature` is a PDF-only option). Signed at the moment its box says.
  // MAX_PDF_BYTES is the stored file's: signing checks the signed size (its update adds 10 to 35 KB).
  const bytes = signingKey && request.signature ? await signDocument(store, signingKey, request.signature, made, made.box?.printedAt ?? now(), limits.maxPdfBytes) : made.bytes;
  recordPdfGenerated({ renderMs: performance.now() - started, pages: made.pages, bytes: bytes.byteLength });
  const record = describePdf({
    id: making.pdfId ?? (request.image ? newImageId() : newPdfId()),
    keyId: owner.keyId,
    size: bytes.byteLength,
    pages: made.pages,
    format: request.image ? request.image.format : request.options.format,
    generationTimeMs: Math.round(performance.now() - started),
    createdAt: createdAt.toISOString(),
    retentionDays: TIERS[owner.tier].linkValidityDays,
    reservationId: making.reservationId,
    ...made.picture,
    ...(request.filename !== undefined && { filename: request.filename }),
    ...(request.template && { templateId: request.template.id, templateVersion: request.template.version }),
    ...(signingKey && { signingKeyId: signingKey.id }),
  });
  // The thumbnail is stored before the PDF's record names it, as the file is (lib/storage/pdfs.ts).
  const withThumbnail = made.thumbnail ? { ...record, thumbnail: { ...made.thumbnail.stored, objectKey: thumbnailObjectKey(record, made.thumbnail.stored.contentType) } } : record;
  if (made.thumbnail && withThumbnail.thumbnail) await putThumbnailObject(store, withThumbnail.thumbnail, made.thumbnail.bytes);
  await putPdfObject(store, withThumbnail, bytes);
  return withThumbnail;
}

/** What rendering made of a document, before it is stored. */
interface Made {
  readonly bytes: Uint8Array;
  readonly pages: number;
  /** A picture's media type and size. */
  readonly picture?: { readonly contentType: string; readonly width: number; readonly height: number };
  readonly thumbnail?: { readonly bytes: Uint8Array; readonly stored: Omit<StoredThumbnail, 'objectKey'> };
  /** A visible signature's box, printed with the document. */
  readonly box?: PrintedBox;
}

/** Prints the document, and draws its first page when a thumbnail is asked for. */
async function printDocument(request: DocumentRequest, limits: RenderLimits, now: Date, keyId: string, box: BoxStamp | undefined): Promise<Made> {
  const rendered = await renderPdf(request.source, request.options, limits, { now, finish: finishInWorker(keyId), box });
  const made = { bytes: rendered.bytes, pages: rendered.pages, ...(rendered.box && { box: rendered.box }) };
  if (!request.thumbnail) return made;
  // The PDF and its thumbnail share the document's render time limit: the drawing gets what is left.
  const picture = await pictureFirstPage(rendered.bytes, request.thumbnail, limits, rendered.timeLeftMs);
  const stored = { contentType: IMAGE_CONTENT_TYPES[request.thumbnail.format], width: picture.width, height: picture.height, size: picture.bytes.byteLength };
  return { ...made, thumbnail: { bytes: picture.bytes, stored } };
}

/** Pictures the document (`POST /v1/image/generate`): one picture, counted as one page. */
async function pictureDocument(request: DocumentRequest, image: ImageOptions, limits: RenderLimits): Promise<Made> {
  const picture = await renderImage(request.source, request.options, image, limits);
  return { bytes: picture.bytes, pages: 1, picture: { contentType: IMAGE_CONTENT_TYPES[image.format], width: picture.width, height: picture.height } };
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
