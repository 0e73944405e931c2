/**
 * Random and hostile request bodies for the request fuzz tests (test/unit/request-fuzz.test.ts on
 * the validation code, test/integration/request-fuzz.test.ts through the running stack), built from
 * the option names the API documents, and the checks both apply to what comes back.
 *
 * Large or deep values (a 20,000-level array, a 1 MB string, HTML nested 20,000 deep) are generated
 * as {@link Hostile} descriptions and built only by {@link materialize}: fast-check then shrinks
 * their size as a number and prints a counterexample as `deepArray(2711)` rather than 2711 levels
 * of brackets (printing those would itself overflow the stack).
 */
import fc from 'fast-check';
import { MAX_MARGIN_BOX_CHARS } from '#lib/render/options.ts';

/** Every option of the single endpoint and of a batch item's `options` (spec 4.1, shared/spec/beyond.md). */
export const OPTION_NAMES = [
  'format',
  'margin',
  'orientation',
  'print_background',
  'scale',
  'wait_for',
  'header_html',
  'footer_html',
  'wait_for_selector',
  'wait_for_expression',
  'wait_delay_ms',
  'emulate_media',
  'tagged',
  'width',
  'height',
  'prefer_css_page_size',
  'page_ranges',
  'outline',
  'metadata_pdf',
  'watermark',
  'encryption',
  'filename',
  'signature',
  'http_headers',
  'cookies',
  'basic_auth',
  'user_agent',
  'fail_on_http_status',
  'image',
  'thumbnail',
  'css',
] as const;
export type OptionName = (typeof OPTION_NAMES)[number];

/**
 * - `unit`: anything a caller could send, for the pure validation code.
 * - `http`: the same hostility, but every value the API accepts finishes well inside the test
 *   stack's render budget (no long delays, readiness conditions that hold at once, no network),
 *   since a valid request that waits for something that never happens is a documented 504.
 */
export type Profile = 'unit' | 'http';

/** The most characters (code points) of caller input an error message may repeat: an unknown key of 1 MB is never echoed whole. */
export const MAX_QUOTED_CHARS = 100;
/**
 * "About" 100: the wording next to a quote may happen to match the input too (the space after
 * "Unknown field:" before 100 quoted spaces), so a run of caller input counts as over the limit
 * only past this many more characters.
 */
export const QUOTE_TOLERANCE_CHARS = 20;
/** An error message is a sentence: fixed wording (under ~250 characters) plus at most ~100 quoted ones. */
export const MAX_MESSAGE_CHARS = 500;
/** The depth the issue names: 20,000 levels of arrays, objects or elements. */
export const DEEP = 20_000;
/** Longest string the generators build. */
export const LONG = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Hostile values, described and built on demand

/** A value too large or deep to print, described by the call that builds it. */
export class Hostile {
  readonly description: string;
  readonly build: () => unknown;

  constructor(description: string, build: () => unknown) {
    this.description = description;
    this.build = build;
  }

  [fc.toStringMethod](): string {
    return this.description;
  }
}

export function deepArray(depth: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

export function deepObject(depth: number, key = 'a'): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level++) value = { [key]: value };
  return value;
}

/** `<tag>` opened `depth` times and never closed (as browsers and parse5 accept), with text inside. */
export function deepHtml(tag: string, depth: number): string {
  return `<${tag}>`.repeat(depth) + 'x';
}

const hostile = (description: string, build: () => unknown) => new Hostile(description, build);

// fast-check biases integers towards both ends of their range, so 20,000 levels and 1 MB come up
// often, and a failure shrinks towards the smallest size that still fails.
const depthArb = fc.integer({ min: 1, max: DEEP });
const lengthArb = (max: number) => fc.integer({ min: MAX_QUOTED_CHARS + QUOTE_TOLERANCE_CHARS + 1, max });
const LONG_UNITS = ['k', 'é', ' ', '9', '\t', '\u0000', '\ud800', '😀', '<b>', '{{date}}', '\\u0000'];

export const deepArrayArb = depthArb.map((depth) => hostile(`deepArray(${depth})`, () => deepArray(depth)));
export const deepObjectArb = fc
  .tuple(depthArb, fc.constantFrom('a', '__proto__', 'constructor', 'top'))
  .map(([depth, key]) => hostile(`deepObject(${depth}, ${JSON.stringify(key)})`, () => deepObject(depth, key)));
export const longStringArb = (max = LONG) =>
  fc
    .tuple(fc.constantFrom(...LONG_UNITS), lengthArb(max))
    .map(([unit, length]) =>
      hostile(`longString(${JSON.stringify(unit)}, ${length})`, () => unit.repeat(Math.ceil(length / unit.length)).slice(0, length)),
    );
