import { describe, expect, it } from 'vitest';
import { checkTemplateSyntax, renderTemplate, TemplateError } from '../../lib/templates/engine.ts';

describe('renderTemplate', () => {
  it('fills a template with data, escaping output unless it is raw', async () => {
    const out = await renderTemplate({ html: '<p>{{ customer.name }}</p>{{ note | raw }}' }, { customer: { name: 'A & <B>' }, note: '<b>x</b>' });
    expect(out).toEqual({ html: '<p>A &amp; &lt;B&gt;</p><b>x</b>' });
  });

  it('keeps the page-number variables in header and footer', async () => {
    const out = await renderTemplate(
      { html: '<p>{{ pageNumber }}</p>', header_html: '<span>{{ title }}</span>', footer_html: '{{pageNumber}} / {{ totalPages }} {{ date }} {{ data.date }}' },
      { title: 'T', date: '2024-01-02', pageNumber: 7 },
    );
    expect(out).toEqual({ html: '<p>7</p>', header_html: '<span>T</span>', footer_html: '{{pageNumber}} / {{totalPages}} {{date}} 2024-01-02' });
  });

  it('refuses a syntax error at save time with its position', () => {
    expect(() => checkTemplateSyntax({ html: 'a\n{% if x %}' })).toThrow(TemplateError);
    expect(() => checkTemplateSyntax({ html: 'ok', footer_html: '{{ x | nope }}' })).toThrow(/footer_html line 1, column 1: undefined filter: nope/);
  });
});
