/**
 * Stored templates as documents (shared/spec/beyond.md "Templates"): rendering one with data into a
 * document request (what a template may hold, and the checks made when one is saved, are in
 * template-records.ts, which loads no renderer).
 *
 * A template rendered with its data becomes plain HTML (lib/templates/engine.ts), which then takes
 * exactly the path an `html` request takes (prepareDocument): the same checks, the same renderer,
 * the same egress guard and isolation. Everything that can fail about a template (it is unknown,
 * the data does not match its schema, the engine refuses it) fails before anything is charged.
 */
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { describeIssue, renderOptionsShape } from '#lib/render/options.ts';
import { DocumentError, quoteInput } from '#lib/render/errors.ts';
import { getTemplateHead, getTemplateVersion, type TemplateStore } from '#lib/storage/templates.ts';
import { customerCodePool } from '#lib/customer-code/pool.ts';
import { canonicalLocale, TemplateError, type TemplateSources } from '#lib/templates/engine.ts';
import { MAX_PREVIEW_PDF_BYTES, templateIdSchema, templateVersionSchema } from './document-options.ts';
import { sourcesOf, type TemplateContent } from './template-records.ts';
import { prepareDocument, renderLimits, type DocumentOutput, type DocumentRequest } from './produce-pdf.ts';
import { markedAsPreview } from './preview-mark.ts';
import { finishInWorker } from './pdf-workers.ts';
import { renderPdf } from '#lib/render/render.ts';
import { sourceProblem } from './source.ts';


/** A version ready to render: whose it is, and its content. */
export interface ResolvedTemplate {
  readonly keyId: string;
  readonly id: string;
  readonly version: number;
  readonly content: TemplateContent;
}

/**
 * Versions never change, so a version read is kept for reuse by later requests in the same
 * process (a bulk job renders thousands of documents from one template; its data_schema compiled
 * is kept by the customer-code workers). Whose it is and whether it was deleted are still read for
 * every request.
 */
const storedVersions = new Map<string, ResolvedTemplate>();
const MAX_STORED_VERSIONS = 64;

/**
 * What reads the caller's templates for one request (or one render invocation): each template and
 * version once, however many documents use it. Undefined when the template does not exist, is
 * another key's, was deleted, or has no such version.
 */
export type TemplateReader = (id: string, version: number | undefined) => Promise<ResolvedTemplate | undefined>;

export function templateReader(store: TemplateStore, owner: Pick<ApiKey, 'keyId' | 'tier'>): TemplateReader {
  const heads = new Map<string, Promise<Awaited<ReturnType<typeof getTemplateHead>>>>();
  const versions = new Map<string, Promise<ResolvedTemplate | undefined>>();
  return async (id, version) => {
    let head = heads.get(id);
    if (!head) heads.set(id, (head = getTemplateHead(store, id)));
    const found = await head;
    if (!found || found.keyId !== owner.keyId) return undefined;
    const wanted = version ?? found.latestVersion;
    // Only the tier's kept versions render: one pruned since is gone from the store, but maybe not
    // from this process's cache of compiled versions.
    if (wanted > found.latestVersion || wanted <= found.latestVersion - TEMPLATE_LIMITS[owner.tier].versionsKept) return undefined;
    const cacheKey = `${id}@${wanted}`;
    let resolved = versions.get(cacheKey);
    if (!resolved) versions.set(cacheKey, (resolved = loadVersion(store, owner.keyId, id, wanted)));
    return resolved;
  };
}

async function loadVersion(store: TemplateStore, keyId: string, id: string, version: number): Promise<ResolvedTemplate | undefined> {
  const cacheKey = `${keyId}/${id}@${version}`;
  const cached = storedVersions.get(cacheKey);
  if (cached) return cached;
  const stored = await getTemplateVersion(store, id, version);
  if (!stored || stored.keyId !== keyId) return undefined;
  const resolved: ResolvedTemplate = { keyId, id, version, content: JSON.parse(stored.body) as TemplateContent };
  if (storedVersions.size >= MAX_STORED_VERSIONS) storedVersions.delete(storedVersions.keys().next().value as string);
  storedVersions.set(cacheKey, resolved);
  return resolved;
}

/** What a document request may say about its source: html, url, or a template and its data. */
export interface DocumentSourceInput {
  readonly html?: unknown;
  readonly url?: unknown;
  readonly markdown?: unknown;
  readonly template_id?: unknown;
  readonly template_version?: unknown;
  readonly data?: unknown;
}

/**
 * Validates a document request, whichever source it gives: html and url exactly as before
 * (prepareDocument); a template is read, its data checked against its data_schema, rendered, and its
 * HTML then prepared as an html request with the template's options under the request's own (the
 * request's win, option by option). `readTemplates` is asked only when a template is.
 */
