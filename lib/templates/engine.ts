/**
 * The template engine: a customer's stored template (Liquid) filled with request data, producing
 * the HTML the renderer prints.
 *
 * Templates are untrusted code run for many tenants, so the engine is LiquidJS configured to be a
 * pure function of (template, data):
 *
 * - no files: `include`, `render` and `layout` are refused when the template is parsed, and the
 *   engine's file system refuses every read besides, so nothing on the host is ever opened;
 * - no host objects: data is deep-copied from JSON and frozen, properties are read only when they
 *   are the object's own (`ownPropertyOnly`), and only registered filters run (`strictFilters`):
 *   no prototype, constructor or global is reachable;
 * - bounded: the template's length, tag count and nesting are checked before Liquid parses it
 *   (its parser is quadratic in the number of tags); rendering has a CPU-time budget, checked at
 *   every block, output and filter, and a memory budget that every string and list built, and
 *   every character written, counts against; filters take lists of bounded length. Those end a
 *   runaway template early with a precise message; what bounds it whatever it does is the worker
 *   it runs in (lib/customer-code/pool.ts): terminated at its time limit, its heap capped;
 * - escaped: every `{{ output }}` is HTML-escaped unless its last filter is `raw` (or one of the
 *   filters whose output is markup we generate, such as `qr_code`);
 * - isolated: a fresh engine per render, so no state (assigned variables, counters, caches) passes
 *   from one render, or one tenant, to the next.
 *
 * Limits and filters are documented for customers in docs/templates.md.
 */
import {
  Liquid,
  LiquidError,
  Tag,
  TokenKind,
  Tokenizer,
  toValue,
  type Context,
  type Emitter,
  type FilterImplOptions,
  type FS,
  type TagToken,
  type Template,
  type TopLevelToken,
} from 'liquidjs';
import type BwipJs from 'bwip-js';
import { MAX_JSON_DEPTH } from '../json-depth.ts';
import { CODE_FILTERS, loadBwip } from './codes.ts';
import { TemplateError, type TemplateSourceName } from './errors.ts';
import { registerDocumentFilters } from './filters.ts';
import { htmlLang } from './html-lang.ts';
import { canonicalLocale, DEFAULT_LOCALE } from './locale.ts';
import { withoutUnsafeLinks } from './links.ts';

export { TemplateError, type TemplateSourceName } from './errors.ts';
export { DOCUMENT_FILTERS } from './filters.ts';
export { canonicalLocale, DEFAULT_LOCALE } from './locale.ts';

export interface TemplateSources {
  html: string;
  header_html?: string;
  footer_html?: string;
}

export interface TemplateRenderOptions {
  /**
   * BCP 47 locale for the number, currency, percent and date filters; default: the html's
   * `<html lang>`, else `en-US`. One that is not a well-formed tag is a TemplateError.
   */
  locale?: string;
}

// ---------------------------------------------------------------------------------------------
// Limits. Each bounds one way a template could make us spend unbounded time or memory; together
// they keep any template, however hostile, to well under a second and a few hundred MB.

/**
 * Characters per source (html, header_html, footer_html). The API takes request bodies up to
 * 5 MB, so no template can be stored larger; the check only makes the refusal a clear message.
 */
export const MAX_TEMPLATE_LENGTH = 5_000_000;

/**
 * `{{ }}` outputs plus `{% %}` tags (and the lines of `{% liquid %}` tags) per source. LiquidJS's
 * parser takes its tokens off the front of an array, which is quadratic once the array is large:
 * 10,000 tags parse in 0.2 s, 20,000 in 1.7 s, 100,000 in 40 s. 5,000 parse in under 0.1 s, and
 * are ten times what a long invoice or contract template uses.
 */
export const MAX_TEMPLATE_TAGS = 5_000;

/**
 * Block tags (`if`, `for`, `capture`...) open inside one another. Each level is a stack frame in
 * the parser and the renderer; a few thousand overflow the stack. Real templates nest under 10.
 */
export const MAX_NESTING_DEPTH = 100;

/**
 * CPU milliseconds a render (all three sources together) may spend in the template's own logic,
 * checked whenever a block renders, output is written or a filter runs. CPU time, not wall-clock
 * time, so a busy machine (Chromium printing beside it, other renders) does not fail a real
 * document for waiting its turn. A 5,000-line invoice (about 100 pages) with currency filters
 * takes 100 to 150 ms of CPU on an idle core and up to 500 ms on a crowded one (caches shared),
 * so this leaves twice the worst of that, while a runaway loop stops within a second.
 */