export const HTML_TAGS = ['div', 'span', 'b', 'p', 'table', 'td', 'a', 'x-unknown', 'svg', 'ul', 'li', 'font', 'template', 'select', 'math'];
export const deepHtmlArb = fc
  .tuple(fc.constantFrom(...HTML_TAGS), depthArb)
  .map(([tag, depth]) => hostile(`deepHtml(${JSON.stringify(tag)}, ${depth})`, () => deepHtml(tag, depth)));
/** Headers and footers nested as deep as their length limit allows: 20,000 levels of `<b>`, fewer of longer tags. */
export const deepMarginBoxArb = fc
  .tuple(fc.constantFrom('b', 'p', 'a', 'td', 'li', 'div', 'span', 'svg', 'x-unknown'), depthArb)
  .map(([tag, wanted]) => {
    const depth = Math.min(wanted, Math.floor((MAX_MARGIN_BOX_CHARS - 1) / (tag.length + 2)));
    return hostile(`deepHtml(${JSON.stringify(tag)}, ${depth})`, () => deepHtml(tag, depth));
  });
/** A number with hundreds of digits, as a string: 1e400 and friends. */
export const hugeNumberStringArb = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e-400', '1e308', 'Infinity', '-0', 'NaN', '0x10', '1_000', '١٢'),
  fc.tuple(fc.integer({ min: 20, max: 400 }), fc.constantFrom('', 'px', 'mm', 'in', 'cm', 'pt', ' mm')).map(([digits, unit]) =>
    hostile(`hugeDigits(${digits}, ${JSON.stringify(unit)})`, () => '9'.repeat(digits) + unit),
  ),
);

/**
 * A generated object, kept as its entries until {@link materialize} builds it: a key may be
 * {@link Hostile} too (an unknown field named by 1 MB of text), and `__proto__` stays a key.
 */
export class Fields {
  readonly entries: readonly (readonly [string | Hostile, unknown])[];

  constructor(entries: readonly (readonly [string | Hostile, unknown])[]) {
    this.entries = entries;
  }

  has(key: string): boolean {
    return this.entries.some(([name]) => name === key);
  }

  get(key: string): unknown {
    return this.entries.find(([name]) => name === key)?.[1];
  }

  without(key: string): Fields {
    return new Fields(this.entries.filter(([name]) => name !== key));
  }

  [fc.toStringMethod](): string {
    const key = (name: string | Hostile) => (name instanceof Hostile ? `[${name.description}]` : JSON.stringify(name));
    return `{${this.entries.map(([name, value]) => `${key(name)}:${fc.stringify(value)}`).join(',')}}`;
  }
}

export const fields = (entries: readonly (readonly [string | Hostile, unknown])[]) => new Fields(entries);

/** Builds every {@link Hostile} and {@link Fields} inside a generated value; everything else is kept as it is. */
export function materialize(value: unknown): any {
  if (value instanceof Hostile) return value.build();
  if (value instanceof Fields) {
    return ownObject(value.entries.map(([key, inner]) => [key instanceof Hostile ? String(key.build()) : key, materialize(inner)]));
  }
  if (Array.isArray(value)) return value.map(materialize);
  if (value !== null && typeof value === 'object') return ownObject(Object.entries(value).map(([key, inner]) => [key, materialize(inner)]));
  return value;
}

/**
 * An object with exactly these own properties, `__proto__` included, as JSON.parse makes it
 * (an assignment or an object literal would set the prototype instead).
 */
