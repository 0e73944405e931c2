/**
 * Header and footer sanitizing (lib/render/margin-boxes.ts): what a margin box may contain, what is
 * removed, and the sealed box it is printed in.
 */
import { describe, expect, it } from 'vitest';
import {
  buildMarginBox,
  fontFaceRules,
  safeFontFamily,
  sanitizeInlineStyle,
  sanitizeMarginBox,
  marginBoxFontUrls,
} from '#lib/render/margin-boxes.ts';

const NOON = new Date('2026-11-21T12:00:00Z');
const FONT_URL = 'data:font/woff2;base64,d09GMgABAAAAAA';

describe('sanitizeMarginBox keeps what headers and footers are made of', () => {
  it.each([
    ['plain text', 'ACME Corp. — Confidential'],
    ['inline formatting', '<b>Invoice</b> <i>42</i> <small>page</small>'],
    ['styled boxes', '<div style="text-align:right;color:#333">Right</div>'],
    ['page number spans', 'Page <span class="pageNumber"></span> of <span class="totalPages"></span>'],
    ['tables', '<table><tbody><tr><td>Left</td><td>Right</td></tr></tbody></table>'],
    ['a data: URL logo', '<img src="data:image/png;base64,iVBORw0KGgo=" width="40" height="20" alt="Logo">'],
    ['a link', '<a href="https://acme.example/terms">Terms</a>'],
    ['inline SVG', '<svg viewBox="0 0 10 10" width="10" height="10"><rect width="10" height="10" fill="#f00"></rect></svg>'],
    ['right-to-left text', '<span dir="rtl" lang="he">חשבונית</span>'],
  ])('keeps %s unchanged', (_name, html) => {
    // Act
    const result = sanitizeMarginBox(html);

    // Assess
    expect(result).toBe(html);
  });

  it('keeps @font-face rules with data: URLs', () => {
    // Prepare
    const html = `<style>@font-face { font-family: Brand; src: url(${FONT_URL}) format("woff2") }</style><span style="font-family:Brand">x</span>`;

    // Act
    const result = sanitizeMarginBox(html);

    // Assess
    expect(result).toContain(`@font-face{font-family: Brand; src: url(${FONT_URL}) format("woff2")}`);
    expect(result).toContain('<span style="font-family:Brand">x</span>');
  });
});