export const RENDER_TIME_LIMIT_MS = 1_000;

/**
 * CPU milliseconds a render may spend drawing QR codes and barcodes, counted apart from the
 * above: a QR code takes 10 to 100 ms to draw (see MAX_QR_BYTES), a barcode 2 to 10, so a sheet
 * of tickets or labels would not fit the template's budget. A second is dozens of QR codes or
 * hundreds of barcodes per document (identical codes are drawn once).
 */
export const CODE_TIME_LIMIT_MS = 1_000;

/**
 * LiquidJS's memory budget per source, in its units: characters of every string a filter builds,
 * elements of every list, and (added here) every character written to the output or a `capture`.
 * Escaped output counts twice (escaping, then writing), so a 5,000-line invoice (0.3 MB of HTML)
 * uses about 1 M. 20 M keeps the worst case to a few hundred MB of heap: a string doubled in a
 * loop, or a range of a billion numbers, stops at the first step past it.
 */
export const MEMORY_LIMIT = 20_000_000;

/**
 * Items in a list given to a filter. A filter runs in one step the render's clock cannot
 * interrupt, and LiquidJS's list filters (`where`, `where_exp`, `group_by`...) take 5 to 10 µs an
 * item on a busy core, so a list from 5 MB of data (a million items) would hold the render for
 * seconds. 20,000 items take at most 0.2 s, and are four 5,000-line invoices; loops over longer
 * lists are fine (the clock is checked each time round), as are the filters that do not go
 * through the list item by item in LiquidJS (FAST_LIST_FILTERS).
 */
export const MAX_FILTER_ITEMS = 20_000;

/** Filters that take a list of any length: constant time, or one native pass (join, JSON). */
const FAST_LIST_FILTERS = new Set(['size', 'first', 'last', 'slice', 'join', 'json', 'jsonify', 'inspect', 'default', 'raw']);

/**
 * Characters of HTML a source may render to: twice the largest document a caller can send
 * directly (5 MB), for what the renderer and Chromium are sized.
 */
export const MAX_OUTPUT_LENGTH = 10_000_000;

// ---------------------------------------------------------------------------------------------
// Header and footer page numbers

/**
 * The header/footer variables of the API (see lib/render/margin-boxes.ts), which Chromium fills in
 * per page when it prints. In header_html and footer_html they render as themselves, so the
 * renderer finds them after Liquid has run. They take the place of data fields of the same name
 * there (those stay reachable as `data.date` and so on).
 */
const PAGE_PLACEHOLDERS: Readonly<Record<string, string>> = Object.freeze({
  pageNumber: '{{pageNumber}}',
  totalPages: '{{totalPages}}',
  date: '{{date}}',
});

// ---------------------------------------------------------------------------------------------
// The engine

/** A file system that has no files: nothing a template does can open one. */
const NO_FILES: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => refuseFiles(),
  readFileSync: () => refuseFiles(),
  resolve: () => refuseFiles(),
  contains: async () => false,
  containsSync: () => false,
};

function refuseFiles(): never {
  throw new TemplateError('templates cannot read files');
}

/** `include`, `render` and `layout`: refused when the template is parsed, so it cannot be saved. */
class NoFilesTag extends Tag {
  constructor(token: TagToken, remainTokens: TopLevelToken[], liquid: Liquid) {
    super(token, remainTokens, liquid);
    throw new TemplateError(
      `{% ${token.name} %} is not available: a template is one self-contained document and cannot include files or other templates`,
    );
  }
  *render(): Generator<unknown, void, unknown> {}
}

/**
 * Writes output like LiquidJS's own emitter, but charges every character to the render's memory
 * budget. LiquidJS counts what filters build, not what is written, so without this a loop writing
 * a large string (or `capture` doubling one) would grow without bound until V8's string limit.
 */
class CountingEmitter implements Emitter {
  buffer = '';
  private readonly context: Context;
  private readonly clock: RenderClock;
  constructor(context: Context, clock: RenderClock) {
    this.context = context;
    this.clock = clock;
  }
  write(html: unknown): void {
    this.clock.check();
    const text = stringify(html);
    this.context.memoryLimit.use(text.length);
    this.buffer += text;
  }
}

