/**
 * What every corpus document is built from: files of installed npm packages (libraries' browser
 * builds, their style sheets, web fonts) read once and inlined, so that a document is one
 * self-contained HTML string that fetches nothing but data: URLs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

const roots = new Map<string, string>();

/** The directory of an installed package (found from its package.json, or from its main entry). */
export function packageRoot(pkg: string): string {
  let root = roots.get(pkg);
  if (root === undefined) {
    try {
      root = dirname(require.resolve(`${pkg}/package.json`));
    } catch {
      // A package whose "exports" hide package.json: walk up from its entry point.
      let dir = dirname(require.resolve(pkg));
      while (!dir.endsWith(join('node_modules', pkg)) && dirname(dir) !== dir) dir = dirname(dir);
      root = dir;
    }
    roots.set(pkg, root);
  }
  return root;
}

const texts = new Map<string, string>();

/** A text file of an installed package, read once. */
export function packageText(pkg: string, file: string): string {
  const path = join(packageRoot(pkg), file);
  let text = texts.get(path);
  if (text === undefined) {
    text = readFileSync(path, 'utf8');
    texts.set(path, text);
  }
  return text;
}

const dataUrls = new Map<string, string>();

/** A binary file of an installed package as a data: URL. */
export function packageDataUrl(pkg: string, file: string, mime: string): string {
  const path = join(packageRoot(pkg), file);
  let url = dataUrls.get(path);
  if (url === undefined) {
    url = `data:${mime};base64,${readFileSync(path).toString('base64')}`;
    dataUrls.set(path, url);
  }
  return url;
}

/**
 * JavaScript made safe to sit inside a <script> element: the HTML parser ends the element at
 * `</script` and treats `<!--` and `<script` specially, whatever JavaScript thinks of them. Those
 * sequences only occur inside strings, regular expressions and comments of a library build, where
 * `\x3C` means `<` just the same.
 */
export function scriptText(js: string): string {
  return js.replace(/<(\/script|!--|script)/gi, '\\x3C$1');
}

/** An inline <script> holding `js`. */
export function inlineScript(js: string): string {
  return `<script>${scriptText(js)}</script>`;
}

/** A package's browser build inlined as a <script>. */
export function packageScript(pkg: string, file: string): string {
  return inlineScript(packageText(pkg, file));
}

/** An inline <style> holding `css`. */
export function inlineStyle(css: string): string {
  return `<style>${css.replace(/<\/style/gi, '<\\/style')}</style>`;
}

/** One @font-face rule whose source is a woff2 file of a package, as a data: URL. */
export function fontFace(options: {
  family: string;
  pkg: string;
  file: string;
  weight?: number | string;
  style?: 'normal' | 'italic';
  unicodeRange?: string;
}): string {
  const src = packageDataUrl(options.pkg, options.file, 'font/woff2');
  return (
    `@font-face{font-family:'${options.family}';font-style:${options.style ?? 'normal'};` +
    `font-weight:${options.weight ?? 400};font-display:block;src:url(${src}) format('woff2')` +
    (options.unicodeRange ? `;unicode-range:${options.unicodeRange}` : '') +
    '}'
  );
}

/** Escapes text for HTML content and attribute values. */
export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A whole HTML document. */
export function htmlDocument(options: {
  lang?: string;
  dir?: 'ltr' | 'rtl';
  title: string;
  head?: string;
  body: string;
  bodyAttributes?: string;
}): string {
  const dir = options.dir ? ` dir="${options.dir}"` : '';
  return (
    `<!DOCTYPE html>\n<html lang="${options.lang ?? 'en'}"${dir}>\n<head>\n<meta charset="utf-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${esc(options.title)}</title>\n` +
    `${options.head ?? ''}\n</head>\n<body${options.bodyAttributes ? ` ${options.bodyAttributes}` : ''}>\n${options.body}\n</body>\n</html>\n`
  );
}

/** A small deterministic pseudo-random generator (mulberry32): the same seed, the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Formats an amount of money the way the documents print it (fixed locale, no run-time locale). */
export function money(amount: number, symbol = '$'): string {
  const negative = amount < 0;
  const [whole, cents] = Math.abs(amount).toFixed(2).split('.') as [string, string];
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '−' : ''}${symbol}${grouped}.${cents}`;
}
