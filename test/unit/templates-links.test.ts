/**
 * Links in a template's rendered HTML (lib/templates/links.ts): a link to anything but http, https,
 * mailto or tel (a `javascript:` URL from the data, say) loses its href, so Chromium prints its text
 * and makes no link annotation of it; relative and #fragment links stay, and nothing else in the
 * document changes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { html as html5, parse, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { describe, expect, it } from 'vitest';
import { isKeptLinkUrl, withoutUnsafeLinks } from '../../lib/templates/links.ts';
import { renderTemplate } from '../../lib/templates/engine.ts';

type Node = DefaultTreeAdapterTypes.Node;
type Element = DefaultTreeAdapterTypes.Element;

/** Every element of a parsed document, <template> contents included. */
function elementsOf(document: Node): Element[] {
  const elements: Element[] = [];
  const pending: Node[] = [document];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if ('childNodes' in node) pending.push(...node.childNodes);
    if ('content' in node && node.content) pending.push(node.content);
    if ('tagName' in node) elements.push(node);
  }
  return elements;
}

/** Whether a browser would make `element` a link, and to what: its href (an SVG <a>'s xlink:href when it has none). */
function linkOf(element: Element): string | undefined {
  const isLink =
    (element.namespaceURI === html5.NS.HTML && (element.tagName === 'a' || element.tagName === 'area')) ||
    (element.namespaceURI === html5.NS.SVG && element.tagName === 'a');
  if (!isLink) return undefined;
  const href = element.attrs.find((attribute) => attribute.name === 'href' && !attribute.namespace);
  if (href || element.namespaceURI === html5.NS.HTML) return href?.value;
  return element.attrs.find((attribute) => attribute.name === 'href' && attribute.namespace === html5.NS.XLINK)?.value;
}

/** The links of a document as a browser would read it. */
function linksIn(html: string): string[] {
  return elementsOf(parse(html)).flatMap((element) => linkOf(element) ?? []);
}

/** The document a browser would build from `html` with the unsafe links' hrefs taken out of it, written out. */
function meaningWithoutUnsafeLinks(html: string): string {
  const document = parse(html);
  for (const element of elementsOf(document)) {
    const url = linkOf(element);
    if (url !== undefined && !isKeptLinkUrl(url)) element.attrs = element.attrs.filter((attribute) => attribute.name !== 'href');
  }
  return serialize(document);
}