/** CPU time this thread has used, in ms. */
function cpuNow(): number {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * The render's CPU budget: RENDER_TIME_LIMIT_MS for the template's logic, across its three
 * sources, and CODE_TIME_LIMIT_MS for drawing codes. Checked whenever a block (a loop's body each
 * time round, an `if` branch...) renders, output is written or a filter runs.
 *
 * Reading the thread's CPU time is a system call (2 µs), too slow for every check, but a thread
 * cannot use more CPU time than wall-clock time passes: so a check reads the cheap wall clock and
 * asks for CPU time only once enough wall-clock time has passed for the budget to possibly be
 * spent.
 */
export class RenderClock {
  private cpuAtStart = 0;
  private codeTime = 0;
  /** Wall-clock time (performance.now()) before which the budget cannot have run out. */
  private nextLook = Infinity;

  /** Starts the budget; until then nothing is late (parsing is bounded by the tag count). */
  start(): void {
    this.cpuAtStart = cpuNow();
    this.codeTime = 0;
    this.nextLook = performance.now() + RENDER_TIME_LIMIT_MS;
  }

  check(): void {
    const now = performance.now();
    if (now < this.nextLook) return;
    const left = RENDER_TIME_LIMIT_MS - (cpuNow() - this.cpuAtStart - this.codeTime);
    if (left <= 0) throw new TemplateError(CPU_LIMIT_MESSAGE);
    this.nextLook = now + left;
  }

  /** Runs `draw` (a QR code or barcode) on the code budget instead of the template's. */
  drawing<T>(draw: () => T): T {
    this.check();
    const started = cpuNow();
    try {
      return draw();
    } finally {
      this.codeTime += cpuNow() - started;
      if (this.codeTime > CODE_TIME_LIMIT_MS) {
        // Thrown from finally on purpose: past the limit, the limit is the error, whatever drawing did.
        throw new TemplateError(`drawing QR codes and barcodes took more than ${CODE_TIME_LIMIT_MS} ms of CPU time`);
      }
    }
  }
}

/** LiquidJS's stringify (not exported): how a value is written to the output. */
function stringify(value: unknown): string {
  const resolved: unknown = toValue(value);
  if (typeof resolved === 'string') return resolved;
  if (resolved === null || resolved === undefined) return '';
  if (Array.isArray(resolved)) return resolved.map(stringify).join('');
  return String(resolved);
}

/**
 * Makes every output of `liquid` go through a {@link CountingEmitter}: the renderer creates an
 * emitter whenever it is given none (the whole render, and each `capture`), so giving it ours there
 * covers everything written. Checked at creation, so a LiquidJS upgrade that moved this fails
 * loudly (and the unit tests for the capture-doubling template fail) instead of silently.
 */
function countOutput(liquid: Liquid, clock: RenderClock): void {
  const renderer = liquid.renderer;
  const renderTemplates = renderer.renderTemplates;
  if (typeof renderTemplates !== 'function') throw new Error('liquidjs: Render.renderTemplates is missing; output cannot be counted');
  renderer.renderTemplates = function* (templates: Template[], ctx: Context, emitter?: Emitter) {
    clock.check();
    return yield* renderTemplates.call(this, templates, ctx, emitter ?? new CountingEmitter(ctx, clock));
  };
}

type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;

/**
 * Wraps every filter so that the clock is checked before each call (a chain of filters in one
 * output is otherwise one step to it) and a list longer than MAX_FILTER_ITEMS is refused.
 */
function guardFilters(liquid: Liquid, clock: RenderClock): void {
  for (const [name, filter] of Object.entries(liquid.filters)) {
    const handler: FilterHandler = typeof filter === 'function' ? filter : filter.handler;
    const raw = typeof filter === 'function' ? false : filter.raw;
    liquid.filters[name] = {
      raw,
      handler(value: unknown, ...args: unknown[]) {
        clock.check();
        for (const input of FAST_LIST_FILTERS.has(name) ? [] : [value, ...args]) {
          if (Array.isArray(input) && input.length > MAX_FILTER_ITEMS) {
            throw new TemplateError(`${name}: the list has ${input.length} items; filters take at most ${MAX_FILTER_ITEMS}`);
          }
        }
        return handler.call(this, value, ...args);
      },
    };
  }
}

/**
 * A new engine with the safe configuration, the document filters and `locale` as their default
 * (`bwip` for the code filters, see loadBwip), and its clock. Exported for tests; callers use
 * {@link renderTemplate} and {@link checkTemplateSyntax}.
 */
export function createTemplateEngine(locale: string = DEFAULT_LOCALE, bwip?: typeof BwipJs): { liquid: Liquid; clock: RenderClock } {
  const clock = new RenderClock();
  const liquid = new Liquid({
    fs: NO_FILES,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    cache: false,
    outputEscape: 'escape',
    ownPropertyOnly: true,
    strictFilters: true,
    strictVariables: false,
    // The three sources are each checked against MAX_TEMPLATE_LENGTH first; this is a backstop.
    parseLimit: 3 * MAX_TEMPLATE_LENGTH,
    memoryLimit: MEMORY_LIMIT,
    // The `date` filter prints UTC wherever the engine runs, as Lambda does.
    timezoneOffset: 0,
    locale,
  });
  for (const name of ['include', 'render', 'layout']) liquid.registerTag(name, NoFilesTag);
  registerDocumentFilters(liquid, locale, { bwip, drawing: (draw) => clock.drawing(draw) });
  guardFilters(liquid, clock);
  countOutput(liquid, clock);
  return { liquid, clock };
}

// ---------------------------------------------------------------------------------------------
// Checking a source before Liquid parses it

const BLOCK_TAGS = new Set(['if', 'unless', 'for', 'case', 'capture', 'tablerow', 'comment', 'block']);

/**
 * Refuses a source that is too long, has too many tags or nests them too deeply, in one linear
 * pass before Liquid parses it. The tags are found by LiquidJS's own tokenizer (linear; it is the
 * parser after it that is quadratic), one at a time, so what is counted is exactly what the parser
 * will get: any scan of our own that disagreed with it (a `{% raw %}` written inside a `{{ "…" }}`
 * string, taken for a raw block) would let uncounted tags through. A source the tokenizer cannot
 * read (a tag not closed) is left to the parser, which refuses it the same way before its
 * quadratic step.
 */
function checkBounds(liquid: Liquid, source: string, name: TemplateSourceName): void {
  if (source.length > MAX_TEMPLATE_LENGTH) {
    throw new TemplateError(`the template is ${source.length} characters long; at most ${MAX_TEMPLATE_LENGTH} are allowed`, { source: name });
  }
  let tags = 0;
  const open: string[] = [];
  const countTag = (tag: string | undefined, index: number) => {
    tags++;
    if (tags > MAX_TEMPLATE_TAGS) {
      throw new TemplateError(`the template has more than ${MAX_TEMPLATE_TAGS} tags and outputs`, { source: name, ...position(source, index) });
    }
    if (tag === undefined) return;
    if (BLOCK_TAGS.has(tag)) {
      open.push(tag);
      if (open.length > MAX_NESTING_DEPTH) {
        throw new TemplateError(`tags nest more than ${MAX_NESTING_DEPTH} deep`, { source: name, ...position(source, index) });
      }
    } else if (tag.startsWith('end') && open.at(-1) === tag.slice(3)) {
      open.pop();
    }
  };
  const options = liquid.options;
  const tokenizer = new Tokenizer(source, options.operators);
  try {
    while (!tokenizer.end()) {
      const token = tokenizer.readTopLevelToken(options);
      if (token.kind === TokenKind.Output) {
        countTag(undefined, token.begin);
      } else if (token.kind === TokenKind.Tag) {
        const tag = token as TagToken;
        countTag(tag.name, tag.begin);
        if (tag.name === 'liquid') {
          // Each line of a liquid tag is a tag of its own.
          for (let line = tag.tokenizer.readLiquidTagToken(options); line !== undefined; line = tag.tokenizer.readLiquidTagToken(options)) {
            countTag(line.name, line.begin);
          }
        }
      }
    }
  } catch (error) {
    if (error instanceof TemplateError) throw error;
    // Not readable as Liquid: the parser says why.
  }
}

/** Line and column (1-based) of `index` in `source`. */
function position(source: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i >= 0 && i < index; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: index - lineStart + 1 };
}

