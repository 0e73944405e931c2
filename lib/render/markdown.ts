/**
 * `markdown` as a document source (shared/spec/beyond.md "Images and Markdown"): Markdown turned
 * into one HTML document, which then takes exactly the path an `html` request takes (checks,
 * renderer, egress guard, isolation).
 *
 * - Parser: markdown-it, which follows CommonMark to the letter (its test suite is the spec's) and
 *   has GFM tables and strikethrough built in; task lists come from @mdit/plugin-tasklist, kept by
 *   the same hands as the markdown-it plugins VuePress uses. (marked is smaller but not strictly
 *   CommonMark, and leaves raw HTML and `javascript:` links to a sanitizer of its own.)
 * - Raw HTML: markdown-it with `html: false` writes a `<script>`, an `onerror` or an `<iframe>` in
 *   the Markdown as the text it is, so nothing the Markdown holds ever runs or loads as markup; and
 *   its link check refuses `javascript:`, `vbscript:`, `file:` and non-image `data:` links. The
 *   document made has no script at all, so it renders in a workspace with JavaScript off.
 * - Code: highlight.js's common languages (about 40, some 350 KB unbundled, against shiki's
 *   several MB of grammars and a WebAssembly engine to start on a cold Lambda), with its classes
 *   coloured by the default stylesheet.
 * - Style: a clean default stylesheet (DEFAULT_MARKDOWN_CSS); the caller's `css` replaces it whole.
 */
import type MarkdownIt from 'markdown-it';

let parser: Promise<MarkdownIt> | undefined;

/**
 * The parser, loaded on first use: markdown-it and highlight.js's languages (about 60 ms of imports)
 * stay out of the start of every process that makes documents (each Lambda cold start of the
 * Chromium functions, the local stack), most of which never see Markdown.
 */
function markdownParser(): Promise<MarkdownIt> {
  parser ??= (async () => {
    const [{ default: MarkdownIt }, { tasklist }, { default: hljs }] = await Promise.all([
      import('markdown-it'),
      import('@mdit/plugin-tasklist'),
      import('highlight.js/lib/common'),
    ]);
    return new MarkdownIt({
      html: false,
      linkify: true,
      typographer: false,
      highlight: (code, language) => {
        if (!language || !hljs.getLanguage(language)) return '';
        // ignoreIllegals: a snippet that does not parse as its language is still coloured as far as it does.
        return hljs.highlight(code, { language, ignoreIllegals: true }).value;
      },
    }).use(tasklist, { disabled: true, label: true });
  })();
  return parser;
}

/** The stylesheet a Markdown document gets unless the caller gives `css`: readable type, tables, code, task lists. */
export const DEFAULT_MARKDOWN_CSS = `
@page { margin: 18mm 16mm; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0; padding: 24px; color: #1f2328; background: #fff; font: 15px/1.6 "Noto Sans", "Helvetica Neue", Arial, sans-serif; }
@media print { body { padding: 0; } }
.markdown-body { max-width: 860px; margin: 0 auto; overflow-wrap: break-word; }
h1, h2, h3, h4, h5, h6 { margin: 1.4em 0 0.6em; line-height: 1.25; font-weight: 600; break-after: avoid; }
h1 { font-size: 2em; padding-bottom: 0.3em; border-bottom: 1px solid #d1d9e0; }
h2 { font-size: 1.5em; padding-bottom: 0.3em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.25em; } h4 { font-size: 1em; } h5 { font-size: 0.875em; } h6 { font-size: 0.85em; color: #59636e; }
.markdown-body > :first-child { margin-top: 0; }
p, ul, ol, blockquote, table, pre { margin: 0 0 1em; }
a { color: #0969da; text-decoration: none; }
blockquote { padding: 0 1em; color: #59636e; border-left: 0.25em solid #d1d9e0; }
hr { height: 0.25em; margin: 1.5em 0; border: 0; background: #d1d9e0; }
img { max-width: 100%; }
ul, ol { padding-left: 2em; }
table { border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: auto; break-inside: auto; }
th, td { padding: 6px 13px; border: 1px solid #d1d9e0; }
th { font-weight: 600; background: #f6f8fa; }
tr { break-inside: avoid; }
tr:nth-child(2n) td { background: #f6f8fa; }
code, pre { font-family: "Noto Sans Mono", "DejaVu Sans Mono", monospace; font-size: 85%; }
code { padding: 0.2em 0.4em; border-radius: 6px; background: #eff1f3; }
pre { padding: 16px; overflow: auto; line-height: 1.45; border-radius: 6px; background: #f6f8fa; white-space: pre-wrap; break-inside: avoid; }
pre code { padding: 0; background: none; font-size: 100%; }
.task-list-container { list-style: none; padding-left: 0.5em; }
.task-list-item-checkbox { margin: 0 0.4em 0.2em 0; vertical-align: middle; }
.hljs-comment, .hljs-quote { color: #59636e; font-style: italic; }
.hljs-keyword, .hljs-selector-tag, .hljs-type, .hljs-doctag { color: #cf222e; }
.hljs-string, .hljs-regexp, .hljs-addition, .hljs-attr + .hljs-string { color: #0a3069; }
.hljs-number, .hljs-literal, .hljs-variable, .hljs-template-variable, .hljs-attr, .hljs-attribute { color: #0550ae; }
.hljs-title, .hljs-title.class_, .hljs-title.function_, .hljs-section { color: #8250df; }
.hljs-built_in, .hljs-symbol, .hljs-name, .hljs-selector-id, .hljs-selector-class { color: #953800; }
.hljs-meta { color: #1f2328; font-weight: 600; }
.hljs-deletion { color: #82071e; background: #ffebe9; }
.hljs-emphasis { font-style: italic; } .hljs-strong { font-weight: 600; }
`;

/** Why `css` cannot be a Markdown document's stylesheet, or undefined: it must not close its `<style>` element. */
export function markdownCssProblem(css: string): string | undefined {
  return /<\/style/i.test(css) ? 'css must not contain "</style": it is a stylesheet, not HTML' : undefined;
}

/**
 * The HTML document `markdown` makes: its body parsed as CommonMark with GFM tables, strikethrough
 * and task lists, styled by `css` when given (checked with markdownCssProblem), else by the default.
 * The language of the document is left to the reader's defaults: Markdown does not say one.
 */
export async function markdownToHtml(markdown: string, css?: string): Promise<string> {
  const body = (await markdownParser()).render(markdown);
  const style = css ?? DEFAULT_MARKDOWN_CSS;
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>${style}</style></head><body><article class="markdown-body">\n${body}</article></body></html>\n`;
}