export function ownObject(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

// ---------------------------------------------------------------------------------------------
// Odd strings and numbers

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
const ODD_STRINGS = ['', ' ', '\u0000', 'A4\u0000', '\ud800', '\udfff', 'A4\ud800', '\ufeff', '\u202e', 'null', 'undefined', '[object Object]', '{}', '<', '</', '<!--'];
const ODD_NUMBERS = [0, -0, -1, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2, 2 ** 31, -(2 ** 31)];

/** Values of no particular shape: JSON only over HTTP, anything JavaScript has in the pure code. */
const noiseArb = (profile: Profile) =>
  profile === 'unit'
    ? fc.oneof(fc.anything(), fc.constantFrom<unknown>(NaN, Infinity, -Infinity, undefined))
    : fc.jsonValue();

/** Keys the API does not know: near-misses, prototype names, random and 1 MB long ones. */
export const unknownKeyArb = (profile: Profile) =>
  fc.oneof(
    fc.constantFrom(...PROTOTYPE_KEYS),
    fc.constantFrom('HTML', 'html ', 'Format', 'paper_size', 'pdfs', 'options', 'margin_top', 'html\u0000', '\ud800', ''),
    fc.string({ unit: 'binary', maxLength: 20 }),
    longStringArb(profile === 'unit' ? LONG : LONG / 4),
  );

/** Something hostile in any position: deep, long, huge, odd, or prototype-shaped. */
export const hostileValueArb = (profile: Profile) =>
  fc.oneof(
    deepArrayArb,
    deepObjectArb,
    longStringArb(profile === 'unit' ? LONG : LONG / 4),
    hugeNumberStringArb,
    fc.constantFrom<unknown>(...ODD_STRINGS, ...ODD_NUMBERS, null, true, [], {}),
    fc.constantFrom(...PROTOTYPE_KEYS).map((key) => fields([[key, { polluted: true }]])),
  );

// ---------------------------------------------------------------------------------------------
// Option values: valid, invalid, hostile, noise

const length = fc
  .tuple(
    fc.oneof(fc.integer({ min: 0, max: 40 }).map(String), fc.constantFrom('0.5', '.5', '12.25', '0')),
    fc.constantFrom('', 'px', 'pt', 'in', 'cm', 'mm', 'MM', ' mm'),
  )
  .map(([number, unit]) => number + unit);
/** Valid lengths, big ones included: whether they leave room for content is resolveRenderOptions' business. */
const bigLength = fc.constantFrom('5in', '140mm', '500px', '14cm', '400pt', '100in');
const marginObject = (side: fc.Arbitrary<string>) =>
  fc.record({ top: side, right: side, bottom: side, left: side }, { requiredKeys: [] });

const VALID: Record<OptionName, (profile: Profile) => fc.Arbitrary<unknown>> = {
  format: () => fc.constantFrom('A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid', 'a4', ' letter ', 'TABLOID'),
  margin: () => fc.oneof({ arbitrary: length, weight: 2 }, { arbitrary: marginObject(length), weight: 2 }, { arbitrary: bigLength, weight: 1 }, marginObject(bigLength)),
  orientation: () => fc.constantFrom('portrait', 'landscape'),
  print_background: () => fc.boolean(),
  scale: () => fc.oneof(fc.constantFrom(0.1, 1, 2), fc.double({ min: 0.1, max: 2, noNaN: true })),
  wait_for: (profile) =>
    profile === 'unit'
      ? fc.constantFrom('load', 'domcontentloaded', 'networkidle0', 'networkidle2')
      : // networkidle waits half a second of quiet: valid, but kept rare to keep the run short.
        fc.oneof({ arbitrary: fc.constantFrom('load', 'domcontentloaded'), weight: 6 }, fc.constantFrom('networkidle0', 'networkidle2')),
  header_html: (profile) => marginBoxHtml(profile),
  footer_html: (profile) => marginBoxHtml(profile),
  wait_for_selector: (profile) =>
    profile === 'unit'
      ? fc.oneof(fc.constantFrom('p', 'body', '#x', '.y > p'), fc.string({ minLength: 1, maxLength: 20 }))
      : // Every tiny document has these, visible.
        fc.constantFrom('body', 'html', '*', 'body > *'),
  wait_for_expression: (profile) =>
    profile === 'unit'
      ? fc.oneof(fc.constantFrom('true', '1 + 1', 'window.ready === true'), fc.string({ minLength: 1, maxLength: 20 }))
      : fc.constantFrom('true', '1', 'document.readyState !== ""', '!!document.body'),
  wait_delay_ms: (profile) => (profile === 'unit' ? fc.integer({ min: 0, max: 10_000 }) : fc.constantFrom(0, 1, 10, 50)),
  emulate_media: () => fc.constantFrom('print', 'screen'),
  tagged: () => fc.boolean(),
  width: () => fc.constantFrom('4in', '210mm', '800px', '1in'),
  height: () => fc.constantFrom('6in', '297mm', '600px', '1in'),
  prefer_css_page_size: () => fc.boolean(),
  // The tiny documents have one page.
  page_ranges: (profile) => (profile === 'unit' ? fc.constantFrom('1', '1-3, 5', '2-', ' 1 , 2-4 ') : fc.constantFrom('1', '1-', '1-1')),
  outline: () => fc.boolean(),
  metadata_pdf: () =>
    fc.record(
      { title: fc.string({ maxLength: 40 }), author: fc.string({ maxLength: 20 }), subject: fc.string({ maxLength: 20 }), keywords: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), creator: fc.string({ maxLength: 20 }) },
      { requiredKeys: [] },
    ).filter((metadata) => !Object.values(metadata).flat().some((value) => /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value))),
  watermark: () =>
    fc.record(
      { text: fc.constantFrom('DRAFT', 'CONFIDENTIAL', 'ரகசியம்', 'سري', '<b>x</b> & "y"'), opacity: fc.double({ min: 0.05, max: 1, noNaN: true }), angle: fc.integer({ min: -90, max: 90 }) },
      { requiredKeys: ['text'] },
    ),
  encryption: () =>
    fc.record(
      { owner_password: fc.constantFrom('owner-secret', 'Ω wner ✓'), user_password: fc.constantFrom('', 'user', 'пароль'), permissions: fc.subarray(['print', 'copy', 'modify', 'annotate']) },
      { requiredKeys: ['owner_password'] },
    ),
  filename: () => fc.constantFrom('invoice', 'Rechnung März.pdf', 'விலை.PDF', 'a b c', 'x..y'),
  // No key of the fuzz's owns one: a well-formed id is 404 signing_key_not_found, before any render.
  signature: () =>
    fc.record(
      {
        signing_key_id: fc.constantFrom('sk_doesnotexist00000000000', 'sk_A'),
        reason: fc.constantFrom('Invoice issued', 'Unterschrift ✓', 'توقيع'),
        location: fc.constantFrom('Berlin', 'São Paulo'),
        contact_info: fc.constantFrom('billing@example.com'),
        timestamp: fc.boolean(),
        visible: fc.constantFrom({ page: 1, x: '10mm', y: '10mm', width: '60mm', height: '20mm' }, { page: 2, x: '0', y: '1in', width: '200pt', height: '50px', text: 'Signed' }),
      },
      { requiredKeys: ['signing_key_id'] },
    ),
  // For url documents only: with the fuzz's html they are refused, with its urls the url is.
  http_headers: () => fc.constantFrom({}, { 'X-Token': 'abc' }, { Accept: 'text/html', 'X-Tenant': 't 1' }),
  cookies: () => fc.constantFrom([], [{ name: 'session', value: 'abc' }], [{ name: 'a', value: '1', path: '/x', secure: true, http_only: true }]),
  basic_auth: () => fc.constantFrom({ username: 'u', password: 'p' }, { username: '', password: '' }),
  user_agent: () => fc.constantFrom('Mozilla/5.0 (test)', 'x'),
  fail_on_http_status: () => fc.boolean(),
  image: () => fc.record({ format: fc.constantFrom('png', 'webp'), width: fc.integer({ min: 1, max: 1200 }), height: fc.integer({ min: 1, max: 800 }) }, { requiredKeys: [] }),
  thumbnail: () => fc.record({ width: fc.integer({ min: 1, max: 400 }), format: fc.constantFrom('png', 'jpeg', 'webp') }, { requiredKeys: [] }),
  css: () => fc.constantFrom('body { color: #333 }', ''),
};

