/**
 * Stored templates as records (shared/spec/beyond.md "Templates"): what a template may hold, and
 * the checks made when one is saved. Nothing here loads the renderer, so the templates function,
 * which renders nothing, carries none of it (rendering with data: templates.ts).
 */
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { describeIssue, resolveRenderOptions } from '#lib/render/options.ts';
import { URL_ONLY_OPTIONS } from '#lib/render/url-access-options.ts';
import { customerCodePool } from '#lib/customer-code/pool.ts';
import { TemplateError, type TemplateSources } from '#lib/templates/engine.ts';
import { itemOptionsSchema, templateBodySchema, type TemplateBody } from './document-options.ts';

/** A version's content as stored (lib/storage/templates.ts keeps it as this JSON): the body as sent, name aside. */
export type TemplateContent = Omit<TemplateBody, 'name'>;

/** Why a template cannot be saved: the message for a 400, or a size over the tier's limit (413). */
export class TemplateRefusal extends Error {
  override readonly name = 'TemplateRefusal';
  readonly tooLarge: boolean;
  constructor(message: string, { tooLarge = false }: { tooLarge?: boolean } = {}) {
    super(message);
    this.tooLarge = tooLarge;
  }
}

/**
 * Checks a template before it is saved, in the order a caller fixes them: its fields, its options
 * (exactly as a request's), the Liquid syntax of html, header and footer, its data_schema (compiled)
 * and its sample_data against it, then its size against the tier's limit. Answers the name and the
 * content to store (as JSON text). The Liquid and the schema are customer code: checked in a
 * worker of the customer-code pool, on the key's share of it.
 */
export async function prepareTemplate(body: unknown, owner: Pick<ApiKey, 'keyId' | 'tier'>): Promise<{ name: string; content: string }> {
  const { tier } = owner;
  const parsed = templateBodySchema.safeParse(body);
  if (!parsed.success) throw new TemplateRefusal(describeIssue(parsed.error));
  const { name, ...content } = parsed.data;
  const options = content.options ?? {};
  // Header and footer are part of the template, rendered with the data like its html.
  for (const field of ['header_html', 'footer_html'] as const) {
    if (options[field] !== undefined) throw new TemplateRefusal(`options.${field}: give ${field} at the top level of the template, where it is rendered with the data`);
  }
  const urlOnly = URL_ONLY_OPTIONS.find((option) => options[option] !== undefined);
  if (urlOnly) throw new TemplateRefusal(`options.${urlOnly} applies to url documents only; a template is html`);
  const checked = itemOptionsSchema.safeParse(options);
  if (!checked.success) throw new TemplateRefusal(`options: ${describeIssue(checked.error)}`);
  const resolved = resolveRenderOptions(checked.data);
  if ('error' in resolved) throw new TemplateRefusal(`options: ${resolved.error}`);
  const refusal = await customerCodePool().check(owner.keyId, {
    sources: sourcesOf(content),
    ...(content.data_schema !== undefined && { dataSchema: content.data_schema }),
    ...(content.sample_data !== undefined && { sampleData: content.sample_data }),
  });
  if (refusal) throw new TemplateRefusal(refusal.refusal === 'template' ? new TemplateError(refusal.detail, refusal).message : refusal.detail);
  const stored = JSON.stringify(content);
  const limit = TEMPLATE_LIMITS[tier].maxTemplateBytes;
  const size = Buffer.byteLength(stored, 'utf8');
  if (size > limit) throw new TemplateRefusal(`The template is ${size} bytes (html, header, footer, options, data_schema and sample_data as JSON); a ${tier} key's templates may have at most ${limit}.`, { tooLarge: true });
  return { name, content: stored };
}

/** What the engine renders of a version: its html, header and footer. */
export function sourcesOf(content: TemplateContent): TemplateSources {
  return {
    html: content.html,
    ...(content.header_html !== undefined && { header_html: content.header_html }),
    ...(content.footer_html !== undefined && { footer_html: content.footer_html }),
  };
}
