/**
 * Margin boxes: the header and footer (`header_html`, `footer_html`) printed in the page margins,
 * their `{{variables}}` turned into what Chromium prints. (Stored Liquid templates, which are
 * something else, live in lib/templates/ and lib/documents/templates.ts.)
 *
 * Chromium draws a header or footer (Puppeteer's `headerTemplate`, `footerTemplate`) in the page
 * margin, in its own tiny document, at a default font size under 1 pt, and only if the margin is
 * tall enough. So the HTML is wrapped in a box with a readable font size, the document body's font
 * family and the page's side margins, and a header or footer gets a default margin when the caller
 * did not set one.
 *
 * Headers and footers are customer HTML printed on every page, so they are sanitized (see
 * {@link sanitizeMarginBox}) and their box is sealed: content cannot be positioned, transformed or
 * overflow outside the margin it belongs to, and cannot restyle the page around it.
 */
import { defaultTreeAdapter, html as html5, parseFragment, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { DEFAULT_HEADER_FOOTER_MARGIN, lengthToPixels, type Margin } from './options.ts';

type Element = DefaultTreeAdapterTypes.Element;
type ChildNode = DefaultTreeAdapterTypes.ChildNode;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;

/** Inset from the page edge when the caller gave no side margin. */
const DEFAULT_SIDE_INSET = '10mm';
export const DEFAULT_MARGIN_BOX_FONT_SIZE = '10px';
/**
 * Chromium puts its header/footer container this far from the page edge (its own padding), so a
 * margin box gets the side's margin less this much: content never reaches into the body.
 */
const CHROMIUM_MARGIN_PADDING_PX = 20;

const VARIABLE = /\{\{\s*(pageNumber|totalPages|date)\s*\}\}/g;

/** `{{date}}` prints as an ISO 8601 calendar date in UTC (e.g. 2026-11-21), the same wherever it renders. */
export function formatMarginBoxDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Replaces the API's variables with Chromium's page-number classes or values (date). */
export function substituteMarginBoxVariables(html: string, now: Date): string {
  return html.replace(VARIABLE, (_match, name: string) =>
    name === 'date' ? formatMarginBoxDate(now) : `<span class="${name}"></span>`,
  );
}

// ---------------------------------------------------------------------------------------------
// Sanitizing

/** Formatting, tables, images and inline SVG (logos): what a header or footer is made of. */
const HTML_ELEMENTS = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br', 'caption', 'center', 'cite', 'code', 'col',
  'colgroup', 'dd', 'del', 'dfn', 'div', 'dl', 'dt', 'em', 'figcaption', 'figure', 'font', 'h1', 'h2',
  'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 'q', 'rp', 'rt',
  'ruby', 's', 'samp', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'tfoot',
  'th', 'thead', 'time', 'tr', 'tt', 'u', 'ul', 'var', 'wbr', 'style',
]);
const SVG_ELEMENTS = new Set([
  'svg', 'g', 'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'text', 'tspan', 'defs',
  'lineargradient', 'radialgradient', 'stop', 'clippath', 'title', 'desc', 'symbol', 'use',
]);
/** Removed together with everything inside them (scripts, embedded documents, form controls...). */
const DROPPED_WITH_CONTENT = new Set([
  'script', 'noscript', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'param',
  'link', 'meta', 'base', 'head', 'title', 'textarea', 'xmp', 'plaintext', 'noembed', 'noframes', 'select',
  'option', 'button', 'input', 'form', 'audio', 'video', 'source', 'track', 'canvas', 'math', 'foreignobject',
  'portal', 'fencedframe', 'dialog', 'slot',
]);
/** Attributes with no way to run code or fetch anything; URL-bearing ones are checked separately. */
const ATTRIBUTES = new Set([
  'class', 'id', 'title', 'dir', 'lang', 'align', 'valign', 'width', 'height', 'colspan', 'rowspan', 'span',
  'color', 'bgcolor', 'border', 'cellpadding', 'cellspacing', 'alt', 'face', 'size', 'start', 'type', 'datetime',
  // SVG geometry and presentation
  'viewbox', 'preserveaspectratio', 'xmlns', 'd', 'x', 'y', 'x1', 'x2', 'y1', 'y2', 'cx', 'cy', 'r', 'rx', 'ry',
  'points', 'transform', 'fill', 'fill-rule', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-linecap',
  'stroke-linejoin', 'stroke-dasharray', 'stroke-opacity', 'opacity', 'offset', 'stop-color', 'stop-opacity',
  'gradientunits', 'gradienttransform', 'clip-path', 'clip-rule', 'clippathunits', 'font-family', 'font-size',
  'font-weight', 'font-style', 'text-anchor', 'dominant-baseline', 'letter-spacing', 'dx', 'dy', 'rotate',
  'textlength', 'lengthadjust', 'fx', 'fy', 'spreadmethod', 'visibility', 'display',
]);
const IMAGE_DATA_URL = /^\s*data:image\/(?:png|jpeg|jpg|gif|webp|avif|bmp|svg\+xml)[;,]/i;
const LINK_URL = /^\s*(?:https?:|mailto:|tel:|#)/i;
/** A `url(...)` reference to anything but a data: URL or a fragment of the margin box itself. */
const EXTERNAL_URL_REFERENCE = /url\(\s*(['"]?)\s*(?!data:|#)/i;
/** CSS functions that take a URL as a plain string, and old script hooks. */
const URL_STRING_FUNCTIONS = /(?:image-set|src|element|expression|paint)\s*\(|@import|javascript:/i;

/**
 * Makes header or footer HTML safe to print on every page (HTML is parsed as a browser does, with
 * parse5, then rebuilt from an allow-list; escaping would forbid the formatting they exist for):
 *
 * - scripts, embedded documents (`iframe`, `object`, `embed`), form controls and metadata are removed
 *   with their content; unknown elements are unwrapped (their text is kept);
 * - event handler attributes (`on*`) and unknown attributes are removed;
 * - external URLs are removed: images only from `data:image/...` URLs, links only to http(s),
 *   mailto and tel, CSS only with data: URLs (Chromium cannot load external resources for headers
 *   and footers anyway, and a margin box must not make the renderer fetch anything);
 * - a `<style>` element keeps only its `@font-face` rules (with data: URLs), since any other rule
 *   could restyle the page around the margin box; style its content with `style` attributes.
 */
export function sanitizeMarginBox(html: string): string {
  // Serializing and parsing again can rearrange markup (as any HTML parser may); sanitizing the
  // result a second time guarantees that what Chromium parses is exactly what was checked.
  return sanitizeOnce(sanitizeOnce(html));
}

function sanitizeOnce(html: string): string {
  const context = defaultTreeAdapter.createElement('div', html5.NS.HTML, []);
  const fragment = parseFragment(context, html, {});
  sanitizeChildren(fragment);
  return serialize(fragment);
}

function sanitizeChildren(parent: ParentNode): void {
  const kept: ChildNode[] = [];
  for (const node of parent.childNodes) {
    if (node.nodeName === '#text') kept.push(node);
    else if ('tagName' in node) kept.push(...sanitizeElement(node));
    // comments and doctypes are dropped
  }
  for (const node of kept) node.parentNode = parent;
  parent.childNodes = kept;
}

/** The nodes that replace `element`: itself cleaned, its cleaned children, or nothing. */
function sanitizeElement(element: Element): ChildNode[] {
  const tag = element.tagName.toLowerCase();
  const namespace = element.namespaceURI;
  if (DROPPED_WITH_CONTENT.has(tag)) return [];
  if (tag === 'style') {
    if (namespace !== html5.NS.HTML) return [];
    const css = element.childNodes.map((node) => ('value' in node ? node.value : '')).join('');
    const rules = fontFaceRules(css);
    if (rules === '') return [];
    element.attrs = [];
    element.childNodes = [defaultTreeAdapter.createTextNode(rules)];
    element.childNodes[0]!.parentNode = element;
    return [element];
  }
  const allowed =
    (namespace === html5.NS.HTML && HTML_ELEMENTS.has(tag)) || (namespace === html5.NS.SVG && SVG_ELEMENTS.has(tag));
  sanitizeChildren(element);
  if (!allowed) return element.childNodes;
  element.attrs = element.attrs.filter((attribute) => {
    const name = (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name).toLowerCase();
    return keepAttribute(tag, name, attribute);
  });
  return [element];
}

function keepAttribute(tag: string, name: string, attribute: { value: string }): boolean {
  const { value } = attribute;
  if (name.startsWith('on')) return false;
  if (name === 'style') {
    const style = sanitizeInlineStyle(value);
    if (style === undefined) return false;
    attribute.value = style;
    return true;
  }
  if (name === 'src') return tag === 'img' && IMAGE_DATA_URL.test(value);
  if (name === 'href' || name === 'xlink:href') {
    if (tag === 'a') return LINK_URL.test(value);
    return tag === 'use' && value.trim().startsWith('#');
  }
  if (!ATTRIBUTES.has(name)) return false;
  // SVG paint may reference a gradient of the margin box (url(#id)), nothing else.
  return !EXTERNAL_URL_REFERENCE.test(value) && !URL_STRING_FUNCTIONS.test(value);
}

/**
 * A `style` attribute as given, or undefined when it must go: when it refers to anything outside
 * the margin box, or uses CSS escapes (which could spell a URL function in disguise) or markup.
 */
export function sanitizeInlineStyle(style: string): string | undefined {
  if (/[\\<>]/.test(style)) return undefined;
  if (EXTERNAL_URL_REFERENCE.test(style) || URL_STRING_FUNCTIONS.test(style)) return undefined;
  return style;
}

/**
 * The `@font-face` rules of a style sheet, every other rule left out. A rule is kept only when its
 * every `url()` is a data: URL and it holds nothing that could end the `<style>` element or hide a
 * URL (markup, CSS escapes, nested blocks).
 */
export function fontFaceRules(css: string): string {
  const kept: string[] = [];
  for (const rule of topLevelRules(css)) {
    if (!/^@font-face$/i.test(rule.prelude.trim())) continue;
    const body = rule.body;
    if (/[<>\\{}]/.test(body)) continue;
    if (EXTERNAL_URL_REFERENCE.test(body) || URL_STRING_FUNCTIONS.test(body)) continue;
    kept.push(`@font-face{${body.trim()}}`);
  }
  return kept.join('\n');
}

/** The data: URLs the `@font-face` rules of sanitized margin boxes use (to preload them, see print-preparation.ts). */
export function marginBoxFontUrls(...boxes: (string | undefined)[]): string[] {
  const urls = new Set<string>();
  for (const box of boxes) {
    if (!box) continue;
    for (const style of box.matchAll(/<style>([\s\S]*?)<\/style>/g)) {
      for (const match of style[1]!.matchAll(/url\(\s*(['"]?)(data:[^'")\s]+)\1\s*\)/gi)) urls.add(match[2]!);
    }
  }
  return [...urls];
}

/**
 * Splits a style sheet into its top-level rules: prelude and block body. Strings and comments are
 * skipped as a CSS parser would, so a brace inside them neither opens nor closes a block. An
 * unterminated rule at the end is dropped.
 */
function topLevelRules(css: string): { prelude: string; body: string }[] {
  const rules: { prelude: string; body: string }[] = [];
  let index = 0;
  let preludeStart = 0;
  let depth = 0;
  let bodyStart = 0;
  while (index < css.length) {
    const char = css[index]!;
    if (char === '/' && css[index + 1] === '*') {
      const end = css.indexOf('*/', index + 2);
      if (end < 0) break;
      index = end + 2;
      continue;
    }
    if (char === '"' || char === "'") {
      index = skipString(css, index);
      continue;
    }
    if (char === '{') {
      if (depth === 0) bodyStart = index + 1;
      depth++;
    } else if (char === '}') {
      if (depth === 0) {
        preludeStart = index + 1; // a stray closing brace: ignored, as a CSS parser would
      } else if (--depth === 0) {
        rules.push({ prelude: css.slice(preludeStart, bodyStart - 1).replace(/\/\*[\s\S]*?\*\//g, ''), body: css.slice(bodyStart, index) });
        preludeStart = index + 1;
      }
    } else if (char === ';' && depth === 0) {
      preludeStart = index + 1; // a statement at-rule such as @import: never kept
    }
    index++;
  }
  return rules;
}

/** The index just past the string starting at `start` (CSS strings end at their quote or a newline). */
function skipString(css: string, start: number): number {
  const quote = css[start];
  let index = start + 1;
  while (index < css.length) {
    const char = css[index]!;
    if (char === '\\') index += 2;
    else if (char === quote || char === '\n') return index + 1;
    else index++;
  }
  return index;
}

/**
 * Substitutes the variables in the text of sanitized HTML only: `{{pageNumber}}` becomes Chromium's
 * span where it is text, and stays as written inside an attribute (where a span could not be).
 */
function substituteInText(sanitized: string, now: Date): string {
  const fragment = parseFragment(defaultTreeAdapter.createElement('div', html5.NS.HTML, []), sanitized, {});
  const visit = (parent: ParentNode) => {
    const children: ChildNode[] = [];
    for (const node of parent.childNodes) {
      if (node.nodeName === '#text' && 'value' in node && new RegExp(VARIABLE.source).test(node.value)) {
        const parts = node.value.split(new RegExp(VARIABLE.source));
        parts.forEach((part, index) => {
          // split() with a capture group alternates text and variable names
          if (index % 2 === 0) {
            if (part !== '') children.push(defaultTreeAdapter.createTextNode(part));
          } else if (part === 'date') {
            children.push(defaultTreeAdapter.createTextNode(formatMarginBoxDate(now)));
          } else {
            children.push(defaultTreeAdapter.createElement('span', html5.NS.HTML, [{ name: 'class', value: part }]));
          }
        });
        continue;
      }
      if ('tagName' in node && node.tagName !== 'style') visit(node);
      children.push(node);
    }
    for (const child of children) child.parentNode = parent;
    parent.childNodes = children;
  };
  visit(fragment);
  return serialize(fragment);
}

// ---------------------------------------------------------------------------------------------
// The box

/** How a margin box is printed beyond its own HTML. */
export interface MarginBoxStyle {
  /** The document body's computed `font-family`; margin boxes use it unless they set their own. */
  readonly fontFamily?: string;
}

/**
 * A computed `font-family` value made safe to put in a style attribute, or undefined when it is not
 * a plain list of family names (the value comes from the customer's page, which could fake it).
 */
export function safeFontFamily(value: string | undefined): string | undefined {
  if (!value || value.length > 500) return undefined;
  if (!/^[\p{L}\p{N} ,"'._-]+$/u.test(value)) return undefined;
  // Quotes must pair up, or the value could end the CSS string early.
  if ((value.match(/"/g) ?? []).length % 2 || (value.match(/'/g) ?? []).length % 2) return undefined;
  return value;
}

const escapeAttribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** The side's margin minus Chromium's own padding, as a CSS length: the most a margin box may use. */
function boxHeight(sideMargin: string): string {
  const pixels = lengthToPixels(sideMargin) ?? 0;
  return `${Math.max(0, pixels - CHROMIUM_MARGIN_PADDING_PX).toFixed(2)}px`;
}

/**
 * The HTML Chromium receives for a header or footer: substituted, sanitized and wrapped in a
 * box that is readable (explicit font size, the body's font) and sealed (`contain: paint` makes it
 * the containing block of positioned content and clips whatever overflows; its height is the
 * margin's, so nothing reaches into the body). The sealing declarations are `!important` in the
 * style attribute, which no rule of a style sheet can override.
 */
export function buildMarginBox(html: string, margin: Margin, now: Date, style: MarginBoxStyle = {}, side: 'top' | 'bottom' = 'top'): string {
  const left = margin.left ?? DEFAULT_SIDE_INSET;
  const right = margin.right ?? DEFAULT_SIDE_INSET;
  const fontFamily = safeFontFamily(style.fontFamily);
  const sideMargin = margin[side] ?? DEFAULT_HEADER_FOOTER_MARGIN;
  const declarations = [
    'box-sizing:border-box !important',
    'width:100% !important',
    `max-height:${boxHeight(sideMargin)} !important`,
    'overflow:hidden !important',
    'contain:paint !important',
    'position:relative !important',
    'transform:none !important',
    'margin:0 !important',
    `padding:0 ${right} 0 ${left}`,
    `font-size:${DEFAULT_MARGIN_BOX_FONT_SIZE}`,
    ...(fontFamily ? [`font-family:${fontFamily}`] : []),
    '-webkit-print-color-adjust:exact',
    'print-color-adjust:exact',
  ];
  return `<div style="${escapeAttribute(declarations.join(';'))}">${substituteInText(sanitizeMarginBox(html), now)}</div>`;
}

/** Puppeteer's header/footer settings for these options. */
export function headerFooterOptions(
  options: { headerHtml?: string; footerHtml?: string; margin: Margin },
  now: Date,
  style: MarginBoxStyle = {},
): { displayHeaderFooter: boolean; headerTemplate?: string; footerTemplate?: string; margin: Margin } {
  const { headerHtml, footerHtml } = options;
  if (headerHtml === undefined && footerHtml === undefined) {
    return { displayHeaderFooter: false, margin: options.margin };
  }
  const margin: Margin = { ...options.margin };
  if (headerHtml !== undefined) margin.top ??= DEFAULT_HEADER_FOOTER_MARGIN;
  if (footerHtml !== undefined) margin.bottom ??= DEFAULT_HEADER_FOOTER_MARGIN;
  return {
    displayHeaderFooter: true,
    // An empty headerTemplate or footerTemplate stops Chromium from printing its own default (the title and URL).
    headerTemplate: headerHtml === undefined ? '<span></span>' : buildMarginBox(headerHtml, margin, now, style, 'top'),
    footerTemplate: footerHtml === undefined ? '<span></span>' : buildMarginBox(footerHtml, margin, now, style, 'bottom'),
    margin,
  };
}