// ---------------------------------------------------------------------------------------------
// Errors

const LIMIT_MESSAGES: Record<string, string> = {
  'memory alloc limit exceeded': `the template builds too much text: more than ${MEMORY_LIMIT} characters or list items in one render (a loop or filter that grows a string or list?)`,
  'parse length limit exceeded': `the template is longer than ${MAX_TEMPLATE_LENGTH} characters`,
};

const GENERIC_FAILURE = 'the template could not be rendered';
const CPU_LIMIT_MESSAGE = `rendering took more than ${RENDER_TIME_LIMIT_MS} ms of CPU time (a loop that runs too often?)`;

/** What went wrong, in words safe to show the template's author. */
function describe(error: unknown): string {
  if (error instanceof TemplateError) return error.detail;
  if (!(error instanceof Error)) return GENERIC_FAILURE;
  const limit = LIMIT_MESSAGES[error.message];
  if (limit !== undefined) return limit;
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'tags nest too deeply';
  if (error instanceof RangeError && /string length/i.test(error.message)) return LIMIT_MESSAGES['memory alloc limit exceeded']!;
  // LiquidJS's own errors describe the template (`tag "x" not found`, `undefined filter: y`);
  // JavaScript's built-in ones describe a value (`Cannot read properties of null`). Anything else
  // could come from deeper down and is not shown.
  if (LiquidError.is(error) || error.name === 'AssertionError' || error instanceof TypeError || error instanceof RangeError) {
    return error.message.replace(/(, file:.*?)?, line:\d+, col:\d+$/, '').slice(0, 300);
  }
  return GENERIC_FAILURE;
}