/** Options that only apply to url documents, which the valid (html) bodies leave out. */
const URL_ONLY: readonly OptionName[] = ['http_headers', 'cookies', 'basic_auth', 'user_agent', 'fail_on_http_status'];
/**
 * Options the valid (html, PDF) bodies leave out too: `image` is for pictures and `css` for Markdown
 * (both refused by name on an html PDF), and a thumbnail is a second render per body, which
 * test/integration/images-markdown.test.ts checks once rather than the fuzz many times.
 */
const NOT_IN_VALID_HTML_PDFS: readonly OptionName[] = [...URL_ONLY, 'image', 'css', 'thumbnail'];

const marginBoxHtml = (_profile: Profile) =>
  fc.oneof(
    fc.constantFrom(
      'Page <span class="pageNumber"></span> of <span class="totalPages"></span>',
      'Page {{pageNumber}} of {{totalPages}} – {{date}}',
      '<b>ACME</b>',
      '',
      '<div style="text-align:right">x</div>',
      '<script>alert(1)</script>x',
      '<table><tr><td>a</td></tr></table>',
      '<svg width="5" height="5"><rect width="5" height="5"/></svg>',
    ),
    fc.string({ maxLength: 40 }),
  );

const INVALID: Record<OptionName, (profile: Profile) => fc.Arbitrary<unknown>> = {
  format: () => fc.constantFrom('A9', '', 'A 4', 'Ａ4', 'letter-size', 4, null, true, ['A4'], { name: 'A4' }),
  margin: () =>
    fc.oneof(
      fc.constantFrom('banana', '-1mm', '10em', '1e3px', '1e400px', 'NaNpx', 'Infinitypx', '', '10 m m', 10, null, [], ['10mm'], true),
      fc.constantFrom({ top: 'banana' }, { middle: '1mm' }, { top: 10 }, { top: null }, { left: '200mm', right: '200mm' }, { top: '100in' }),
      fc.constantFrom('100in', '300mm', '2000px'),
    ),
  orientation: () => fc.constantFrom('Landscape', 'sideways', '', 'portrait ', 1, true, null),
  print_background: () => fc.constantFrom('true', 'false', 1, 0, null, 'yes', []),
  scale: () => fc.oneof(fc.constantFrom(0, 0.09, 2.0001, -1, '1', null, true, [], 1e308), fc.double({ min: 2.000001, max: 1e6, noNaN: true })),
  wait_for: () => fc.constantFrom('later', 'LOAD', '', 'networkidle', 'load ', 0, null),
  header_html: () => fc.oneof(fc.constantFrom(12, null, {}, ['<b>x</b>'], true), fc.constant(hostile('longString("x", 100001)', () => 'x'.repeat(100_001)))),
  footer_html: () => fc.oneof(fc.constantFrom(12, null, {}, ['<b>x</b>'], true), fc.constant(hostile('longString("x", 100001)', () => 'x'.repeat(100_001)))),
  wait_for_selector: () =>
    fc.oneof(fc.constantFrom('', '   ', 12, null, {}, '###', '[', 'p[', ':::'), fc.constant(hostile('longString("p", 10001)', () => 'p'.repeat(10_001)))),
  wait_for_expression: () =>
    fc.oneof(
      fc.constantFrom('', '  ', ')', 'return 1', '}{', '1;2', '(', 12, null, []),
      fc.constant(hostile('longString("1", 10001)', () => '1'.repeat(10_001))),
      fc.integer({ min: 1, max: 5_000 }).map((depth) => hostile(`nestedParens(${depth})`, () => '('.repeat(depth) + ')'.repeat(depth + 1))),
    ),
  wait_delay_ms: () => fc.oneof(fc.constantFrom(-1, 10_001, 1.5, '100', null, 1e308, true), fc.integer({ min: 10_001 })),
  emulate_media: () => fc.constantFrom('PRINT', 'tv', '', 'all', 1, null),
  tagged: () => fc.constantFrom('true', 1, 0, null, 'no', {}),
  width: () => fc.constantFrom('0.1in', '300in', 'wide', '', 4, null, '1e400px'),
  height: () => fc.constantFrom('0.1in', '300in', 'tall', '', 6, null, '-1in'),
  prefer_css_page_size: () => fc.constantFrom('true', 1, null, 'no'),
  page_ranges: () =>
    fc.oneof(
      fc.constantFrom('0', '3-1', '-3', '', ',', '1,,2', 'a', '1.5', '99999999', 1, null, ['1'], '9999999'),
      fc.constant(hostile('manyRanges(5000)', () => Array.from({ length: 5_000 }, (_, i) => String(i + 1)).join(','))),
    ),
  outline: () => fc.constantFrom('true', 1, null, 'no'),
  metadata_pdf: () => fc.constantFrom(null, 'title', [], { titel: 'x' }, { title: 1 }, { keywords: 'a, b' }, { keywords: [1] }, { title: 'x'.repeat(1_001) }, { author: 'a\u0000b' }),
  watermark: () =>
    fc.constantFrom(null, 'DRAFT', {}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(201) }, { text: 'x', opacity: 0 }, { text: 'x', opacity: 2 }, { text: 'x', angle: 91 }, { text: 'x', size: 3 }),
  encryption: () =>
    fc.constantFrom(
      null,
      'secret',
      {},
      { user_password: 'u' },
      { owner_password: '' },
      { owner_password: 'same', user_password: 'same' },
      { owner_password: 'o', permissions: ['fly'] },
      { owner_password: 'o', permissions: 'print' },
      { owner_password: 'é'.repeat(64) },
    ),
  filename: () => fc.constantFrom('', '../x', 'a/b', 'a\\b', 'x'.repeat(201), 'a\nb', '..', 'a\u202eb', '..／x', 'CON', 12, null),
  signature: () =>
    fc.constantFrom(
      null,
      'sk_x',
      {},
      { signing_key_id: 'key_1' },
      { signing_key_id: 'sk_x', reason: '' },
      { signing_key_id: 'sk_x', reason: 'r'.repeat(201) },
      { signing_key_id: 'sk_x', timestamp: 'yes' },
      { signing_key_id: 'sk_x', extra: 1 },
      { signing_key_id: 'sk_x', visible: { page: 0, x: '1mm', y: '1mm', width: '1mm', height: '1mm' } },
      { signing_key_id: 'sk_x', visible: { page: 1, x: 'left', y: '1mm', width: '1mm', height: '1mm' } },
      { signing_key_id: 'sk_x', visible: { page: 1 } },
    ),
  http_headers: () => fc.constantFrom(null, [], { Host: 'x' }, { Cookie: 'a=b' }, { 'X-A': 'a\r\nb: c' }, { 'bad name': 'x' }, { 'X-A': 1 }, { Connection: 'close' }),
  cookies: () => fc.constantFrom(null, {}, [{}], [{ name: 'a' }], [{ name: 'a', value: 'x;y' }], [{ name: 'a b', value: 'x' }], [{ name: 'a', value: 'b', domain: 'evil.test' }]),
  basic_auth: () => fc.constantFrom(null, 'u:p', {}, { username: 'a:b', password: 'p' }, { username: 'u' }, { username: 1, password: 2 }),
  user_agent: () => fc.constantFrom('', 'x'.repeat(301), 'a\nb', 1, null),
  fail_on_http_status: () => fc.constantFrom('true', 1, null, 'no'),
  image: () => fc.constantFrom(null, 'png', { format: 'gif' }, { width: 0 }, { width: 20_000 }, { quality: 50 }, { full_page: true, clip: { x: 0, y: 0, width: 1, height: 1 } }, { device_scale_factor: 9 }),
  thumbnail: () => fc.constantFrom(null, true, { width: 0 }, { width: 5000 }, { format: 'bmp' }, { height: 10 }),
  css: () => fc.constantFrom(null, 12, '</style><script>alert(1)</script>'),
};

