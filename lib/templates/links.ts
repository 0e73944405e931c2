/**
 * Links a template's document keeps: Chromium makes every `<a href>` and `<area href>` (and SVG
 * `<a>`) a link annotation in the PDF, so a URL from the data (`<a href="{{ customer.website }}">`
 * given `javascript:…`, `data:…`, `file:…`) would become a link a reader's PDF viewer may follow.
 * Escaping cannot help: such a URL has nothing to escape. So in the rendered HTML a link whose URL
 * has a scheme other than http, https, mailto or tel loses its href and prints as text; relative
 * links and `#fragment` links stay.
 *
 * The document is edited where the attribute is written, not parsed and serialized again: a
 * serializer may write some markup differently from how it was given (parse5 rewrites misnested
 * tags, for one), and everything else in the document must print exactly as before.
 */
import { html as html5, parse, type Token, type TreeAdapter, type TreeAdapterTypeMap } from 'parse5';

/** The URL schemes a link may have; a URL without one (relative, `#fragment`) is a link within the document's own. */
export const LINK_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'mailto', 'tel']);

/**
 * Whether `url` may stay a link, its scheme read as the URL parser reads it: leading and trailing
 * control characters and spaces dropped, tabs and newlines dropped anywhere (`java\nscript:` is
 * `javascript:`), then letters, digits, `+`, `-` and `.` up to a colon. (Character references such
 * as `&#106;` are the HTML parser's, decoded before this sees the value.)
 */