function toTemplateError(error: unknown, source: TemplateSourceName): TemplateError {
  if (error instanceof TemplateError) {
    return error.source === undefined ? new TemplateError(error.detail, { source, line: error.line, column: error.column, cause: error }) : error;
  }
  if (LiquidError.is(error)) {
    const liquidError = error as LiquidError & { token?: { getPosition?: () => [number, number] } };
    const original = (liquidError as { originalError?: unknown }).originalError;
    const [line, column] = liquidError.token?.getPosition?.() ?? [];
    const inner = original instanceof TemplateError ? original : undefined;
    // What the parser throws is about the template's text (`tag {% if %} not closed`), whatever
    // its class; a render error's cause is shown only when describe() knows it is safe.
    let detail = describe(original ?? error);
    if (detail === GENERIC_FAILURE && error.name === 'ParseError' && original instanceof Error) detail = original.message.slice(0, 300);
    return new TemplateError(detail, {
      source,
      line: inner?.line ?? line,
      column: inner?.column ?? column,
      cause: error,
    });
  }
  return new TemplateError(describe(error), { source, cause: error });
}

// ---------------------------------------------------------------------------------------------
// Data

/**
 * A deep copy of JSON data, frozen: templates see only plain objects, arrays and primitives that
 * nothing else shares. Iterative, so deep data cannot overflow the stack; anything that is not
 * JSON (functions, class instances, non-finite numbers) is refused. About 50 ms for 5 MB.
 */
function copyData(value: unknown): unknown {
  const created: object[] = [];
  const pending: [source: object, target: Record<string, unknown> | unknown[], depth: number][] = [];
  const copy = (item: unknown, depth: number): unknown => {
    if (item === null || typeof item === 'string' || typeof item === 'boolean') return item;
    if (typeof item === 'number') {
      if (!Number.isFinite(item)) throw new TemplateError('data must be JSON: numbers must be finite');
      return item;
    }
    if (typeof item !== 'object') throw new TemplateError('data must be JSON');
    if (depth >= MAX_JSON_DEPTH) throw new TemplateError(`data nests more than ${MAX_JSON_DEPTH} levels deep`);
    let target: Record<string, unknown> | unknown[];
    if (Array.isArray(item)) {
      target = new Array<unknown>(item.length);
    } else {
      const prototype: unknown = Object.getPrototypeOf(item);
      if (prototype !== Object.prototype && prototype !== null) throw new TemplateError('data must be JSON: plain objects, arrays and values only');
      target = {};
    }
    pending.push([item, target, depth]);
    created.push(target);
    return target;
  };
  const root = value === undefined ? undefined : copy(value, 0);
  while (pending.length > 0) {
    const [source, target, depth] = pending.pop()!;
    if (Array.isArray(source)) {
      const array = target as unknown[];
      // undefined in a list is null, as JSON.stringify writes it.
      for (let index = 0; index < source.length; index++) array[index] = source[index] === undefined ? null : copy(source[index], depth + 1);
      continue;
    }
    const object = target as Record<string, unknown>;
    for (const [key, item] of Object.entries(source)) {
      if (item === undefined) continue; // left out, as JSON.stringify does
      const copied = copy(item, depth + 1);
      // A field called "__proto__" must stay a field: assigning it would set the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value: copied, enumerable: true, writable: true, configurable: true });
      else object[key] = copied;
    }
  }
  for (const object of created) Object.freeze(object);
  return root;
}

/**
 * The variables a template sees: the data's fields, and `data` for the whole of it (also when it
 * is not an object; it takes the place of a field named `data`). Fresh per source, as `assign`
 * writes to it (counters are kept apart: lib/templates/counters.ts).
 */