describe('sanitizeMarginBox removes what could run, fetch or escape', () => {
  it.each([
    ['a script', 'A<script>alert(1)</script>B', 'AB'],
    ['an event handler', '<img src="data:image/png;base64,AA" onerror="alert(1)">', '<img src="data:image/png;base64,AA">'],
    ['an upper-case event handler', '<div ONCLICK="x()">x</div>', '<div>x</div>'],
    ['an iframe', 'A<iframe src="https://evil.example"></iframe>B', 'AB'],
    ['an object and an embed', '<object data="x.swf"></object><embed src="x.swf">B', 'B'],
    ['a link element', '<link rel="stylesheet" href="https://evil.example/x.css">B', 'B'],
    ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">B', 'B'],
    ['a base element', '<base href="https://evil.example/">B', 'B'],
    ['a form control', '<input value="x"><button>Click</button>B', 'B'],
    ['an image from the network', '<img src="https://evil.example/track.png">', '<img>'],
    ['a javascript: link', '<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['a comment', 'A<!-- hidden -->B', 'AB'],
    ['a noscript element', '<noscript><p>x</p></noscript>B', 'B'],
    ['a template element', '<template><img src=x onerror=alert(1)></template>B', 'B'],
    ['SVG with a script', '<svg><script>alert(1)</script><rect width="1" height="1"></rect></svg>', '<svg><rect width="1" height="1"></rect></svg>'],
    ['an SVG foreignObject', '<svg><foreignObject><iframe></iframe></foreignObject></svg>', '<svg></svg>'],
    ['an SVG use of an external file', '<svg><use href="https://evil.example/s.svg#x"></use></svg>', '<svg><use></use></svg>'],
    ['MathML', '<math><mtext>x</mtext></math>B', 'B'],
  ])('removes %s', (_name, html, expected) => {
    // Act
    const result = sanitizeMarginBox(html);

    // Assess
    expect(result).toBe(expected);
  });

  it('unwraps unknown elements and keeps their text', () => {
    // Act
    const result = sanitizeMarginBox('<custom-footer><marquee>Moving</marquee> text</custom-footer>');

    // Assess
    expect(result).toBe('Moving text');
  });

  it.each([
    ['background from the network', 'background:url(https://evil.example/x.png)'],
    ['background from the network, quoted', 'background-image: url( "http://evil.example/x.png" )'],
    ['image-set with a plain string URL', 'background-image:image-set("https://evil.example/x.png" 1x)'],
    ['a CSS escape hiding url(', 'background:u\\72l(https://evil.example/x.png)'],
    ['an old IE expression', 'width:expression(alert(1))'],
  ])('drops a style attribute with %s', (_name, style) => {
    // Act
    const result = sanitizeMarginBox(`<div style="${style.replace(/"/g, '&quot;')}">x</div>`);

    // Assess
    expect(result).toBe('<div>x</div>');
  });

  it('keeps a style attribute with a data: URL background', () => {
    // Act
    const result = sanitizeMarginBox('<div style="background:url(data:image/png;base64,AA)">x</div>');

    // Assess
    expect(result).toBe('<div style="background:url(data:image/png;base64,AA)">x</div>');
  });

  it('keeps only @font-face rules of a style element, so it cannot restyle the page around the margin box', () => {
    // Prepare
    const html = `<style>
      #header { position: fixed; top: 400px }
      @import url(https://evil.example/x.css);
      body { background: red }
      @font-face { font-family: A; src: url(${FONT_URL}) }
      @media print { div { display: none } }
    </style>x`;

    // Act
    const result = sanitizeMarginBox(html);

    // Assess
    expect(result).toBe(`<style>@font-face{font-family: A; src: url(${FONT_URL})}</style>x`);
  });

  it('removes a style element with nothing left to keep', () => {
    // Act
    const result = sanitizeMarginBox('<style>div { color: red }</style>x');

    // Assess
    expect(result).toBe('x');
  });

  it('never lets a substituted variable open markup inside an attribute', () => {
    // Prepare: {{pageNumber}} becomes a <span>; inside an attribute it must stay text
    const built = buildMarginBox('<img title="{{pageNumber}} onerror=alert(1) x=" src="data:image/png;base64,AA">', {}, NOON);

    // Act + Assess: the would-be handler stays inside the title's value
    expect(built).toContain('<img title="{{pageNumber}} onerror=alert(1) x=" src="data:image/png;base64,AA">');
  });

  it('is stable: sanitizing its own output changes nothing', () => {
    // Prepare: markup that HTML parsers rearrange
    const tricky = '<table><td>cell</td><p>after</table><svg><p>html in svg</p></svg><a><a>nested</a></a>';

    // Act
    const once = sanitizeMarginBox(tricky);

    // Assess
    expect(sanitizeMarginBox(once)).toBe(once);
  });
});

describe('fontFaceRules', () => {
  it.each([
    ['an external font URL', '@font-face { font-family: A; src: url(https://fonts.example/a.woff2) }'],
    ['a markup-ending sequence', `@font-face { font-family: "</style><script>x</script>"; src: url(${FONT_URL}) }`],
    ['a CSS escape', `@font-face { font-family: A; src: u\\72l(https://evil.example/a.woff2) }`],
    ['a nested block', `@font-face { font-family: A; src: url(${FONT_URL}); x { color: red } }`],
  ])('drops a rule with %s', (_name, css) => {
    // Act + Assess
    expect(fontFaceRules(css)).toBe('');
  });

  it('does not take braces inside strings or comments for block ends', () => {
    // Prepare
    const css = `/* } @font-face { */ div { content: "}" } @font-face { font-family: "A}"; src: url(${FONT_URL}) }`;

    // Act + Assess: the quoted brace makes the only @font-face unsafe to keep verbatim
    expect(fontFaceRules(css)).toBe('');
  });

  it('keeps several rules and ignores case', () => {
    // Act
    const result = fontFaceRules(`@FONT-FACE{font-family:A;src:url(${FONT_URL})} @font-face{font-family:B;src:url(${FONT_URL})}`);

    // Assess
    expect(result.split('\n')).toHaveLength(2);
  });

  it('drops an unterminated rule at the end', () => {
    // Act + Assess
    expect(fontFaceRules(`@font-face { font-family: A; src: url(${FONT_URL})`)).toBe('');
  });
});

describe('marginBoxFontUrls', () => {
  it('lists the data: URLs of the margin boxes\' @font-face rules once each', () => {
    // Prepare
    const header = sanitizeMarginBox(`<style>@font-face{font-family:A;src:url("${FONT_URL}")}</style>H`);
    const footer = sanitizeMarginBox(`<style>@font-face{font-family:A;src:url(${FONT_URL})}</style>F`);

    // Act + Assess
    expect(marginBoxFontUrls(header, footer, undefined)).toEqual([FONT_URL]);
  });
});

describe('inline styles and font families', () => {
  it('keeps ordinary declarations', () => {
    expect(sanitizeInlineStyle('font-size:8pt; color:#555; border-top:1px solid #ccc')).toBe(
      'font-size:8pt; color:#555; border-top:1px solid #ccc',
    );
  });

  it.each([
    ['"Noto Sans", sans-serif', '"Noto Sans", sans-serif'],
    ['Brand, serif', 'Brand, serif'],
    ['"Times New Roman"', '"Times New Roman"'],
    ['x"; background:url(https://evil.example)', undefined],
    ['a;b', undefined],
    ['"unbalanced', undefined],
    ['', undefined],
  ])('passes the body font family %j as %j', (value, expected) => {
    expect(safeFontFamily(value)).toBe(expected);
  });
});

describe('the margin box', () => {
  it('uses the body\'s font family and escapes it for the attribute', () => {
    // Act
    const html = buildMarginBox('x', {}, NOON, { fontFamily: '"Noto Serif", serif' });

    // Assess
    expect(html).toContain('font-family:&quot;Noto Serif&quot;, serif');
  });

  it('leaves out a font family that is not a plain list of names', () => {
    // Act
    const html = buildMarginBox('x', {}, NOON, { fontFamily: 'x;position:fixed' });

    // Assess
    expect(html).not.toContain('font-family');
  });

  it('seals the box with declarations a style sheet cannot override', () => {
    // Act
    const html = buildMarginBox('x', { top: '30mm' }, NOON);

    // Assess
    for (const declaration of ['contain:paint !important', 'overflow:hidden !important', 'position:relative !important', 'transform:none !important']) {
      expect(html).toContain(declaration);
    }
  });

  it('is no taller than its margin less Chromium\'s own 20 px padding', () => {
    // Act
    const header = buildMarginBox('x', { top: '30mm' }, NOON, {}, 'top');
    const footer = buildMarginBox('x', { bottom: '1in' }, NOON, {}, 'bottom');

    // Assess: 30 mm = 113.39 px, 1 in = 96 px
    expect(header).toContain('max-height:93.39px !important');
    expect(footer).toContain('max-height:76.00px !important');
  });
});