/** Values the API must refuse or accept as a whole, for options where strings could be valid but never come true over HTTP. */
const CONDITIONS: readonly OptionName[] = ['wait_for_selector', 'wait_for_expression'];

/** A value for the option `name`: mostly valid, often invalid, sometimes hostile or noise. */
export function optionValueArb(name: OptionName, profile: Profile, mix: 'valid' | 'any' = 'any'): fc.Arbitrary<unknown> {
  const valid = VALID[name](profile);
  if (mix === 'valid') return valid;
  let hostileValue = hostileValueArb(profile);
  let noise: fc.Arbitrary<unknown> = noiseArb(profile);
  if (profile === 'http' && CONDITIONS.includes(name)) {
    // A random string is a selector or expression that may never match: a documented 504, not a bug.
    const notAString = (value: unknown) => typeof value !== 'string' && !(value instanceof Hostile && typeof value.build() === 'string');
    hostileValue = hostileValue.filter(notAString);
    noise = noise.filter(notAString);
  }
  if (name === 'header_html' || name === 'footer_html') {
    // Deeply nested headers within their length limit: what the margin box code must survive.
    hostileValue = fc.oneof(hostileValue, deepMarginBoxArb);
  }
  if (name === 'margin') {
    // Lengths the schema reads as numbers, however many digits: 1e400 px as a margin.
    hostileValue = fc.oneof(
      hostileValue,
      hugeNumberStringArb,
      fc.constantFrom('1' + '0'.repeat(21) + 'px', '1' + '0'.repeat(21), { top: '9'.repeat(30) + 'mm' }),
    );
  }
  return fc.oneof(
    { arbitrary: valid, weight: 3 },
    { arbitrary: INVALID[name](profile), weight: 3 },
    { arbitrary: hostileValue, weight: 2 },
    { arbitrary: noise, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Sources: html and url

/** Small documents that render at once. */
export const TINY_HTML = ['<p>x</p>', '<!doctype html><p>x</p>', '<p>x', '<h1>x</h1><p>y</p>', '<table><tr><td>x'];

const validHtmlArb = (profile: Profile) =>
  profile === 'unit' ? fc.oneof(fc.constantFrom(...TINY_HTML), fc.string({ minLength: 1, maxLength: 200 })) : fc.constantFrom(...TINY_HTML);

const invalidHtmlArb = (profile: Profile) =>
  fc.oneof(
    fc.constantFrom('<div class="x', '<!-- x', '<p>\u0000</p>', '<p>&#0;</p>', '', '   ', '<script>', '<p', '<title>x', 1, null, true, [], {}),
    // Long, but cut off inside a tag: refused before anything renders.
    lengthArb(profile === 'unit' ? LONG : LONG / 4).map((length) =>
      hostile(`truncatedHtml(${length})`, () => '<p>' + 'x '.repeat(Math.ceil(length / 2)).slice(0, length) + '<div class="'),
    ),
    profile === 'unit' ? fc.oneof(deepHtmlArb, fc.string({ unit: 'binary', maxLength: 200 }), fc.anything()) : fc.constant('<p x="'),
  );

/** URLs refused without any network access (egress rules, schemes, syntax). */
const REFUSED_URLS = [
  'http://10.0.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::1]/',
  'http://0.0.0.0/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'ftp://127.0.0.1/',
  'not a url',
  '',
];
const urlArb = () => fc.oneof(fc.constantFrom<unknown>(...REFUSED_URLS), fc.constantFrom<unknown>(12, null, {}, ['http://10.0.0.1/']));

// ---------------------------------------------------------------------------------------------
// Bodies

type Entries = (readonly [string | Hostile, unknown])[];

/** Valid options: a few of them, each with a valid value. */
const validOptionsArb = (profile: Profile) =>
  fc.subarray(OPTION_NAMES.filter((name) => !NOT_IN_VALID_HTML_PDFS.includes(name)), { maxLength: 4 }).chain((names) =>
    fc.tuple(...names.map((name) => optionValueArb(name, profile, 'valid').map((value) => [name, value] as const))),
  ) as fc.Arbitrary<Entries>;

/** Options where each given one may be valid, invalid, hostile or noise. */
const anyOptionsArb = (profile: Profile) =>
  fc.subarray([...OPTION_NAMES], { minLength: 1, maxLength: 4 }).chain((names) =>
    fc.tuple(...names.map((name) => optionValueArb(name, profile).map((value) => [name, value] as const))),
  ) as fc.Arbitrary<Entries>;

/** One or two fields the API does not know, with any value. */
export const unknownFieldsArb = (profile: Profile) =>
  fc.array(fc.tuple(unknownKeyArb(profile), fc.oneof(noiseArb(profile), hostileValueArb(profile))), { minLength: 1, maxLength: 2 });

/** Entries for a document's source: html (valid or not), url, both, or neither. */
const sourceArb = (profile: Profile, mix: 'valid' | 'any', allowUrl: boolean): fc.Arbitrary<Entries> => {
  const validHtml = validHtmlArb(profile).map((html): Entries => [['html', html]]);
  if (mix === 'valid') return validHtml;
  // Cross-shrinking lets a counterexample fall back to the valid source when the source is not the point.
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: validHtml, weight: 4 },
    { arbitrary: invalidHtmlArb(profile).map((html): Entries => [['html', html]]), weight: 3 },
    { arbitrary: fc.oneof(hostileValueArb(profile), noiseArb(profile)).map((html): Entries => [['html', html]]), weight: 1 },
    { arbitrary: fc.constant<Entries>([]), weight: 1 },
    ...(allowUrl
      ? [
          { arbitrary: urlArb().map((url): Entries => [['url', url]]), weight: 1 },
          { arbitrary: fc.tuple(validHtmlArb(profile), urlArb()).map(([html, url]): Entries => [['html', html], ['url', url]]), weight: 1 },
        ]
      : []),
  );
};

/**
 * A body of POST /v1/pdf/generate: valid (tiny html, valid options) about a third of the time,
 * otherwise with a bad source, bad options, unknown fields, or all of them.
 */
export function generateBodyArb(profile: Profile, { allowUrl = true }: { allowUrl?: boolean } = {}): fc.Arbitrary<Fields> {
  const valid = fc.tuple(sourceArb(profile, 'valid', false), validOptionsArb(profile)).map(([source, options]) => fields([...source, ...options]));
  const invalid = fc
    .tuple(sourceArb(profile, 'any', allowUrl), fc.oneof(validOptionsArb(profile), anyOptionsArb(profile)), fc.option(unknownFieldsArb(profile), { freq: 3 }))
    .map(([source, options, unknown]) => fields([...source, ...options, ...(unknown ?? [])]));
  return fc.oneof({ arbitrary: valid, weight: 1 }, { arbitrary: invalid, weight: 2 });
}

/** `options` of a batch item, as an object of valid options, mixed ones, or not an object at all. */
const itemOptionsArb = (profile: Profile, mix: 'valid' | 'any'): fc.Arbitrary<unknown> => {
  const valid = validOptionsArb(profile).map(fields);
  if (mix === 'valid') return valid;
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: valid, weight: 2 },
    { arbitrary: fc.tuple(anyOptionsArb(profile), fc.option(unknownFieldsArb(profile), { freq: 3 })).map(([o, u]) => fields([...o, ...(u ?? [])])), weight: 3 },
    { arbitrary: fc.oneof(hostileValueArb(profile), noiseArb(profile)), weight: 1 },
  );
};