function scopeFor(data: unknown, extra: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  const fields = typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {};
  return { ...fields, data, ...extra };
}

// ---------------------------------------------------------------------------------------------
// Locale

/**
 * The locale of a render: the option, else the lang of the html's `<html>` element as a browser
 * reads it (html-lang.ts; a commented-out `<html lang>` is not the element), when a valid tag,
 * else en-US.
 */
function resolveLocale(option: string | undefined, html: string): string {
  if (option !== undefined) {
    const locale = canonicalLocale(option);
    if (locale === undefined) throw new TemplateError(`locale "${option.slice(0, 50)}" is not a BCP 47 language tag (like "en-US" or "de-DE")`);
    return locale;
  }
  const lang = htmlLang(html);
  return (lang !== undefined ? canonicalLocale(lang) : undefined) ?? DEFAULT_LOCALE;
}

// ---------------------------------------------------------------------------------------------
// The API

const SOURCE_NAMES: readonly TemplateSourceName[] = ['html', 'header_html', 'footer_html'];
const CODE_FILTER_NAME = new RegExp(`\\b(?:${CODE_FILTERS.join('|')})\\b`);

function parseSource(liquid: Liquid, source: string, name: TemplateSourceName): Template[] {
  checkBounds(liquid, source, name);
  try {
    return liquid.parse(source);
  } catch (error) {
    throw toTemplateError(error, name);
  }
}

/**
 * Refuses a template that cannot be rendered whatever the data: a syntax error, an unknown tag or
 * filter, a file include, or a source past the length, tag or nesting limits. For create and
 * update, so a broken template is refused when it is saved (400) rather than when it is used.
 * Throws {@link TemplateError}.
 */
export function checkTemplateSyntax(sources: TemplateSources): void {
  const { liquid } = createTemplateEngine();
  for (const name of SOURCE_NAMES) {
    const source = sources[name];
    if (source !== undefined) parseSource(liquid, source, name);
  }
}

/**
 * Renders a template's sources with `data` (JSON; its fields are the template's variables, the
 * whole is also `data`), on the calling thread: what serves requests calls it through
 * lib/customer-code/pool.ts, in a bounded worker. In header_html and footer_html, `{{ pageNumber }}`, `{{ totalPages }}`
 * and `{{ date }}` render as themselves for the renderer to fill in per page. Throws
 * {@link TemplateError} for a syntax error, a limit exceeded or a filter given unusable data; its
 * message is safe to show the caller.
 */
export async function renderTemplate(sources: TemplateSources, data: unknown, options: TemplateRenderOptions = {}): Promise<TemplateSources> {
  const locale = resolveLocale(options.locale, sources.html);
  // A filter is named in the source to be used, so this finds every template that needs bwip-js.
  const usesCodes = SOURCE_NAMES.some((name) => CODE_FILTER_NAME.test(sources[name] ?? ''));
  const { liquid, clock } = createTemplateEngine(locale, usesCodes ? await loadBwip() : undefined);
  const parsed = new Map<TemplateSourceName, Template[]>();
  for (const name of SOURCE_NAMES) {
    const source = sources[name];
    if (source !== undefined) parsed.set(name, parseSource(liquid, source, name));
  }
  const frozen = copyData(data);
  const result: TemplateSources = { html: '' };
  clock.start();
  for (const [name, templates] of parsed) {
    const scope = scopeFor(frozen, name === 'html' ? {} : PAGE_PLACEHOLDERS);
    result[name] = renderSource(liquid, templates, scope, name);
  }
  // A link whose scheme the data chose (javascript:, data:...) prints as text, never as a link.
  result.html = withoutUnsafeLinks(result.html);
  return result;
}

/**
 * Renders synchronously: LiquidJS's asynchronous render awaits every tag, five to ten times slower
 * (a 5,000-line invoice: 1 s against 0.15 s), and nothing here waits for I/O.
 */
function renderSource(liquid: Liquid, templates: Template[], scope: object, name: TemplateSourceName): string {
  let output: unknown;
  try {
    output = liquid.renderSync(templates, scope);
  } catch (error) {
    throw toTemplateError(error, name);
  }
  const html = stringify(output);
  if (html.length > MAX_OUTPUT_LENGTH) {
    throw new TemplateError(`the template renders to ${html.length} characters; at most ${MAX_OUTPUT_LENGTH} are allowed`, { source: name });
  }
  return html;
}
