/**
 * What counts as valid HTML (decisions.md "Requests"): sloppy real-world HTML passes, truncated or
 * corrupt input is refused with a message that says it is malformed and why.
 */
import { describe, expect, it } from 'vitest';
import { findHtmlProblem } from '#lib/render/html.ts';

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