/** `metadata` of a batch item: the customer's JSON, echoed back; any depth the body limit allows. */
export const metadataArb = (profile: Profile, mix: 'valid' | 'any'): fc.Arbitrary<unknown> => {
  const valid = fc.oneof(
    fc.record({ filename: fc.string({ maxLength: 20 }), reference_id: fc.string({ maxLength: 20 }) }, { requiredKeys: [] }),
    fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
  );
  if (mix === 'valid') return valid;
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: valid, weight: 3 },
    { arbitrary: fc.constantFrom<unknown>({ filename: 12 }, { reference_id: null }, 'meta', 12, [], null, true), weight: 2 },
    { arbitrary: fc.oneof(deepArrayArb, deepObjectArb).map((deep) => hostile(`{ deep: ${deep.description} }`, () => ({ deep: deep.build() }))), weight: 1 },
    { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS).map((key) => fields([[key, { filename: 'x' }]])), weight: 1 },
    { arbitrary: noiseArb(profile), weight: 1 },
  );
};

/** One item of `pdfs`: valid about half the time. */
export function batchItemArb(profile: Profile): fc.Arbitrary<unknown> {
  const item = (mix: 'valid' | 'any') =>
    fc
      .tuple(
        sourceArb(profile, mix, mix === 'any'),
        fc.option(itemOptionsArb(profile, mix), { freq: 2 }),
        fc.option(metadataArb(profile, mix), { freq: 2 }),
        mix === 'any' ? fc.option(unknownFieldsArb(profile), { freq: 4 }) : fc.constant(null),
      )
      .map(([source, options, metadata, unknown]) =>
        fields([...source, ...(options === null ? [] : [['options', options] as const]), ...(metadata === null ? [] : [['metadata', metadata] as const]), ...(unknown ?? [])]),
      );
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: item('valid'), weight: 3 },
    { arbitrary: item('any'), weight: 4 },
    { arbitrary: fc.oneof(hostileValueArb(profile), noiseArb(profile)), weight: 1 },
  );
}

