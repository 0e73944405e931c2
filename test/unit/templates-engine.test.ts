/**
 * The template engine's contract with the rest of the API (lib/templates/engine.ts): data in,
 * HTML out, escaped unless raw, header/footer page numbers kept for the renderer, syntax checked
 * at save time, every failure a TemplateError whose message is safe to show the customer.
 */
import { describe, expect, it } from 'vitest';
import { substituteMarginBoxVariables } from '../../lib/render/margin-boxes.ts';
import { checkTemplateSyntax, DOCUMENT_FILTERS, renderTemplate, TemplateError, type TemplateSources } from '../../lib/templates/engine.ts';

async function failure(sources: TemplateSources, data: unknown = {}, locale?: string): Promise<TemplateError> {
  try {
    await renderTemplate(sources, data, locale === undefined ? {} : { locale });
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('the template rendered');
}

describe('renderTemplate', () => {
  it('fills a template with the data fields, and the whole as data', async () => {
    const data = { customer: { name: 'Ada' }, lines: [{ item: 'Tea', qty: 2 }, { item: 'Cake', qty: 1 }] };
    const out = await renderTemplate(
      { html: '<h1>{{ customer.name }}</h1>{% for line in lines %}<p>{{ forloop.index }}. {{ line.item }} x{{ line.qty }}</p>{% endfor %}{{ data.customer.name }}' },
      data,
    );
    expect(out).toEqual({ html: '<h1>Ada</h1><p>1. Tea x2</p><p>2. Cake x1</p>Ada' });
  });

  it('takes data that is not an object as data', async () => {
    expect((await renderTemplate({ html: '{{ data | size }}:{{ data[1] }}' }, ['a', 'b'])).html).toBe('2:b');
    expect((await renderTemplate({ html: '[{{ data }}]' }, undefined)).html).toBe('[]');
  });

  it('escapes output unless its last filter is raw', async () => {
    const data = { name: `<script>alert("x")</script> & 'co'`, markup: '<b>bold</b>' };
    const out = await renderTemplate({ html: '{{ name }}|{{ markup | raw }}|{{ markup | raw | upcase }}|{{ markup | upcase | raw }}|{% echo name %}' }, data);
    expect(out.html).toBe(
      '&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;co&#39;|<b>bold</b>|&lt;B&gt;BOLD&lt;/B&gt;|<B>BOLD</B>|' +
        '&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;co&#39;',
    );
  });

  it('keeps {{pageNumber}}, {{totalPages}} and {{date}} in header and footer for the renderer', async () => {
    const out = await renderTemplate(
      {
        html: '<p>[{{ pageNumber }}]</p>',
        header_html: '<span>{{ title }}</span>',
        footer_html: '<span>{{pageNumber}} / {{ totalPages }}</span> {{ date }} (invoice of {{ data.date }})',
      },
      { title: 'T & Co', date: '2024-01-02', pageNumber: 7 },
    );
    expect(out).toEqual({
      // In the body they are ordinary variables: the data's, or nothing.
      html: '<p>[7]</p>',
      header_html: '<span>T &amp; Co</span>',
      footer_html: '<span>{{pageNumber}} / {{totalPages}}</span> {{date}} (invoice of 2024-01-02)',
    });
    // ...which the renderer then turns into Chromium's page-number classes, as for direct requests.
    expect(substituteMarginBoxVariables(out.footer_html!, new Date('2030-05-06T00:00:00Z'))).toBe(
      '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span> 2030-05-06 (invoice of 2024-01-02)',
    );
  });

  it('leaves out the sources it was not given', async () => {
    expect(await renderTemplate({ html: 'x', footer_html: 'f' }, {})).toEqual({ html: 'x', footer_html: 'f' });
  });

  it('keeps nothing from one render to the next', async () => {
    await renderTemplate({ html: '{% assign leaked = "yes" %}{% increment counter %}{% capture c %}z{% endcapture %}' }, {});
    expect((await renderTemplate({ html: '[{{ leaked }}{{ c }}]{% increment counter %}' }, {})).html).toBe('[]0');
  });

  it('does not change the caller’s data, whatever the template does', async () => {
    const data = { lines: [1, 2, 3], customer: { name: 'Ada' } };
    const before = structuredClone(data);
    const out = await renderTemplate(
      {
        html:
          '{% assign lines = lines | push: 4 %}{% assign p = data.lines | pop %}{% assign s = data.lines | shift %}' +
          '{% increment customer %}{% assign customer = "x" %}{{ lines | size }} {{ data.lines | size }} {{ customer }}',
      },
      data,
    );
    // increment prints the counter (0) into an environment of its own, not the data.
    expect(out.html).toBe('04 3 x');
    expect(data).toEqual(before);
  });

  it('keeps increment and decrement counters apart from data and assigned variables, as Shopify does', async () => {
    const data = { total: 5, customer: { name: 'Ada' } };
    // A counter named like a data field starts at 0 and leaves the field as it is.
    expect((await renderTemplate({ html: '{% increment total %}{% increment total %}|{{ total }}|{{ data.total }}' }, data)).html).toBe('01|5|5');
    // ...also one named like the whole of the data, or an object of it.
    expect((await renderTemplate({ html: '{% increment data %}{% decrement customer %}|{{ data.customer.name }} {{ customer.name }}' }, data)).html).toBe('0-1|Ada Ada');
    // assign neither starts nor hides a counter (Shopify's own example).
    expect((await renderTemplate({ html: '{% assign var = 10 %}{% increment var %}{% increment var %}{% increment var %}|{{ var }}' }, {})).html).toBe('012|10');
    // One counter for both tags; readable as a variable where nothing else has its name.
    expect((await renderTemplate({ html: '{% decrement c %}{% decrement c %}{% increment c %}|{{ c }}|{% liquid increment c %}' }, {})).html).toBe('-1-2-2|-1|-1');
    // Each source counts on its own.
    expect(await renderTemplate({ html: '{% increment n %}{% increment n %}', footer_html: '{% increment n %}' }, {})).toEqual({ html: '01', footer_html: '0' });
  });

  it('keeps a data field called __proto__ a field', async () => {
    const data = JSON.parse('{"__proto__": {"polluted": "yes"}, "name": "n"}') as unknown;
    expect((await renderTemplate({ html: '{{ name }}|{{ polluted }}|{{ data.polluted }}|{{ data.__proto__.polluted }}' }, data)).html).toBe('n|||yes');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses data that is not JSON', async () => {
    expect((await failure({ html: 'x' }, { f: () => 1 })).message).toBe('data must be JSON');
    expect((await failure({ html: 'x' }, { n: Number.NaN })).message).toMatch(/finite/);
    expect((await failure({ html: 'x' }, { d: new Date() })).message).toMatch(/plain objects/);
  });

  it('takes the locale from the options, else <html lang>, else en-US', async () => {
    const html = '{{ 1234.5 | number: 2 }}';
    expect((await renderTemplate({ html }, {})).html).toBe('1,234.50');
    expect((await renderTemplate({ html: `<html lang="de-DE">${html}</html>` }, {})).html).toBe('<html lang="de-DE">1.234,50</html>');
    expect((await renderTemplate({ html: `<html lang="fr">${html}` }, {}, { locale: 'de-DE' })).html).toBe('<html lang="fr">1.234,50');
    expect((await renderTemplate({ html: `<html lang="{{ lang }}">${html}` }, { lang: 'de' })).html).toBe('<html lang="de">1,234.50');
    const error = await failure({ html }, {}, 'not a locale!');
    expect(error.message).toBe('locale "not a locale!" is not a BCP 47 language tag (like "en-US" or "de-DE")');
  });

  it('reads <html lang> from the html element, as a browser does, not from comments or scripts', async () => {
    const number = '{{ 1234.5 | number: 2 }}';
    const locale = async (html: string) => (await renderTemplate({ html: html + number }, {})).html.slice(-8);
    expect(await locale('<!-- <html lang="de-DE"> --><html lang="fr-FR">')).toBe('1\u202f234,50');
    expect(await locale('<!DOCTYPE html><!-- <html lang="de-DE"> --><html>')).toBe('1,234.50');
    expect(await locale('<script>document.write(\'<html lang="de-DE">\')</script>')).toBe('1,234.50');
    expect(await locale('<!doctype html>\n<HTML\n  class="x" LANG=de-DE>')).toBe('1.234,50');
    // A Liquid preamble comes before the html tag: its lang is still the element's, as in a browser.
    expect(await locale('{% liquid\n  assign title = "Rechnung"\n%}\n<!DOCTYPE html>\n<html lang="de-DE">')).toBe('1.234,50');
  });

  it('names the source, line and column of an error', async () => {
    const error = await failure({ html: 'ok', header_html: 'line one\n  {{ 1 | currency: "EURO" }}' });
    expect(error.source).toBe('header_html');
    expect(error.line).toBe(2);
    expect(error.column).toBe(3);
    expect(error.message).toBe('header_html line 2, column 3: currency: the first argument is the currency, a three-letter ISO 4217 code like "EUR" or "USD"');
    expect(error.detail).toMatch(/^currency: /);
  });

  it('registers the document filters', () => {
    expect([...DOCUMENT_FILTERS].sort()).toEqual(['barcode', 'currency', 'date_format', 'epc_qr', 'image_data_url', 'number', 'percent', 'qr_code']);
  });
});

describe('checkTemplateSyntax', () => {
  it('accepts a valid template', () => {
    expect(() =>
      checkTemplateSyntax({
        html: '{% for l in lines %}{{ l.price | currency: "EUR" }}{% endfor %}{{ pay | epc_qr }}',
        footer_html: '{{ pageNumber }}/{{ totalPages }}',
      }),
    ).not.toThrow();
  });

  it.each([
    ['an unclosed tag', { html: 'a\n{% if x %}' }, /^html line 2, column 1: tag \{% if x %\} not closed$/],
    ['an unknown filter', { html: 'ok', footer_html: '{{ x | nope }}' }, /^footer_html line 1, column 1: undefined filter: nope$/],
    ['an unknown tag', { html: '{% shell "ls" %}' }, /^html line 1, column 1: tag "shell" not found$/],
    ['an unclosed output', { html: 'x {{ y' }, /^html line 1, column 3: output "\{\{ y" not closed$/],
    ['an include', { html: '{% include "invoice" %}' }, /^html line 1, column 1: \{% include %\} is not available/],
  ])('refuses %s', (_what, sources, message) => {
    let error: unknown;
    try {
      checkTemplateSyntax(sources);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TemplateError);
    expect((error as Error).message).toMatch(message);
  });

  it('does not run filters: data-dependent errors are for render time', () => {
    expect(() => checkTemplateSyntax({ html: '{{ x | currency: "nope" }}{{ "bad" | barcode: "ean13" }}' })).not.toThrow();
  });
});
