/**
 * What counts as valid HTML (decisions.md "Requests"): sloppy real-world HTML passes, truncated or
 * corrupt input is refused with a message that says it is malformed and why.
 */
import { describe, expect, it } from 'vitest';
import { findHtmlProblem, inspectHtml } from '#lib/render/html.ts';

describe('findHtmlProblem accepts real-world HTML', () => {
  it.each([
    ['a full document', '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Invoice</title></head><body><h1>Invoice 42</h1></body></html>'],
    ['a fragment without doctype', '<h1>Invoice</h1><p>Total: 10 EUR</p>'],
    ['an unclosed <p>', '<p>first<p>second'],
    ['an unclosed <div>', '<div><span>text'],
    ['plain text', 'Hello, world'],
    ['a stray end tag', '</p>Hello'],
    ['a table with implied rows and cells', '<table><tr><td>1<td>2</table>'],
    ['attributes without quotes', '<p class=total>10</p>'],
    ['a closed script and style', '<style>p{color:red}</style><script>var a = "</p>";</script><p>x</p>'],
    ['a complete comment', '<!-- note --><p>x</p>'],
    ['entities and non-ASCII text', '<p>Grüße &amp; 10&nbsp;€ – 日本</p>'],
  ])('%s', (_name, html) => {
    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toBeUndefined();
  });
});

describe('findHtmlProblem refuses what is not HTML', () => {
  it.each([
    ['the empty string', ''],
    ['only spaces', '   '],
    ['only whitespace and newlines', ' \n\t\r\n '],
  ])('refuses %s as empty', (_name, html) => {
    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toBe('html must not be empty');
  });

  it.each([
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { html: '<p>x</p>' }],
    ['an array', ['<p>x</p>']],
    ['a boolean', true],
  ])('refuses %s as not a string', (_name, html) => {
    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toBe('html must be a string');
  });
});

describe('findHtmlProblem refuses malformed HTML and says why', () => {
  it.each([
    ['an unterminated attribute', '<div class="x', /tag or attribute is not terminated/],
    ['an unterminated tag', '<p>Total</p><div', /tag or attribute is not terminated/],
    ['a tag cut off after "<"', '<p>Total</p><', /tag is cut off/],
    ['an unterminated comment', '<p>x</p><!-- unfinished', /comment is not terminated/],
    ['an unterminated <script>', '<p>x</p><script>var total = 1;', /<script>.* element is not closed/],
    ['an unterminated <style>', '<style>p { color: red', /<style>.* element is not closed/],
    ['an unterminated <title>', '<title>Invoice', /<title> element is not closed/],
    ['an unterminated doctype', '<!DOCTYPE html', /doctype is not terminated/],
    ['a script ending inside an HTML comment', '<script><!-- ', /script is not terminated/],
    ['an unterminated CDATA section in SVG', '<svg><![CDATA[x', /CDATA section is not terminated/],
    ['a NUL character', '<p>a\u0000b</p>', /NUL character/],
    ['a NUL character reference', '<p>&#0;</p>', /NUL character reference/],
  ])('refuses %s', (_name, html, reason) => {
    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toMatch(/^html is malformed: /);
    expect(problem).toMatch(reason);
  });

  it('points at the line and column of the problem', () => {
    // Prepare
    const html = '<h1>Invoice</h1>\n<p>Total</p>\n<div class="x';

    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toMatch(/\(line 3, column 14\)$/);
  });

  it('reports the first problem when there are several', () => {
    // Prepare
    const html = '<p>a\u0000b</p><!-- unfinished';

    // Act
    const problem = findHtmlProblem(html);

    // Assess
    expect(problem).toMatch(/NUL character/);
    expect(problem).not.toMatch(/comment/);
  });
});

