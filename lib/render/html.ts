/**
 * "Valid HTML" as decisions.md defines it: a non-empty string that an HTML5 parser reads without
 * structural errors. Real-world HTML is sloppy (no doctype, unclosed <p>), and browsers recover from
 * that by design, so only errors that mean the document is truncated or corrupt are refused.
 */
import { defaultTreeAdapter, html as html5, parse, parseFragment, type DefaultTreeAdapterMap, type ParserError, type TreeAdapter } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];
type ChildNode = DefaultTreeAdapterMap['childNode'];

const STRUCTURAL_ERRORS: Readonly<Record<string, string>> = {
  'eof-before-tag-name': 'a tag is cut off at the end of the input',
  'eof-in-tag': 'a tag or attribute is not terminated before the end of the input',
  'eof-in-comment': 'a comment is not terminated before the end of the input',
  'eof-in-doctype': 'the doctype is not terminated before the end of the input',
  'eof-in-cdata': 'a CDATA section is not terminated before the end of the input',
  'eof-in-script-html-comment-like-text': 'a script is not terminated before the end of the input',
  'eof-in-element-that-can-contain-only-text':
    'a <script>, <style>, <textarea> or <title> element is not closed before the end of the input',
  'unexpected-null-character': 'it contains a NUL character',
  'null-character-reference': 'it contains a NUL character reference (&#0;)',
};

/** What rendering needs to know about a valid document (lib/render/workspaces.ts decides by it). */
export interface HtmlTraits {
  /** Needs a live page: scripts, or lazy loading, which only a scripted page can hurry along. */
  readonly scripted: boolean;
  /** Declares fonts of its own (`@font-face`), which may still be loading at the load event. */
  readonly webFonts: boolean;
  /** Declares CSS animations or transitions, which print preview shows finished. */
  readonly animated: boolean;
}

export type HtmlInspection = { readonly problem: string } | ({ readonly problem?: undefined } & HtmlTraits);

/**
 * Validates `html` and tells whether it needs a live, scripted page to render as written: a script
 * element, an inline event handler, a javascript: URL, a <noscript> (which shows only without
 * scripting), an embedded document (iframe, frame, object, embed) that might run scripts of its
 * own, or a lazily loaded image (loaded by the print preparation, which needs scripting). A
 * document that needs none renders with JavaScript switched off (lib/render/workspaces.ts).
 */
export function inspectHtml(html: unknown): HtmlInspection {
  if (typeof html !== 'string') return { problem: 'html must be a string' };
  if (html.trim() === '') return { problem: 'html must not be empty' };
  let problem: string | undefined;
  let document: DefaultTreeAdapterMap['document'];
  try {
    document = parse(html, {
      treeAdapter: depthLimitedTreeAdapter(MAX_HTML_DEPTH),
      onParseError(error: ParserError) {
        const reason = STRUCTURAL_ERRORS[error.code];
        if (reason && !problem) problem = `html is malformed: ${reason} (line ${error.startLine}, column ${error.startCol})`;
      },
    });
  } catch (error) {
    if (error !== TOO_DEEP) throw error;
    // A structural error met before the depth is still the first problem.
    return { problem: problem ?? TOO_DEEP_PROBLEM };
  }
  if (problem) return { problem };
  const { depth, ...traits } = describe(document);
  if (depth > MAX_HTML_DEPTH) return { problem: TOO_DEEP_PROBLEM };
  return traits;
}

/**
 * Deepest element nesting accepted in a document. Chrome builds pages at most 512 elements deep
 * (deeper ones are attached higher up) and prints sloppy legacy HTML, thousands of unclosed <font>
 * tags, without trouble: 20,000 nested elements laid out and printed in 1.5 s. Its cost grows
 * faster than the depth, though: 1 MB of nested <b> tags (333,000 deep) took 150 s, a render that
 * could only time out. So only nesting no real document reaches is refused, before any render.
 */
export const MAX_HTML_DEPTH = 20_000;

const TOO_DEEP_PROBLEM = `html nests elements more than ${MAX_HTML_DEPTH} deep`;

/** Thrown from inside the parser to stop it at the depth limit (parse5 catches nothing). */
const TOO_DEEP: unique symbol = Symbol('too deep');

/**
 * parse5's default tree adapter, which also stops the parse (throwing TOO_DEEP) as soon as an
 * element is placed deeper than `limit`, counted as describe() counts: the document at 0, each
 * element one below its parent, a <template>'s content at the template's own depth.
 *
 * Parsing a pathological body to its end before measuring took seconds: parse5's tree building
 * costs grow with the depth of the stack of open elements (scope checks, the adoption agency,
 * reconstructing formatting elements), so 5 MB of nested <b>, <font> or <svg><g> took 6-19 s of
 * CPU, against about 2 s for 5 MB of flat markup. Stopped at the limit, only the first 20,001
 * levels are built (tens of milliseconds).
 *
 * Each node's depth is noted when it is inserted. A subtree the parser moves later (the adoption
 * agency, foster parenting) keeps the depths it was inserted at; describe() measures the finished
 * tree anyway, so nothing deeper than the limit passes. The one difference: an element placed past
 * the limit and then moved back above it (only the adoption agency does that) is refused, where
 * the finished tree alone would not be; no real document comes within thousands of levels of it.
 * And a body that is both too deep and malformed only after the point where it goes too deep is
 * refused for its depth (400 INVALID_HTML either way): the rest of it is never read.
 */