/** A body of POST /v1/pdf/batch: mostly a small `pdfs` array, sometimes an empty, oversized or missing one. */
export function batchBodyArb(profile: Profile, { maxItems = 4 }: { maxItems?: number } = {}): fc.Arbitrary<unknown> {
  const pdfs = fc.array(batchItemArb(profile), { minLength: 1, maxLength: maxItems });
  return fc.oneof(
    { arbitrary: pdfs.map((items) => fields([['pdfs', items]])), weight: 8 },
    { arbitrary: fc.tuple(pdfs, unknownFieldsArb(profile)).map(([items, unknown]) => fields([['pdfs', items], ...unknown])), weight: 1 },
    {
      arbitrary: fc.oneof(
        fc.constantFrom<unknown>({}, { pdfs: [] }, { pdfs: {} }, { pdfs: null }, { pdfs: '[]' }, { pdf: [{ html: '<p>x</p>' }] }, [], null),
        // One more than the largest batch any tier may send: refused whole, before anything renders.
        fc.constant(hostile('{ pdfs: 101 × { html: "<p>x</p>" } }', () => ({ pdfs: Array.from({ length: 101 }, () => ({ html: '<p>x</p>' })) }))),
        fc.oneof(deepArrayArb, deepObjectArb).map((deep) => hostile(`{ pdfs: ${deep.description} }`, () => ({ pdfs: deep.build() }))),
        fc.oneof(hostileValueArb(profile), noiseArb(profile)).map((value) => ({ pdfs: value })),
      ),
      weight: 2,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Checks on what comes back

/** Every key and string value in `input` at least `minLength` long (iteratively: inputs may be 20,000 deep). */
export function callerStrings(input: unknown, minLength = 0): string[] {
  const found: string[] = [];
  const pending: unknown[] = [input];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (value.length >= minLength) found.push(value);
    } else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        if (key.length >= minLength) found.push(key);
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return found;
}

/**
 * About how big `input` is: characters of its keys and strings plus one per value. Time budgets
 * grow with it, so that only a blow-up (a quadratic algorithm, catastrophic backtracking, a hang)
 * runs out of one, never honest linear work on a megabyte.
 */
export function inputSize(input: unknown): number {
  let size = 0;
  const pending: unknown[] = [input];
  while (pending.length > 0) {
    const value = pending.pop();
    size += 1;
    if (typeof value === 'string') size += value.length;
    else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        size += key.length;
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return size;
}

/**
 * Why `message` quotes too much of `input`, or undefined when it does not: a run of more than
 * {@link MAX_QUOTED_CHARS} (+ {@link QUOTE_TOLERANCE_CHARS}) consecutive characters of one caller
 * string, or more than {@link MAX_MESSAGE_CHARS} characters in all. Characters are code points,
 * as a person counts them (an emoji is one).
 */
export function quotingProblem(message: string, input: unknown): string | undefined {
  const preview = (text: string) => {
    const characters = Array.from(text);
    return JSON.stringify(characters.length > 80 ? `${characters.slice(0, 60).join('')}…(${characters.length} characters)` : text);
  };
  const characters = Array.from(message);
  if (characters.length > MAX_MESSAGE_CHARS) return `message is ${characters.length} characters long: ${preview(message)}`;
  const run = MAX_QUOTED_CHARS + QUOTE_TOLERANCE_CHARS + 1;
  if (characters.length < run) return undefined;
  const long = callerStrings(input, run);
  for (let start = 0; start + run <= characters.length; start++) {
    const window = characters.slice(start, start + run).join('');
    if (long.some((text) => text.includes(window))) {
      return `message quotes more than ${MAX_QUOTED_CHARS + QUOTE_TOLERANCE_CHARS} consecutive characters of the input: ${preview(message)}`;
    }
  }
  return undefined;
}

/**
 * JSON text for `value` as JSON.stringify writes it, without recursion: the client side of a test
 * must be able to send a 20,000-level body (JSON.stringify overflows the stack on it).
 */
export function toJson(value: unknown): string {
  type Step = { readonly text: string } | { readonly value: unknown };
  const out: string[] = [];
  const steps: Step[] = [{ value }];
  while (steps.length > 0) {
    const step = steps.pop()!;
    if ('text' in step) {
      out.push(step.text);
      continue;
    }
    const current = step.value;
    const next: Step[] = [];
    if (Array.isArray(current)) {
      next.push({ text: '[' });
      current.forEach((item, index) => {
        if (index > 0) next.push({ text: ',' });
        next.push({ value: item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : item });
      });
      next.push({ text: ']' });
    } else if (current !== null && typeof current === 'object') {
      next.push({ text: '{' });
      const entries = Object.entries(current).filter(([, inner]) => inner !== undefined && typeof inner !== 'function' && typeof inner !== 'symbol');
      entries.forEach(([key, inner], index) => {
        next.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: inner });
      });
      next.push({ text: '}' });
    } else {
      out.push(JSON.stringify(current) ?? 'null');
      continue;
    }
    for (let index = next.length - 1; index >= 0; index--) steps.push(next[index]!);
  }
  return out.join('');
}
