/**
 * The render function's work for one batch item: validate, render and store its file exactly as the
 * single endpoint does, and answer with an outcome instead of throwing, so that a bad document is
 * a failed item and never a failed invocation. The item's record is written by the batch, only if
 * it still counts the item as done when the outcome arrives (lib/documents/batch.ts).
 */
import { errorFields, logger } from '#lib/observability/logger.ts';
import { recordDocumentFailure } from '#lib/observability/metrics.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { batchItemCode, type GroupItemOutcome, type RenderGroupInvocation, type RenderInvocation, type RenderOutcome } from './batch.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { renderToObject } from './produce-pdf.ts';
import { prepareRequestedDocument, templateReader, type TemplateReader } from './templates.ts';
import type { TemplateStore } from '#lib/storage/templates.ts';
import { settings } from '#lib/settings.ts';

/** Least time left for an item of a group to be started: less would only make a render time limit no document meets. */
const MIN_TIME_TO_START_MS = 1_000;

/**
 * Several items of one batch in one invocation (the batch's fan-out was throttled): one after the
 * other, each exactly as if it had an invocation of its own (its own workspace, its own outcome).
 * Within `answerWithinMs`: an item is not started when the longest one so far would not end in the
 * time left, and one started gets no more render time than is left, so the group answers while the
 * batch still waits for it, with the items done.
 */
export async function renderItems(store: PdfStore & TemplateStore, { items, answerWithinMs, ...common }: RenderGroupInvocation): Promise<GroupItemOutcome[]> {
  const answerBy = performance.now() + (answerWithinMs ?? Number.POSITIVE_INFINITY);
  const outcomes: GroupItemOutcome[] = [];
  // The items of one group share their templates: each is read (and its data_schema compiled) once.
  const templates = templateReader(store, common.owner);
  let longestMs = 0;
  for (const item of items) {
    const started = performance.now();
    const leftMs = answerBy - started;
    if (leftMs <= Math.max(longestMs, MIN_TIME_TO_START_MS)) {
      outcomes.push({ notStarted: true });
      continue;
    }
    const renderTimeoutMs = Math.min(common.renderTimeoutMs ?? settings.renderTimeoutMs, Math.floor(leftMs));
    outcomes.push(await renderItem(store, { ...common, ...item, renderTimeoutMs }, templates));
    longestMs = Math.max(longestMs, performance.now() - started);
  }
  return outcomes;
}

/**
 * Tries of one item whose render failed for a passing reason: a renderer that crashed or could not
 * start, a store that failed. That is the service's failure, not the document's (whose own failures,
 * an invalid option, a timeout, a page limit, an unreachable url, are answered at once), and on a
 * machine under load it comes and goes: the item is tried once more in a fresh workspace.
 */
const ITEM_TRIES = 2;

/**
 * One item: html or url, or a stored template rendered with the item's data (read here, where the
 * document is made, so an item carries only its data however large a batch or bulk job is). An item
 * that failed for a passing reason is tried again if its first try took less than half its render
 * time limit: both tries then end within the time its caller gave it.
 */
export async function renderItem(store: PdfStore & TemplateStore, invocation: RenderInvocation, templates?: TemplateReader): Promise<RenderOutcome> {
  const startedAt = performance.now();
  const limitMs = invocation.renderTimeoutMs ?? settings.renderTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    const tried = await tryItem(store, invocation, () => (templates ??= templateReader(store, invocation.owner)));
    const again = tried.passingFailure !== undefined && attempt < ITEM_TRIES && performance.now() - startedAt < limitMs / 2;
    if (!again) {
      if (tried.failureCode !== undefined) recordDocumentFailure(tried.failureCode);
      if (tried.passingFailure !== undefined) logger.error('batch item failed', errorFields(tried.passingFailure));
      return tried.outcome;
    }
    logger.warn('batch item failed for a passing reason; trying it once more', errorFields(tried.passingFailure));
  }
}

/** One try of an item: its outcome; when it failed, its failure's code (before batchItemCode), and the error if the reason was a passing one (see ITEM_TRIES). */
async function tryItem(
  store: PdfStore & TemplateStore,
  invocation: RenderInvocation,
  templates: () => TemplateReader,
): Promise<{ outcome: RenderOutcome; failureCode?: string; passingFailure?: unknown }> {
  try {
    const { options, output, ...source } = invocation.item;
    const request = await prepareRequestedDocument({ ...source, options }, invocation.owner.keyId, templates, output);
    const { reservationId, pdfId, renderTimeoutMs } = invocation;
    const making = { reservationId, ...(pdfId !== undefined && { pdfId }), ...(renderTimeoutMs !== undefined && { renderTimeoutMs }) };
    return { outcome: { ok: true, record: await renderToObject(store, invocation.owner, request, making) } };
  } catch (error) {
    if (error instanceof DocumentError) {
      const outcome = { ok: false, code: batchItemCode(error.code), message: error.message } as const;
      return { outcome, failureCode: error.code, ...(error.code === 'RENDER_FAILED' && { passingFailure: error }) };
    }
    return { outcome: { ok: false, code: 'RENDER_FAILED', message: 'The document could not be rendered' }, failureCode: 'RENDER_FAILED', passingFailure: error };
  }
}