export function isKeptLinkUrl(url: string): boolean {
  const scheme = SCHEME.exec(withoutUrlWhitespace(url))?.[1];
  return scheme === undefined || LINK_SCHEMES.has(scheme.toLowerCase());
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

function withoutUrlWhitespace(url: string): string {
  return url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
}

/**
 * Whether an attribute value as written (character references not decoded) is a URL that stays a
 * link whatever its references decode to: decided by what comes before its first `&` (or NUL) when
 * that already has its scheme (`https://example.com/?a=1&b=2`), or a character no scheme has
 * (`/list?a=1&b=2`); `javascript&colon;x` is not decided there.
 */
function surelyKept(written: string): boolean {
  const cut = written.search(/[&\u0000]/);
  if (cut < 0) return isKeptLinkUrl(written);
  const head = withoutUrlWhitespace(written.slice(0, cut));
  const scheme = SCHEME.exec(head)?.[1];
  if (scheme !== undefined) return LINK_SCHEMES.has(scheme.toLowerCase());
  return /^(?:[^A-Za-z]|[A-Za-z][A-Za-z0-9+.-]*[^A-Za-z0-9+.-])/.test(head);
}

/**
 * A value written after an attribute name, as the HTML tokenizer reads it: spaces, `=`, spaces,
 * then a quoted value or an unquoted one (up to a space or `>`).
 */
const ATTRIBUTE_VALUE = /[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"|'([^']*)'|([^\t\n\f\r >]*))/y;

/**
 * Whether `html` might hold a link that must go, found without parsing it (parsing a large document
 * takes seconds): every `href` written anywhere, with the value after it, is looked at, so any href
 * attribute the parser would read is among them (text that merely looks like one only costs a parse).
 */
function mayHoldUnkeptLink(html: string): boolean {
  for (const match of html.matchAll(/href/gi)) {
    ATTRIBUTE_VALUE.lastIndex = match.index + 'href'.length;
    const value = ATTRIBUTE_VALUE.exec(html);
    if (value !== null && !surelyKept(value[1] ?? value[2] ?? value[3] ?? '')) return true;
  }
  return false;
}

/**
 * A node as {@link linkFindingTreeAdapter} keeps it: what the parser asks of the elements it still
 * has open (their name, namespace, attributes and parent), no children and no text.
 */
interface ScannedNode {
  readonly tagName: string;
  readonly namespaceURI: html5.NS;
  readonly attrs: Token.Attribute[];
  parentNode: ScannedNode | null;
  content?: ScannedNode;
  mode?: html5.DOCUMENT_MODE;
}
type Scanned = TreeAdapterTypeMap<ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode, ScannedNode>;

/** A start tag to edit: where it is written, and the names of the attributes that go. */
interface LinkTag {
  readonly start: number;
  readonly end: number;
  readonly names: readonly string[];
}

const NO_CHILDREN: ScannedNode[] = [];

/**
 * A tree adapter that builds no tree: it hands `found` the start tag of every element the parser
 * makes a link whose URL must go, when the parser places it, and keeps nothing else. The parser's
 * decisions (which elements it makes, in which namespace) rest on its own stacks, the document's
 * mode and whether an element has a parent, never on the children it was told of, so it makes
 * exactly the elements it makes for a whole tree; while only the elements still open (and their
 * parents) are held, where a tree of a 5 MB document held over 200 MB, past the heap of the worker
 * a template renders in (a 10 MB document: 0.7 s and a few MB this way). An element the parser makes
 * again from one tag (an `<a>` reopened after misnested markup) is made without a location, but the
 * first element made from that tag was found: editing the tag edits them all.
 */
function linkFindingTreeAdapter(found: (tag: LinkTag) => void): TreeAdapter<Scanned> {
  const node = (tagName: string, namespaceURI: html5.NS = html5.NS.HTML, attrs: Token.Attribute[] = []): ScannedNode => ({ tagName, namespaceURI, attrs, parentNode: null });
  return {
    createDocument: () => ({ ...node('#document'), mode: html5.DOCUMENT_MODE.NO_QUIRKS }),
    createDocumentFragment: () => node('#document-fragment'),
    createElement: (tagName, namespaceURI, attrs) => node(tagName, namespaceURI, attrs),
    createCommentNode: () => node('#comment'),
    createTextNode: () => node('#text'),
    appendChild(parent, child) {
      child.parentNode = parent;
    },
    insertBefore(parent, child) {
      child.parentNode = parent;
    },
    detachNode(child) {
      child.parentNode = null;
    },
    insertText() {},
    insertTextBefore() {},
    adoptAttributes(recipient, attrs) {
      for (const attribute of attrs) if (!recipient.attrs.some(({ name }) => name === attribute.name)) recipient.attrs.push(attribute);
    },
    setTemplateContent(template, content) {
      template.content = content;
    },
    getTemplateContent: (template) => template.content!,
    setDocumentType() {},
    // Quirks mode changes how a <table> closes a <p>: the parser needs it back.
    setDocumentMode(document, mode) {
      document.mode = mode;
    },
    getDocumentMode: (document) => document.mode ?? html5.DOCUMENT_MODE.NO_QUIRKS,
    getFirstChild: () => null,
    getChildNodes: () => NO_CHILDREN,
    getParentNode: (child) => child.parentNode,
    getAttrList: (element) => element.attrs,
    getTagName: (element) => element.tagName,
    getNamespaceURI: (element) => element.namespaceURI,
    getTextNodeContent: () => '',
    getCommentNodeContent: () => '',
    getDocumentTypeNodeName: () => '',
    getDocumentTypeNodePublicId: () => '',
    getDocumentTypeNodeSystemId: () => '',
    isTextNode: (candidate): candidate is ScannedNode => candidate.tagName === '#text',
    isCommentNode: (candidate): candidate is ScannedNode => candidate.tagName === '#comment',
    isDocumentTypeNode: (_candidate): _candidate is ScannedNode => false,
    isElementNode: (candidate): candidate is ScannedNode => !candidate.tagName.startsWith('#'),
    setNodeSourceCodeLocation(placed, location) {
      // Called for every element placed from a tag in the source (and, with no node, for text).
      const startTag = location?.startTag;
      if (placed === undefined || startTag === undefined) return;
      const names = linkAttributeNames(placed);
      const url = names && linkUrl(placed);
      if (names !== undefined && url !== undefined && !isKeptLinkUrl(url)) found({ start: startTag.startOffset, end: startTag.endOffset, names });
    },
    getNodeSourceCodeLocation: () => null,
    updateNodeSourceCodeLocation() {},
  };
}

/**
 * The attributes that make `element` a link, by their names as written: `href` on HTML `a` and
 * `area`; on SVG `a`, `href` and, where it has none, `xlink:href`. Undefined for any other element.
 */
function linkAttributeNames(element: ScannedNode): readonly string[] | undefined {
  if (element.namespaceURI === html5.NS.HTML) return element.tagName === 'a' || element.tagName === 'area' ? ['href'] : undefined;
  if (element.namespaceURI === html5.NS.SVG && element.tagName === 'a') return ['href', 'xlink:href'];
  return undefined;
}

/** The URL `element` links to, as Chromium takes it (an SVG `<a>`'s href wins over its xlink:href). */
function linkUrl(element: ScannedNode): string | undefined {
  const plain = element.attrs.find((attribute) => attribute.name === 'href' && attribute.namespace === undefined);
  if (plain !== undefined || element.namespaceURI !== html5.NS.SVG) return plain?.value;
  return element.attrs.find((attribute) => attribute.name === 'href' && attribute.namespace === html5.NS.XLINK)?.value;
}

const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t' || char === '\n' || char === '\f' || char === '\r';

/**
 * Where the attributes called one of `names` are written in `tag`, the source text of one start
 * tag (`<` to `>`), read as the HTML tokenizer reads attributes. Every one of them, including the
 * repeated ones the parser drops: removing only the first `href` would let a second take its place.
 */
function attributeSpans(tag: string, names: readonly string[]): [start: number, end: number][] {
  const spans: [number, number][] = [];
  let at = 1;
  while (at < tag.length && !isSpace(tag[at]) && tag[at] !== '/' && tag[at] !== '>') at++; // the tag name
  while (at < tag.length) {
    const char = tag[at];
    // A `/` not right before the `>` separates attributes as a space does.
    if (isSpace(char) || char === '/') {
      at++;
      continue;
    }
    if (char === '>') break;
    // A name runs to a space, `/`, `>` or `=` (an `=` in its first place is part of it).
    const start = at++;
    while (at < tag.length && !isSpace(tag[at]) && tag[at] !== '/' && tag[at] !== '>' && tag[at] !== '=') at++;
    const name = tag.slice(start, at).replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
    let next = at;
    while (isSpace(tag[next])) next++;
    if (tag[next] === '=') {
      next++;
      while (isSpace(tag[next])) next++;
      const quote = tag[next];
      if (quote === '"' || quote === "'") {
        const close = tag.indexOf(quote, next + 1);
        next = close < 0 ? tag.length : close + 1;
      } else {
        while (next < tag.length && !isSpace(tag[next]) && tag[next] !== '>') next++;
      }
      at = next;
    }
    if (names.includes(name)) spans.push([start, at]);
  }
  return spans;
}

/**
 * `html` (a whole rendered document) with the href of every link to anything but http, https,
 * mailto and tel removed (see {@link isKeptLinkUrl}): such an `<a>` or `<area>` prints as text, and
 * nothing else in the document changes. A document without one is returned as it is, unparsed.
 */
export function withoutUnsafeLinks(html: string): string {
  if (!mayHoldUnkeptLink(html)) return html;
  // By where they begin: the elements reopened from one tag share its location.
  const tags = new Map<number, LinkTag>();
  parse(html, { sourceCodeLocationInfo: true, treeAdapter: linkFindingTreeAdapter((tag) => tags.set(tag.start, tag)) });
  let edited = '';
  let copied = 0;
  for (const { start, end, names } of [...tags.values()].sort((a, b) => a.start - b.start)) {
    const tag = html.slice(start, end);
    let rewritten = '';
    let kept = 0;
    for (const [from, to] of attributeSpans(tag, names)) {
      // A space where the attribute was: `<a/href=…>` must not become the self-closing `<a/>`.
      rewritten += tag.slice(kept, from) + ' ';
      kept = to;
    }
    edited += html.slice(copied, start) + rewritten + tag.slice(kept);
    copied = end;
  }
  return edited + html.slice(copied);
}
