/**
 * A stored template as a document request (lib/documents/templates.ts): what its rendered header and
 * footer break is the template's to mend (TEMPLATE_ERROR, 422), not the request's.
 */
import { describe, expect, it } from 'vitest';
import { prepareRequestedDocument, type TemplateReader } from '../../lib/documents/templates.ts';
import { DocumentError } from '../../lib/render/errors.ts';
import { MAX_MARGIN_BOX_CHARS } from '../../lib/render/options.ts';

/** A reader that has one template, with these sources. */
function readerOf(content: { html: string; header_html?: string; footer_html?: string }): TemplateReader {
  return async (id, version) => ({ keyId: 'key_test', id, version: version ?? 1, content });
}

async function failure(reader: TemplateReader, options: object = {}): Promise<DocumentError> {
  try {
    await prepareRequestedDocument({ template_id: 'tpl_footer', data: { n: 20_000 }, options }, 'key_test', () => reader);
  } catch (error) {
    expect(error).toBeInstanceOf(DocumentError);
    return error as DocumentError;
  }
  throw new Error('the request was accepted');
}

describe('prepareRequestedDocument', () => {
  it('blames a footer that renders too long for the margin on the template, not the request', async () => {
    // Short as written; with this data it renders to 160,000 characters.
    const reader = readerOf({ html: '<p>Invoice</p>', footer_html: '{% for i in (1..n) %}<b>x</b>{% endfor %}' });
    const error = await failure(reader);
    expect(error.code).toBe('TEMPLATE_ERROR');
    expect(error.message).toContain(`footer_html must be at most ${MAX_MARGIN_BOX_CHARS} characters`);
  });

  it('blames a header that renders too deep on the template', async () => {
    const reader = readerOf({ html: '<p>Invoice</p>', header_html: '{% for i in (1..101) %}<span>{% endfor %}x' });
    const error = await failure(reader);
    expect(error.code).toBe('TEMPLATE_ERROR');
    expect(error.message).toContain('header_html nests elements more than 100 deep');
  });

  it('still blames the request for a footer of its own, and lets it replace the template’s', async () => {
    const reader = readerOf({ html: '<p>Invoice</p>', footer_html: '{% for i in (1..n) %}<b>x</b>{% endfor %}' });
    expect((await failure(reader, { footer_html: 'x'.repeat(MAX_MARGIN_BOX_CHARS + 1) })).code).toBe('INVALID_OPTIONS');
    const request = await prepareRequestedDocument({ template_id: 'tpl_footer', data: { n: 20_000 }, options: { footer_html: '<span>Page</span>' } }, 'key_test', () => reader);
    expect(request.options.footerHtml).toBe('<span>Page</span>');
  });
});