describe('withoutUnsafeLinks', () => {
  it('prints a javascript: link from the data as text, and leaves the rest of the document as it was', () => {
    const html = '<!DOCTYPE html><html lang="de"><p>Website: <a class="site" href="javascript:alert(document.domain)">Müller GmbH</a>, <a href="https://example.com/">shop</a></p></html>';
    const out = withoutUnsafeLinks(html);
    expect(out).toBe('<!DOCTYPE html><html lang="de"><p>Website: <a class="site"  >Müller GmbH</a>, <a href="https://example.com/">shop</a></p></html>');
    expect(linksIn(out)).toEqual(['https://example.com/']);
  });

  it.each([
    'https://example.com/a?b=c#d',
    'HTTP://EXAMPLE.COM',
    'mailto:billing@example.com',
    'tel:+49301234567',
    '#totals',
    '/invoices/42',
    'page2.html',
    '?page=2',
    '',
    '//cdn.example.com/x',
    'java script:x',
    'https://example.com/?a=1&amp;b=2',
    '/list?a=1&amp;b=2',
    'https&#58;//example.com/',
  ])('keeps a link to %j', (url) => {
    const html = `<p><a href="${url}">x</a><map><area href="${url}"></map></p>`;
    expect(withoutUnsafeLinks(html)).toBe(html);
  });

  it.each([
    'javascript:alert(1)',
    ' JavaScript:alert(1)',
    'java\nscript:alert(1)',
    '\tjava\tscript:alert(1)',
    '\u0001javascript:alert(1)',
    '&#106;avascript:alert(1)',
    'javascript&colon;alert(1)',
    'javascript:x&amp;y',
    '&#32;javascript:x',
    'data:text/html;base64,PHNjcmlwdD4=',
    'file:///etc/passwd',
    'ftp://example.com/',
    'vbscript:msgbox(1)',
    'chrome://settings',
    'about:blank',
  ])('takes the href off a link to %j', (url) => {
    const html = `<p><a title="t" href="${url}">x</a> <AREA HREF='${url}' alt=y></p>`;
    const out = withoutUnsafeLinks(html);
    expect(linksIn(out)).toEqual([]);
    expect(out).toBe('<p><a title="t"  >x</a> <AREA   alt=y></p>');
  });

  it('takes every href off a link, the repeated ones a browser ignores too', () => {
    // Taking off only the first would make the second the link.
    expect(withoutUnsafeLinks('<a href="javascript:x" HREF="https://example.com/" href=javascript:y>t</a>')).toBe('<a      >t</a>');
  });

  it('reads the attributes as a browser does, however they are written', () => {
    expect(withoutUnsafeLinks('<a/href=javascript:x>t</a><b>after</b>')).toBe('<a/ >t</a><b>after</b>');
    expect(withoutUnsafeLinks('<a id="x"href="javascript:x"title=y>t</a>')).toBe('<a id="x" title=y>t</a>');
    expect(withoutUnsafeLinks('<a href = \'javascript:x\' data-x="a>b">t</a>')).toBe('<a   data-x="a>b">t</a>');
    expect(withoutUnsafeLinks('<a\r\nhref=javascript:x\r\n>t</a>')).toBe('<a\r\n \r\n>t</a>');
    // A value that looks like an attribute is not one.
    expect(withoutUnsafeLinks('<a title=\'href="javascript:x"\' href="https://example.com/">t</a>')).toBe('<a title=\'href="javascript:x"\' href="https://example.com/">t</a>');
  });

  it('takes the link off SVG <a> elements, by href or xlink:href, and keeps them open', () => {
    const html = '<svg><a xlink:href="javascript:x"><text>one</text></a><a/href="javascript:y"><text>two</text></a><a href="https://example.com/" xlink:href="javascript:z"><text>three</text></a></svg>';
    const out = withoutUnsafeLinks(html);
    expect(out).toBe('<svg><a  ><text>one</text></a><a/ ><text>two</text></a><a href="https://example.com/" xlink:href="javascript:z"><text>three</text></a></svg>');
    // The second <a> still holds its text: `<a/>` would have closed it at once.
    expect(serialize(parse(out))).toBe(meaningWithoutUnsafeLinks(html));
    expect(linksIn(out)).toEqual(['https://example.com/']);
  });

  it('takes the link off the <a> a browser reopens after misnested markup too', () => {
    const html = '<p><a href="javascript:x">one<p>two</a> three<b><a href="javascript:y">four<div>five</b>six</a></div>';
    // The browser makes several links of each tag.
    expect(linksIn(html).length).toBeGreaterThan(2);
    const out = withoutUnsafeLinks(html);
    expect(linksIn(out)).toEqual([]);
    expect(serialize(parse(out))).toBe(meaningWithoutUnsafeLinks(html));
  });

  it('leaves what only looks like a link alone: comments, scripts, text', () => {
    const html = '<!-- <a href="javascript:x"> --><script>var a = \'<a href="javascript:x">\';</script><p>write href="javascript:x" to break things</p><textarea><a href=javascript:x></textarea>';
    expect(withoutUnsafeLinks(html)).toBe(html);
  });

  it('takes the link off the largest document a template renders within the heap of the worker it renders in', async () => {
    // Act: 10,000,000 characters (the engine's output limit) of an invoice's rows, each with a
    // link, one of them to javascript:, in a process with a render worker's 256 MB heap.
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--max-old-space-size=256',
      '--input-type=module',
      '-e',
      `const { withoutUnsafeLinks } = await import('#lib/templates/links.ts');
       const row = '<tr><td><a href="https://example.com/items/1">Item</a></td><td>1,234.50 €</td></tr>\\n';
       const html = ('<!DOCTYPE html><table>' + row.repeat(Math.floor(10_000_000 / row.length) - 1)).replace('https://example.com/items/1', 'javascript:alert(1)');
       const out = withoutUnsafeLinks(html);
       console.log(JSON.stringify({ length: html.length, removed: html.length - out.length, unsafe: out.includes('javascript:') }));`,
    ]);

    // Assess
    const result = JSON.parse(stdout) as { length: number; removed: number; unsafe: boolean };
    expect(result.length).toBeGreaterThan(9_900_000);
    expect(result).toMatchObject({ removed: 'href="javascript:alert(1)"'.length - 1, unsafe: false });
  });

  it('keeps the meaning of any document, links taken off aside', () => {
    const pieces = fc.constantFrom(
      '<a href="javascript:x">', '<a href="https://example.com/">', '<a href="#top">', '<A HREF=JavaScript:y>', '<a href="&#106;avascript:z" href="https://example.com/">',
      '<a/href="data:text/html,x">', '</a>', '<p>', '</p>', '<b>', '</b>', '<i>', '<div>', '</div>', '<table>', '<td>', '<tr>', '</table>',
      '<svg>', '</svg>', '<a xlink:href="javascript:s">', '<a href="tel:1">', '<math>', '</math>', '<template>', '</template>', '<map><area href="file:///x">',
      '<!--', '-->', '<script>', '</script>', '<textarea>', '</textarea>', 'text', ' ', '<frameset>', '<noscript>', '</noscript>', '<a title="a" href=\'vbscript:q\'/>',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 25 }), (parts) => {
        const html = parts.join('');
        const out = withoutUnsafeLinks(html);
        expect(linksIn(out).every(isKeptLinkUrl)).toBe(true);
        expect(serialize(parse(out))).toBe(meaningWithoutUnsafeLinks(html));
      }),
      { seed: 39_007, numRuns: 2_000 },
    );
  });
});

describe('a template filled with data', () => {
  it('prints a javascript: link the data gives as text, and keeps an https one', async () => {
    // Act
    const { html } = await renderTemplate({ html: '<a href="{{ bad }}">bad</a> <a href="{{ good }}">good</a>' }, { bad: 'javascript:alert(1)', good: 'https://example.com/' });

    // Assess
    expect(html).toMatch(/^<a\s*>bad<\/a> <a href="https:\/\/example.com\/">good<\/a>$/);
  });
});
