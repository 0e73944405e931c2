import { ApiError, invalidRequest, notFound } from '#lib/api/errors.ts';
import { decodeListCursor, encodeListCursor } from '#lib/api/list-cursors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { apiHandler, readJsonObjectBody } from '#lib/api/middlewares.ts';
import { templateSummaryView, templateView } from '#lib/api/views.ts';
import { TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { templateStore } from '#lib/aws/stores.ts';
import { prepareTemplate, TemplateRefusal } from '#lib/documents/template-records.ts';
import { settings } from '#lib/settings.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '#lib/storage/pdfs.ts';
import {
  addTemplateVersion,
  createTemplate,
  deleteTemplate,
  getTemplateHead,
  getTemplateVersion,
  listTemplates,
  newTemplateId,
  type TemplateHead,
} from '#lib/storage/templates.ts';

function pageSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(raw);
  if (!/^\d{1,3}$/.test(raw) || size < 1 || size > MAX_PAGE_SIZE) throw invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return size;
}

/** A template body as saved: 400 naming the problem, or 413 over the tier's size. */
async function prepared(body: Record<string, unknown>, owner: Parameters<typeof prepareTemplate>[1]) {
  try {
    return await prepareTemplate(body, owner);
  } catch (error) {
    if (error instanceof TemplateRefusal) throw error.tooLarge ? new ApiError('payload_too_large', error.message) : invalidRequest(error.message);
    throw error;
  }
}

const missing = (id: string) => notFound(`No template ${JSON.stringify(id.slice(0, 80))} exists for this API key.`);

/**
 * The template store (shared/spec/beyond.md "Templates"), scoped to the calling key: another key's
 * template is indistinguishable from a missing one (404), for every route.
 * - GET /v1/templates: the key's templates, newest first, a page at a time (like GET /v1/pdf).
 * - POST /v1/templates: a new template, its version 1 (201).
 * - GET /v1/templates/{template_id}: its latest version, or `?version=N`.
 * - PUT /v1/templates/{template_id}: a new version (versions never change; older ones stay renderable).
 * - DELETE /v1/templates/{template_id}: no new renders from it; PDFs made from it stay (204).
 */
export const handler = apiHandler({ auth: byApiKey, body: false }, async ({ event, apiKey }) => {
  const store = templateStore();
  const limits = TEMPLATE_LIMITS[apiKey.tier];
  const baseUrl = publicBaseUrl(event);
  const id = event.pathParameters?.template_id;
  const now = new Date();

  if (id === undefined) {
    if (event.httpMethod === 'POST') {
      const { name, content } = await prepared(readJsonObjectBody(event), apiKey);
      const created = await createTemplate(store, { id: newTemplateId(), keyId: apiKey.keyId, name, body: content, now, maxTemplates: limits.maxTemplates });
      if ('limitReached' in created) {
        throw new ApiError('template_limit_exceeded', `A ${apiKey.tier} key may keep at most ${limits.maxTemplates} templates; delete one to create another.`, {
          extra: { max_templates: limits.maxTemplates },
        });
      }
      return json(201, templateView(created.head, created.version), { Location: `${baseUrl}/v1/templates/${created.head.id}` });
    }
    const query = event.queryStringParameters ?? {};
    const after = decodeListCursor(query.cursor, apiKey.keyId, settings.linkSigningSecret, 'templates');
    const page = await listTemplates(store, apiKey.keyId, { limit: pageSize(query.limit), ...(after && { after }) });
    return json(200, {
      data: page.heads.map(templateSummaryView),
      next_cursor: page.next ? encodeListCursor(page.next, apiKey.keyId, settings.linkSigningSecret, 'templates') : null,
    });
  }

  const head: TemplateHead | undefined = /^tpl_[0-9A-Za-z]{1,64}$/.test(id) ? await getTemplateHead(store, id) : undefined;
  if (!head || head.keyId !== apiKey.keyId) throw missing(id);

  if (event.httpMethod === 'PUT') {
    const { name, content } = await prepared(readJsonObjectBody(event), apiKey);
    const saved = await addTemplateVersion(store, { id, keyId: apiKey.keyId, name, body: content, now, versionsKept: limits.versionsKept });
    if (!saved) throw missing(id); // deleted meanwhile
    return json(200, templateView(saved.head, saved.version));
  }
  if (event.httpMethod === 'DELETE') {
    await deleteTemplate(store, head, { now });
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
  }
  const asked = event.queryStringParameters?.version;
  if (asked !== undefined && !/^[1-9]\d{0,9}$/.test(asked)) throw invalidRequest('version must be a whole number from 1');
  const number = asked === undefined ? head.latestVersion : Number(asked);
  const version = number <= head.latestVersion ? await getTemplateVersion(store, id, number) : undefined;
  if (!version || version.keyId !== apiKey.keyId) {
    throw notFound(`Template ${id} has no version ${number}: its latest is ${head.latestVersion}, and a ${apiKey.tier} key's templates keep their last ${limits.versionsKept}.`);
  }
  return json(200, templateView(head, version));
});
