/**
 * The render function's work for one batch item: validate, render and store its file exactly as the
 * single endpoint does, and answer with an outcome instead of throwing, so that a bad document is
 * a failed item and never a failed invocation. The item's record is written by the batch, only if
 * it still counts the item as done when the outcome arrives (lib/documents/batch.ts).
 */
import { errorFields, logger } from '#lib/observability/logger.ts';
import { recordDocumentFailure } from '#lib/observability/metrics.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { batchItemCode, type RenderGroupInvocation, type RenderInvocation, type RenderOutcome } from './batch.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { renderToObject } from './produce-pdf.ts';
import { prepareRequestedDocument, templateReader, type TemplateReader } from './templates.ts';
import type { TemplateStore } from '#lib/storage/templates.ts';

/**
 * Several items of one batch in one invocation (the batch's fan-out was throttled): one after the
 * other, each exactly as if it had an invocation of its own (its own workspace, its own outcome).
 */
export async function renderItems(store: PdfStore & TemplateStore, { items, ...common }: RenderGroupInvocation): Promise<RenderOutcome[]> {
  const outcomes: RenderOutcome[] = [];
  // The items of one group share their templates: each is read (and its data_schema compiled) once.
  const templates = templateReader(store, common.owner);
  for (const item of items) outcomes.push(await renderItem(store, { ...common, ...item }, templates));
  return outcomes;
}

/**
 * One item: html or url, or a stored template rendered with the item's data (read here, where the
 * document is made, so an item carries only its data however large a batch or bulk job is).
 */
export async function renderItem(store: PdfStore & TemplateStore, invocation: RenderInvocation, templates?: TemplateReader): Promise<RenderOutcome> {
  try {
    const { options, ...source } = invocation.item;
    const request = await prepareRequestedDocument({ ...source, options }, () => (templates ??= templateReader(store, invocation.owner)));
    const { reservationId, pdfId, renderTimeoutMs } = invocation;
    const making = { reservationId, ...(pdfId !== undefined && { pdfId }), ...(renderTimeoutMs !== undefined && { renderTimeoutMs }) };
    return { ok: true, record: await renderToObject(store, invocation.owner, request, making) };
  } catch (error) {
    if (error instanceof DocumentError) {
      recordDocumentFailure(error.code);
      return { ok: false, code: batchItemCode(error.code), message: error.message };
    }
    recordDocumentFailure('RENDER_FAILED');
    logger.error('batch item failed', errorFields(error));
    return { ok: false, code: 'RENDER_FAILED', message: 'The document could not be rendered' };
  }
}