const DEPTH: unique symbol = Symbol('depth');
type DepthNoted = { [DEPTH]?: number };

function depthLimitedTreeAdapter(limit: number): TreeAdapter<DefaultTreeAdapterMap> {
  // Kept on the nodes themselves: a WeakMap of a million elements made flat documents several times slower.
  const depthOf = (node: Node): number => (node as DepthNoted)[DEPTH] ?? 0;
  const place = (parent: ParentNode, child: ChildNode): void => {
    if (!('tagName' in child)) return;
    const depth = depthOf(parent) + 1;
    if (depth > limit) throw TOO_DEEP;
    (child as DepthNoted)[DEPTH] = depth;
  };
  return {
    ...defaultTreeAdapter,
    appendChild(parent, child) {
      place(parent, child);
      defaultTreeAdapter.appendChild(parent, child);
    },
    insertBefore(parent, child, reference) {
      place(parent, child);
      defaultTreeAdapter.insertBefore(parent, child, reference);
    },
    setTemplateContent(template, content) {
      (content as DepthNoted)[DEPTH] = depthOf(template);
      defaultTreeAdapter.setTemplateContent(template, content);
    },
  };
}

/** Why `html` is not acceptable, or undefined when it is. */
export function findHtmlProblem(html: unknown): string | undefined {
  return inspectHtml(html).problem;
}

/** Elements that run script, show only without it, or embed documents that may run script. */
const SCRIPTING_ELEMENTS = new Set(['script', 'noscript', 'iframe', 'frame', 'object', 'embed']);
// Browsers strip leading control characters and spaces and tabs inside the scheme.
const JAVASCRIPT_URL = /^[\u0000-\u0020]*j[\t\n\r]*a[\t\n\r]*v[\t\n\r]*a[\t\n\r]*s[\t\n\r]*c[\t\n\r]*r[\t\n\r]*i[\t\n\r]*p[\t\n\r]*t[\t\n\r]*:/i;

const FONT_FACE = /@font-face/i;
const CSS_IMPORT = /@import/i;
/** CSS that animates: keyframes, an animation or a transition (as a property, or its longhands). */
const CSS_ANIMATION = /@(?:-webkit-)?keyframes|(?:^|[\s;{])(?:-webkit-)?(?:animation|transition)(?:-[a-z-]+)?\s*:/i;

/** A parsed document's traits, and how deeply its elements nest (walked without recursion). */
function describe(root: Node): HtmlTraits & { depth: number } {
  let scripted = false;
  let webFonts = false;
  let animated = false;
  let deepest = 0;
  const pending: [Node, number][] = [[root, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > deepest) deepest = depth;
    if ('tagName' in node) {
      if (SCRIPTING_ELEMENTS.has(node.tagName)) scripted = true;
      // A style sheet from elsewhere may declare fonts and animations of its own.
      if (node.tagName === 'link') webFonts = animated = true;
      for (const { name, value } of node.attrs) {
        const attribute = name.toLowerCase();
        if (attribute.startsWith('on') || JAVASCRIPT_URL.test(value)) scripted = true;
        if (attribute === 'loading' && value.trim().toLowerCase() === 'lazy') scripted = true;
        if (attribute === 'style' && CSS_ANIMATION.test(value)) animated = true;
      }
    }
    // Style sheet text (<style>, in HTML or SVG) is the text node inside it.
    if ('value' in node && node.parentNode && 'tagName' in node.parentNode && node.parentNode.tagName === 'style') {
      // A style sheet it imports may declare fonts and animations of its own.
      const imports = CSS_IMPORT.test(node.value);
      if (imports || FONT_FACE.test(node.value)) webFonts = true;
      if (imports || CSS_ANIMATION.test(node.value)) animated = true;
    }
    if ('content' in node && node.content) pending.push([node.content, depth]); // <template>
    if ('childNodes' in node) for (const child of node.childNodes) pending.push([child, 'tagName' in child ? depth + 1 : depth]);
  }
  return { scripted, webFonts, animated, depth: deepest };
}

/**
 * How deeply elements nest in an HTML fragment, as the parser builds it (implied elements
 * included). Counted without recursion, so no nesting is too deep to measure.
 */
export function fragmentNestingDepth(html: string): number {
  return describe(parseFragment(defaultTreeAdapter.createElement('div', html5.NS.HTML, []), html, {})).depth;
}