export async function prepareRequestedDocument(
  input: DocumentSourceInput & { readonly options: unknown },
  keyId: string,
  readTemplates: () => TemplateReader,
  output: DocumentOutput = 'pdf',
): Promise<DocumentRequest> {
  const missingOrSeveral = sourceProblem(input);
  if (missingOrSeveral) throw missingOrSeveral;
  if (input.template_id === undefined) {
    const stray = (['template_version', 'data'] as const).find((field) => input[field] !== undefined);
    const given = input.html !== undefined ? 'html' : input.markdown !== undefined ? 'markdown' : 'url';
    if (stray) throw new DocumentError('INVALID_OPTIONS', `${stray} applies to template_id only; this request gives ${given}`);
    if (input.url !== undefined && typeof input.url !== 'string') throw new DocumentError('URL_NOT_ALLOWED', 'url must be a string');
    return prepareDocument({ html: input.html, url: input.url as string | undefined, markdown: input.markdown, options: input.options, keyId, output });
  }
  const id = templateIdSchema.safeParse(input.template_id);
  if (!id.success) throw new DocumentError('INVALID_OPTIONS', describeIssue(id.error));
  const version = templateVersionSchema.optional().safeParse(input.template_version);
  if (!version.success) throw new DocumentError('INVALID_OPTIONS', describeIssue(version.error));
  const requestOptions = input.options ?? {};
  if (typeof requestOptions !== 'object' || requestOptions === null || Array.isArray(requestOptions)) throw new DocumentError('INVALID_OPTIONS', 'options must be an object');
  const data = input.data ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new DocumentError('INVALID_OPTIONS', 'data must be a JSON object');

  const template = await readTemplates()(id.data, version.data);
  if (!template) {
    const which = version.data === undefined ? '' : ` with version ${version.data}`;
    throw new DocumentError('TEMPLATE_NOT_FOUND', `No template ${quoteInput(id.data)}${which} exists for this API key (it may have been deleted, or that version is no longer kept).`);
  }
  const rendered = await renderWithData(template, data);
  // The template's header and footer as the data rendered them: what the renderer refuses of them
  // (longer than it prints, nested too deep) is the template's to mend, as its html is. A request's
  // own header or footer replaces the template's, and is checked as the request's, below.
  for (const field of ['header_html', 'footer_html'] as const) {
    const value = rendered[field];
    if (value === undefined || (requestOptions as Record<string, unknown>)[field] !== undefined) continue;
    const checked = renderOptionsShape[field].safeParse(value);
    if (!checked.success) throw new DocumentError('TEMPLATE_ERROR', `The template rendered with this data has a ${field} that cannot be printed: ${describeIssue(checked.error)}`);
  }
  const options = {
    ...template.content.options,
    ...(rendered.header_html !== undefined && { header_html: rendered.header_html }),
    ...(rendered.footer_html !== undefined && { footer_html: rendered.footer_html }),
    ...(requestOptions as Record<string, unknown>),
  };
  let request: DocumentRequest;
  try {
    request = await prepareDocument({ html: rendered.html, options, keyId, output });
  } catch (error) {
    // The template's own output: what the data made of it is the template's to mend, not the request's.
    if (error instanceof DocumentError && error.code === 'INVALID_HTML') throw new DocumentError('TEMPLATE_ERROR', `The template rendered with this data is not usable HTML: ${error.message}`);
    throw error;
  }
  return { ...request, template: { id: template.id, version: template.version } };
}

/**
 * The locale the data asks its document's numbers, currencies and dates to be written in: its
 * `locale` field (a BCP 47 tag such as "de-DE"), so one template serves every customer's language.
 * Without one the engine takes the template's `<html lang>`, else en-US. A `locale` that is not a
 * language tag is the data's mistake: INVALID_OPTIONS naming it.
 */
function localeOf(data: unknown): string | undefined {
  const locale = (data as { locale?: unknown }).locale;
  if (locale === undefined) return undefined;
  const canonical = canonicalLocale(locale);
  if (canonical !== undefined) return canonical;
  throw new DocumentError('INVALID_OPTIONS', `data.locale must be a BCP 47 language tag such as "de-DE" or "en-US"; got ${quoteInput(JSON.stringify(locale) ?? String(locale))}`);
}

/**
 * A version rendered with data, in a customer-code worker on its key's share: the data checked
 * against its data_schema first (INVALID_OPTIONS naming the JSON pointer), then the engine
 * (TEMPLATE_ERROR with the engine's own, customer-safe words, or the limit the worker hit).
 * Preview uses it with the sample data.
 */
export async function renderWithData(template: ResolvedTemplate, data: unknown): Promise<TemplateSources> {
  const locale = localeOf(data);
  const { data_schema: dataSchema } = template.content;
  const filled = await customerCodePool().fill(template.keyId, {
    sources: sourcesOf(template.content),
    data,
    ...(locale !== undefined && { locale }),
    ...(dataSchema !== undefined && { schema: { version: `${template.keyId}/${template.id}@${template.version}`, dataSchema } }),
  });
  if ('sources' in filled) return filled.sources;
  if (filled.refusal === 'data') throw new DocumentError('INVALID_OPTIONS', `data does not match the template's data_schema: ${filled.detail}`);
  throw new DocumentError('TEMPLATE_ERROR', new TemplateError(filled.detail, filled).message);
}


/**
 * A template previewed (`POST /v1/templates/{template_id}/preview`): its document request, rendered
 * with `data`, or with its sample data when none is sent, exactly as generate would.
 */
export async function preparePreview(reference: { id: string; version?: number; data?: unknown }, keyId: string, readTemplates: TemplateReader): Promise<DocumentRequest> {
  const template = await readTemplates(reference.id, reference.version);
  const data = reference.data ?? template?.content.sample_data;
  return prepareRequestedDocument(
    { template_id: reference.id, ...(reference.version !== undefined && { template_version: reference.version }), ...(data !== undefined && { data }), options: {} },
    keyId,
    () => readTemplates,
  );
}

/**
 * A preview's PDF: rendered under the same limits as any document (the size to MAX_PREVIEW_PDF_BYTES),
 * stored nowhere, and marked PREVIEW on every page (preview-mark.ts: uncharged, it must be no
 * substitute for a document).
 */
export async function renderPreview(request: DocumentRequest, keyId: string): Promise<{ bytes: Uint8Array; pages: number }> {
  const limits = renderLimits();
  const marked = markedAsPreview(request);
  // The mark is drawn by finishing, in a worker on the key's share (./pdf-workers.ts).
  return renderPdf(marked.source, marked.options, { ...limits, maxPdfBytes: Math.min(limits.maxPdfBytes, MAX_PREVIEW_PDF_BYTES) }, { finish: finishInWorker(keyId) });
}