describe('inspectHtml tells whether a document needs scripting', () => {
  it.each([
    ['a script element', '<p>x</p><script>1</script>'],
    ['an SVG script', '<svg><script>1</script></svg>'],
    ['an inline event handler', '<img src="x.png" onerror="1">'],
    ['an upper-case handler', '<body ONLOAD="1">'],
    ['a javascript: URL', '<a href="javascript:void(0)">x</a>'],
    ['a javascript: URL with spaces and tabs', '<a href=" \tjava\tscript:void(0)">x</a>'],
    ['a noscript element', '<noscript>enable scripts</noscript>'],
    ['an iframe', '<iframe srcdoc="<p>x</p>"></iframe>'],
    ['an object', '<object data="x.svg"></object>'],
    ['a script inside a template', '<template><script>1</script></template>'],
    ['a lazily loaded image', '<img loading="lazy" src="x.png">'],
  ])('%s needs scripting', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ scripted: true });
  });

  it.each([
    ['plain markup', '<h1>Invoice</h1><table><tr><td>1</td></tr></table>'],
    ['styles and data: images', '<style>p { color: red }</style><img src="data:image/png;base64,AAAA">'],
    ['text that mentions scripts', '<p>the word javascript: and onload= in text</p>'],
    ['an attribute that only starts like a handler name', '<p data-online="yes">x</p>'],
  ])('%s does not', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ scripted: false });
  });

  it('reports every trait of a plain document as absent', () => {
    // Act
    const inspection = inspectHtml('<html lang="ja"><p lang="zh-cn">x</p><p>y</p></html>');

    // Assess
    expect(inspection).toEqual({ scripted: false, webFonts: false, animated: false });
  });
});

describe('inspectHtml tells whether a document declares fonts of its own, which printing must wait for', () => {
  it.each([
    ['an inline font', '<style>@font-face { font-family: Brand; src: url(data:font/woff2;base64,AAAA) }</style><p style="font-family: Brand">x</p>'],
    ['a font by URL', '<style>@FONT-FACE { font-family: Brand; src: url(https://fonts.example/brand.woff2) }</style>'],
    ['an imported style sheet, which may declare fonts', '<style>@import url(https://cdn.example/fonts.css);</style>'],
    ['a font declared inside SVG', '<svg><style>@font-face { font-family: G; src: url(data:font/ttf;base64,AAAA) }</style><text font-family="G">x</text></svg>'],
  ])('%s counts', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ webFonts: true });
  });

  it.each([
    ['system fonts only', '<style>body { font-family: "DejaVu Sans", sans-serif }</style><p>x</p>'],
    ['the words in text', '<p>Declare fonts with @font-face in your style sheet</p>'],
  ])('%s does not count', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ webFonts: false });
  });
});

describe('inspectHtml tells whether a document animates, which print preview shows finished', () => {
  it.each([
    ['keyframes and an animation', '<style>@keyframes fade { from { opacity: 0 } } h1 { animation: fade 1s forwards }</style><h1>x</h1>'],
    ['a transition in a style sheet', '<style>.bar { transition: width 0.5s }</style>'],
    ['an animation longhand in a style attribute', '<p style="animation-name: fade; animation-duration: 1s">x</p>'],
    ['prefixed keyframes', '<style>@-webkit-keyframes spin { to { transform: rotate(1turn) } }</style>'],
    ['a style sheet from elsewhere, which may animate', '<link rel="stylesheet" href="https://cdn.example/site.css">'],
    ['an imported style sheet, which may animate', '<style>@import "https://cdn.example/site.css";</style>'],
  ])('%s counts', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ animated: true });
  });

  it.each([
    ['plain styles', '<style>p { color: red; font-weight: bold }</style><p>x</p>'],
    ['the words in text', '<p>An animation: a transition: both are words here</p>'],
    ['a property that only ends like one', '<style>.a { --my-transition-time: 1s }</style>'],
  ])('%s does not count', (_what, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toMatchObject({ animated: false });
  });
});

describe('inspectHtml refuses nesting no real document reaches', () => {
  it('accepts thousands of unclosed legacy tags, as Chrome prints them', () => {
    // Act
    const inspection = inspectHtml('<p>' + '<font color="red">'.repeat(5_000) + 'still text');

    // Assess
    expect(inspection.problem).toBeUndefined();
  });

  it('refuses elements nested more than 20,000 deep, naming the limit', () => {
    // Act
    const inspection = inspectHtml('<b>'.repeat(20_001) + 'x');

    // Assess
    expect(inspection.problem).toBe('html nests elements more than 20000 deep');
  });
});
