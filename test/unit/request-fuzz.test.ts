/**
 * Property tests of the request validation code with random and hostile input (issue #16): the
 * single endpoint's body schema, a batch item's shape and options, the option defaults and margin
 * check, the HTML check and the header/footer (margin box) sanitizer.
 *
 * For every input, each of them
 * - answers with its documented outcome (a zod result, a DocumentError, a problem string) and
 *   never throws anything else: no RangeError for 20,000 levels of nesting, no TypeError for a
 *   `__proto__` key;
 * - answers within a time budget that grows linearly with the input (2 s plus 10 ms per KB), far
 *   above what honest work takes: only a blow-up or a hang runs out of it;
 * - quotes at most ~100 characters of the caller's input in an error message (quotingProblem in
 *   test/support/request-fuzz.ts: an unknown key of 1 MB is never echoed whole).
 *
 * Beyond those, the properties the issue's limits are for: accepted margins are finite and leave
 * room for content (also once a header or footer adds its default margin), an item checkItemShape
 * accepts can be serialized for the render function and its metadata echoed, and the sanitizer
 * reaches a fixed point.
 *
 * Inputs come from test/support/request-fuzz.ts: the documented option names with valid, invalid,
 * hostile (deep, long, huge-number, lone-surrogate, NUL, prototype-key) and noise values. The seed is
 * fixed (FUZZ_SEED overrides it) and fast-check prints it, the path and the shrunk counterexample
 * on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkItemShape, type BatchItemCode } from '#lib/documents/batch.ts';
import { documentOptionsShape, generateBodySchema, itemOptionsSchema } from '#lib/documents/document-options.ts';
import { prepareDocument } from '#lib/documents/produce-pdf.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { inspectHtml } from '#lib/render/html.ts';
import { describeIssue, lengthToPixels, MAX_MARGIN_BOX_CHARS, PAPER_FORMATS, renderOptionsShape, resolveRenderOptions } from '#lib/render/options.ts';
import { headerFooterOptions, sanitizeMarginBox } from '#lib/render/margin-boxes.ts';
import {
  batchItemArb,
  DEEP,
  deepArray,
  deepHtml,
  deepHtmlArb,
  deepObject,
  deepMarginBoxArb,
  Fields,
  fields,
  generateBodyArb,
  Hostile,
  hostileValueArb,
  HTML_TAGS,
  inputSize,
  LONG,
  longStringArb,
  materialize,
  metadataArb,
  OPTION_NAMES,
  optionValueArb,
  unknownFieldsArb,
  ownObject,
  quotingProblem,
} from '../support/request-fuzz.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 160_003);
/**
 * Time allowed for one call: 2 s, plus 10 ms per KB of input (about 12 s for 1 MB). Parsing a
 * megabyte of nested tags honestly takes 1 to 3 s here; a quadratic step or a hang takes minutes.
 */
const CALL_BUDGET_MS = 2_000;
const BUDGET_MS_PER_KB = 10;
const budgetFor = (input: unknown) => CALL_BUDGET_MS + (BUDGET_MS_PER_KB * inputSize(input)) / 1024;
/** Each property runs many inputs, some of them megabytes; vitest's default 5 s is for single cases. */
const PROPERTY_TIMEOUT_MS = 120_000;
const BATCH_ITEM_CODES: readonly BatchItemCode[] = ['INVALID_HTML', 'INVALID_OPTIONS', 'URL_NOT_ALLOWED', 'RENDER_TIMEOUT', 'RENDER_FAILED'];
const runs = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns });

// ---------------------------------------------------------------------------------------------
// Calling the code under test

/** Runs `call` on `input`, turning anything it throws into a failure that names the error, and checks its time. */
function within<T>(what: string, input: unknown, call: () => T): T {
  const started = performance.now();
  let result: T;
  try {
    result = call();
  } catch (error) {
    throw new Error(`${what} threw ${describeThrown(error)}`);
  }
  checkTime(what, input, performance.now() - started);
  return result;
}

async function withinAsync<T>(what: string, input: unknown, call: () => Promise<T>): Promise<{ value: T } | { error: unknown }> {
  const started = performance.now();
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  checkTime(what, input, performance.now() - started);
  return outcome;
}

function checkTime(what: string, input: unknown, elapsed: number): void {
  const budget = budgetFor(input);
  if (elapsed > budget) throw new Error(`${what} took ${Math.round(elapsed)} ms (budget ${Math.round(budget)} ms for this input)`);
}

function describeThrown(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.slice(0, 200)}`;
  return String(error).slice(0, 200);
}

/** A refusal's message: a non-empty sentence. */
function expectMessage(what: string, message: unknown): string {
  if (typeof message !== 'string' || message.trim().length === 0) throw new Error(`${what} gave ${JSON.stringify(message)} as its message, not a sentence`);
  return message;
}

/** A caller-facing message produced for `input`, for the quoting checks. */
interface Said {
  readonly what: string;
  readonly message: string;
  readonly input: unknown;
}

function expectQuotesLittle(said: readonly Said[]): void {
  for (const { what, message, input } of said) {
    const problem = quotingProblem(message, input);
    if (problem) throw new Error(`${what}: ${problem}`);
  }
}

// ---------------------------------------------------------------------------------------------
// What each entry point must do with one input (shared by the properties and the named cases).
// Each check fails on an outcome that is not documented (an exception, a wrong type, too slow)
// and returns the messages the input got, which the quoting properties look at.

/** The single endpoint's body schema: a zod result; a refusal is described in one sentence. */
function checkGenerateBody(body: unknown): Said[] {
  const parsed = within('generateBodySchema.safeParse', body, () => generateBodySchema.safeParse(body));
  if (parsed.success) return [];
  const message = expectMessage('describeIssue', within('describeIssue', body, () => describeIssue(parsed.error)));
  return [{ what: 'generateBodySchema refusal', message, input: body }];
}

/** A batch item's options: schema, then defaults and the margin check. */
function checkItemOptions(options: unknown): Said[] {
  const parsed = within('itemOptionsSchema.safeParse', options, () => itemOptionsSchema.safeParse(options));
  if (!parsed.success) {
    const message = expectMessage('describeIssue', within('describeIssue', options, () => describeIssue(parsed.error)));
    return [{ what: 'itemOptionsSchema refusal', message, input: options }];
  }
  const resolved = within('resolveRenderOptions', options, () => resolveRenderOptions(parsed.data));
  if (!('error' in resolved)) return [];
  return [{ what: 'resolveRenderOptions refusal', message: expectMessage('resolveRenderOptions', resolved.error), input: options }];
}

/** What prepareDocument does with a source that needs no network: a DocumentRequest or a DocumentError. */
async function checkPrepareDocument(input: { html?: unknown; options: unknown }): Promise<Said[]> {
  const outcome = await withinAsync('prepareDocument', input, () => prepareDocument({ ...input, keyId: 'key_fuzz' }));
  if ('value' in outcome) return [];
  const { error } = outcome;
  if (!(error instanceof DocumentError)) throw new Error(`prepareDocument rejected with ${describeThrown(error)}, not a DocumentError`);
  expect(['INVALID_HTML', 'INVALID_OPTIONS']).toContain(error.code);
  return [{ what: `prepareDocument ${error.code}`, message: expectMessage('prepareDocument', error.message), input }];
}

/** checkItemShape: nothing, or an item code with a message. */
function checkBatchItem(item: unknown): { problem: ReturnType<typeof checkItemShape>; said: Said[] } {
  const problem = within('checkItemShape', item, () => checkItemShape(item));
  if (problem === undefined) return { problem, said: [] };
  expect(BATCH_ITEM_CODES).toContain(problem.code);
  return { problem, said: [{ what: `checkItemShape ${problem.code}`, message: expectMessage('checkItemShape', problem.message), input: item }] };
}

/** inspectHtml: a problem sentence or the document's traits. */
function checkHtml(html: unknown): Said[] {
  const inspection = within('inspectHtml', html, () => inspectHtml(html));
  if (inspection.problem !== undefined) return [{ what: 'inspectHtml problem', message: expectMessage('inspectHtml', inspection.problem), input: html }];
  expect(inspection).toEqual({ scripted: expect.any(Boolean), webFonts: expect.any(Boolean), animated: expect.any(Boolean) });
  return [];
}

/**
 * The quoting half of a property: the same inputs (same arbitrary, same seed) as its outcome half,
 * whose failures it leaves to that half.
 */
async function messagesOf(check: () => Said[] | Promise<Said[]>): Promise<Said[]> {
  try {
    return await check();
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Properties

/** Single endpoint bodies: mostly built from the options, some hostile values and plain noise. */
const generateBodies = fc.oneof(
  { arbitrary: generateBodyArb('unit'), weight: 6 },
  { arbitrary: hostileValueArb('unit'), weight: 1 },
  { arbitrary: fc.anything(), weight: 1 },
);

/** Batch item options: a few named options with any values, hostile values, noise. */
const itemOptions = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc
          .subarray([...OPTION_NAMES], { minLength: 1, maxLength: 5 })
          .chain((names) => fc.tuple(...names.map((name) => optionValueArb(name, 'unit').map((value) => [name, value] as const)))),
        fc.option(unknownFieldsArb('unit'), { freq: 3 }),
      )
      .map(([options, unknown]) => fields([...options, ...(unknown ?? [])])),
    weight: 6,
  },
  { arbitrary: hostileValueArb('unit'), weight: 1 },
  { arbitrary: fc.anything(), weight: 1 },
);

/** prepareDocument's input without a url: a generate body's source and options, or a batch item. */
const documentInputs = fc.oneof(
  generateBodyArb('unit', { allowUrl: false }).map((body) =>
    fields([...(body.has('html') ? [['html', body.get('html')] as const] : []), ['options', body.without('html')]]),
  ),
  batchItemArb('unit').filter((item) => !(item instanceof Fields && item.has('url'))),
);
const asDocumentInput = (generated: unknown) => {
  const built = materialize(generated);
  const item: Record<string, unknown> = built !== null && typeof built === 'object' && !Array.isArray(built) ? built : { html: built };
  return { html: item.html, options: item.options };
};

const batchItems = fc.oneof({ arbitrary: batchItemArb('unit'), weight: 6 }, { arbitrary: fc.anything(), weight: 1 });

describe(`request validation under random and hostile input (fast-check seed ${SEED})`, () => {
  it('the fuzz knows every option the schemas accept, and nothing else', () => {
    // Assess: a new option gets generators in test/support/request-fuzz.ts before it goes unfuzzed.
    expect([...OPTION_NAMES].sort()).toEqual(Object.keys(documentOptionsShape).sort());
  });

  it(
    'generateBodySchema: any body gets a zod result and a refusal a sentence, never an exception, in time',
    () => {
      fc.assert(
        fc.property(generateBodies, (generated) => {
          checkGenerateBody(materialize(generated));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'generateBodySchema: a refusal quotes at most 100 characters of the body',
    async () => {
      await fc.assert(
        fc.asyncProperty(generateBodies, async (generated) => {
          const body = materialize(generated);
          expectQuotesLittle(await messagesOf(() => checkGenerateBody(body)));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'itemOptionsSchema and resolveRenderOptions: any options get a result or a refusal sentence, never an exception, in time',
    () => {
      fc.assert(
        fc.property(itemOptions, (generated) => {
          checkItemOptions(materialize(generated));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'itemOptionsSchema and resolveRenderOptions: a refusal quotes at most 100 characters of the options',
    async () => {
      await fc.assert(
        fc.asyncProperty(itemOptions, async (generated) => {
          const options = materialize(generated);
          expectQuotesLittle(await messagesOf(() => checkItemOptions(options)));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'resolveRenderOptions: accepted margins are finite lengths Chromium reads, and leave half an inch for content',
    () => {
      // Lengths of 1 to 400 digits, as the rule's edge is in how big a number a length may be.
      const digits = fc
        .tuple(fc.integer({ min: 1, max: 400 }), fc.constantFrom('', 'px', 'pt', 'in', 'cm', 'mm'))
        .map(([count, unit]) => '9'.repeat(count) + unit);
      const margin = fc.oneof(optionValueArb('margin', 'unit'), digits, fc.record({ top: digits, left: digits }, { requiredKeys: ['top'] }));
      const page = fc.record({ format: fc.constantFrom('A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'), orientation: fc.constantFrom('portrait', 'landscape') });
      fc.assert(
        fc.property(margin, page, (generated, { format, orientation }) => {
          const options = { format, orientation, margin: materialize(generated) };
          const parsed = itemOptionsSchema.safeParse(options);
          if (!parsed.success) return;
          const resolved = within('resolveRenderOptions', options, () => resolveRenderOptions(parsed.data));
          if ('error' in resolved) return;
          const px: Record<string, number> = {};
          for (const side of ['top', 'right', 'bottom', 'left'] as const) {
            const value = resolved.margin[side] ?? '0px';
            const pixels = lengthToPixels(value);
            if (!/^\d+(\.\d+)?px$/.test(value) || pixels === undefined || !Number.isFinite(pixels)) {
              throw new Error(`margin.${side} resolved to ${JSON.stringify(value)}, which is not a finite px length`);
            }
            px[side] = pixels;
          }
          const paper = PAPER_FORMATS[format];
          const width = (resolved.landscape ? paper.height : paper.width) * 96;
          const height = (resolved.landscape ? paper.width : paper.height) * 96;
          expect(width - px.left! - px.right!, 'content width in px').toBeGreaterThanOrEqual(48);
          expect(height - px.top! - px.bottom!, 'content height in px').toBeGreaterThanOrEqual(48);
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'resolveRenderOptions then headerFooterOptions: the page Chromium is asked to print keeps half an inch for content',
    () => {
      // Margins from nothing to a whole page, on every page, with and without a header or footer
      // (which take a default margin of their own when none is given for their side).
      const side = fc.option(fc.integer({ min: 0, max: 1_200 }).map((px) => `${px}px`), { freq: 3 });
      const options = fc.record({
        format: fc.constantFrom('A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'),
        orientation: fc.constantFrom('portrait', 'landscape'),
        margin: fc.record({ top: side, right: side, bottom: side, left: side }),
        header_html: fc.option(fc.constant('x')),
        footer_html: fc.option(fc.constant('y')),
      });
      fc.assert(
        fc.property(options, (generated) => {
          const given: Record<string, unknown> = Object.fromEntries(Object.entries(generated).filter(([, value]) => value !== null));
          given.margin = Object.fromEntries(Object.entries(generated.margin).filter(([, value]) => value !== null));
          const parsed = itemOptionsSchema.safeParse(given);
          if (!parsed.success) return;
          const resolved = resolveRenderOptions(parsed.data);
          if ('error' in resolved) return;
          const { margin } = within('headerFooterOptions', given, () => headerFooterOptions(resolved, NEW_YEAR));
          const px = (name: 'top' | 'right' | 'bottom' | 'left') => lengthToPixels(margin[name] ?? '0px') ?? NaN;
          const paper = PAPER_FORMATS[generated.format];
          const width = (resolved.landscape ? paper.height : paper.width) * 96;
          const height = (resolved.landscape ? paper.width : paper.height) * 96;
          expect(width - px('left') - px('right'), `content width in px, margins ${JSON.stringify(margin)}`).toBeGreaterThanOrEqual(48);
          expect(height - px('top') - px('bottom'), `content height in px, margins ${JSON.stringify(margin)}`).toBeGreaterThanOrEqual(48);
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'prepareDocument (html, no url): resolves, or rejects with an INVALID_HTML or INVALID_OPTIONS DocumentError, in time',
    async () => {
      await fc.assert(
        fc.asyncProperty(documentInputs, async (generated) => {
          await checkPrepareDocument(asDocumentInput(generated));
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'prepareDocument (html, no url): a DocumentError quotes at most 100 characters of the input',
    async () => {
      await fc.assert(
        fc.asyncProperty(documentInputs, async (generated) => {
          const input = asDocumentInput(generated);
          expectQuotesLittle(await messagesOf(() => checkPrepareDocument(input)));
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'checkItemShape: any item gets nothing or a documented item code with a sentence, never an exception, in time',
    () => {
      fc.assert(
        fc.property(batchItems, (generated) => {
          checkBatchItem(materialize(generated));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'checkItemShape: a refusal quotes at most 100 characters of the item',
    async () => {
      await fc.assert(
        fc.asyncProperty(batchItems, async (generated) => {
          const item = materialize(generated);
          expectQuotesLittle(await messagesOf(() => checkBatchItem(item).said));
        }),
        runs(400),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'checkItemShape: an item it lets through can be sent to the render function and its metadata echoed in the response',
    () => {
      const item = fc
        .tuple(fc.constantFrom('<p>x</p>', '<h1>x</h1>'), fc.option(metadataArb('unit', 'any'), { freq: 4 }), fc.option(hostileValueArb('unit'), { freq: 3 }))
        .map(([html, metadata, options]) =>
          fields([['html', html], ...(metadata === null ? [] : [['metadata', metadata] as const]), ...(options === null ? [] : [['options', options] as const])]),
        );
      fc.assert(
        fc.property(fc.oneof(item, batchItemArb('unit')), (generated) => {
          const built = materialize(generated);
          if (checkBatchItem(built).problem !== undefined) return;
          expectPassedOn(built);
        }),
        runs(300),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'inspectHtml: any html gets a problem sentence (quoting at most 100 characters) or its traits, in time',
    () => {
      const html = fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        htmlSoupArb,
        deepHtmlArb,
        longStringArb(LONG),
        fc.anything(),
      );
      fc.assert(
        fc.property(html, (generated) => {
          const input = materialize(generated);
          expectQuotesLittle(checkHtml(input));
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'sanitizeMarginBox: a header the options schema accepts is sanitized without an exception, in time, to a fixed point',
    () => {
      fc.assert(
        fc.property(marginBoxArb, (generated) => {
          const header = materialize(generated) as string;
          // The sanitizer only ever sees what validation let through (a refusal is the schema properties' business).
          if (!acceptedAsHeader(header)) return;
          const once = within('sanitizeMarginBox', header, () => sanitizeMarginBox(header));
          const twice = within('sanitizeMarginBox of its own output', once, () => sanitizeMarginBox(once));
          expect(twice).toBe(once);
        }),
        runs(200),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'headerFooterOptions: header, footer and margins the options accept become Chromium header and footer HTML without an exception, in time',
    () => {
      const options = fc.record(
        { header_html: marginBoxArb, footer_html: marginBoxArb, margin: optionValueArb('margin', 'unit', 'valid') },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(options, (generated) => {
          const built = materialize(generated);
          const parsed = within('itemOptionsSchema.safeParse', built, () => itemOptionsSchema.safeParse(built));
          if (!parsed.success) return;
          const resolved = within('resolveRenderOptions', built, () => resolveRenderOptions(parsed.data));
          if ('error' in resolved) return;
          // As lib/render/render.ts calls it for every document with a header or footer.
          within('headerFooterOptions', built, () => headerFooterOptions(resolved, NEW_YEAR));
        }),
        runs(150),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

const NEW_YEAR = new Date('2026-01-01T00:00:00Z');

/** Whether the options schema accepts `html` as a header (and so as a footer). */
function acceptedAsHeader(html: string): boolean {
  return within('itemOptionsSchema.safeParse', html, () => itemOptionsSchema.safeParse({ header_html: html })).success;
}

/** What the batch function does with an item it accepted: sends it to the render function, then echoes its metadata. */
function expectPassedOn(item: unknown): void {
  const { html, url, options, metadata } = item as Record<string, unknown>;
  // As lib/aws/render-invoker.ts sends it and functions/batch.ts answers it.
  within('JSON.stringify of the render invocation', item, () => JSON.stringify({ item: { html, url, options } }));
  within('JSON.stringify of the echoed metadata', item, () => JSON.stringify({ results: [{ success: true, metadata: metadata ?? {} }] }));
}

/** Markup made of real tags, attributes, comments and odd characters, in any order. */
const htmlSoupArb = fc
  .array(
    fc.oneof(
      fc
        .tuple(fc.constantFrom(...HTML_TAGS, 'script', 'style', 'title', 'textarea', 'iframe', 'img', 'g', 'foreignObject'), fc.array(fc.constantFrom(' style="color:red"', ' onclick="x()"', ' href="javascript:1"', ' src="data:image/png,A"', ' class=a', ' loading=lazy', ' x="'), { maxLength: 2 }))
        .map(([tag, attributes]) => `<${tag}${attributes.join('')}>`),
      fc.constantFrom(...HTML_TAGS).map((tag) => `</${tag}>`),
      fc.constantFrom('text', '{{pageNumber}}', '{{date}}', '<!--c-->', '<!--', '<![CDATA[x]]>', '&lt;', '&#0;', '\u0000', '\ud800', '<', '>', '"', '@font-face{src:url(data:x)}', '<!doctype html>'),
    ),
    { maxLength: 40 },
  )
  .map((tokens) => tokens.join(''));

/** Strings within the header and footer length limit: soup, deep nesting, long text. */
const marginBoxArb: fc.Arbitrary<string | Hostile> = fc.oneof<fc.Arbitrary<string | Hostile>[]>(
  htmlSoupArb,
  fc.string({ unit: 'binary', maxLength: 200 }),
  deepMarginBoxArb,
  longStringArb(MAX_MARGIN_BOX_CHARS),
);

// ---------------------------------------------------------------------------------------------
// The shapes the issue names, each tried on every entry point it can reach

describe('request validation: the named hostile shapes', () => {
  const MB_KEY = 'k'.repeat(LONG);
  const HTML = '<p>x</p>';
  const bodies: [string, () => unknown][] = [
    ['a 20,000-level array as margin', () => ({ html: HTML, margin: deepArray(DEEP) })],
    ['a 20,000-level object as margin', () => ({ html: HTML, margin: deepObject(DEEP, 'top') })],
    ['a 20,000-level array as html', () => ({ html: deepArray(DEEP) })],
    ['a 20,000-level object under an unknown key', () => ({ html: HTML, extra: deepObject(DEEP) })],
    ['a 20,000-level object under __proto__', () => ownObject([['html', HTML], ['__proto__', deepObject(DEEP, '__proto__')]])],
    ['an unknown key of 1 MB', () => ({ html: HTML, [MB_KEY]: 1 })],
    ['an unknown key of 1 MB inside margin', () => ({ html: HTML, margin: { [MB_KEY]: '1mm' } })],
    ['a format of 1 MB', () => ({ html: HTML, format: MB_KEY })],
    ['a margin of 1 MB of digits', () => ({ html: HTML, margin: '9'.repeat(LONG) + 'mm' })],
    ['a margin of 400 digits (1e400 mm)', () => ({ html: HTML, margin: '9'.repeat(400) + 'mm' })],
    ['scale "1e400"', () => ({ html: HTML, scale: '1e400' })],
    ['wait_delay_ms "1e400"', () => ({ html: HTML, wait_delay_ms: '1e400' })],
    ['a lone surrogate as format', () => ({ html: HTML, format: '\ud800' })],
    ['a NUL in format', () => ({ html: HTML, format: 'A4\u0000' })],
    ['constructor.prototype', () => ({ html: HTML, constructor: { prototype: { format: 'A9' } } })],
    ['html of 1 MB cut off in a tag', () => ({ html: '<p>' + 'x'.repeat(LONG) + '<div class="' })],
    ['html nested 20,000 deep', () => ({ html: deepHtml('div', DEEP) })],
    ['header_html nested 20,000 deep', () => ({ html: HTML, header_html: deepHtml('b', DEEP) })],
    ['wait_for_expression of 4,000 nested parentheses', () => ({ html: HTML, wait_for_expression: '('.repeat(4_000) + '1' + ')'.repeat(4_000) })],
  ];

  it.each(bodies)('generate body with %s: a zod result, and a refusal quoting at most 100 characters', (_name, body) => {
    const built = body();
    expectQuotesLittle(checkGenerateBody(built));
  });

  it.each(bodies)('batch item options with %s: a result, or a refusal quoting at most 100 characters', (_name, body) => {
    const { html: _html, ...options } = body() as Record<string, unknown>;
    expectQuotesLittle(checkItemOptions(options));
  });

  it.each(bodies)('prepareDocument with %s: a DocumentRequest, or a DocumentError quoting at most 100 characters', async (_name, body) => {
    const { html, ...options } = body() as Record<string, unknown>;
    expectQuotesLittle(await checkPrepareDocument({ html, options }));
  });

  it.each<[string, () => unknown]>([
    ['metadata nested 20,000 deep', () => ({ html: HTML, metadata: { deep: deepObject(DEEP) } })],
    ['metadata of 20,000-level arrays', () => ({ html: HTML, metadata: { deep: deepArray(DEEP) } })],
    ['metadata with a 1 MB key', () => ({ html: HTML, metadata: { [MB_KEY]: 1 } })],
    ['an unknown item field of 1 MB', () => ({ html: HTML, [MB_KEY]: 1 })],
    ['html as a 20,000-level array', () => ({ html: deepArray(DEEP) })],
    ['options as a 20,000-level object', () => ({ html: HTML, options: deepObject(DEEP) })],
    ['a __proto__ item field', () => ownObject([['html', HTML], ['__proto__', { url: 'http://10.0.0.1/' }]])],
    ['__proto__ in metadata', () => ({ html: HTML, metadata: ownObject([['__proto__', { filename: 12 }]]) })],
  ])('batch item with %s: refused quoting at most 100 characters, or accepted and passed on', (_name, item) => {
    const built = item();
    const { problem, said } = checkBatchItem(built);
    expectQuotesLittle(said);
    if (problem === undefined) expectPassedOn(built);
  });

  it.each<[string, () => unknown]>([
    ['20,000 nested <div>', () => deepHtml('div', DEEP)],
    ['20,000 nested <b><i><u><s>', () => '<b><i><u><s>'.repeat(DEEP / 4)],
    ['20,000 nested <table>', () => deepHtml('table', DEEP)],
    ['1 MB of text', () => 'x '.repeat(LONG / 2)],
    ['a NUL character', () => '<p>\u0000</p>'],
    ['a lone surrogate', () => '<p>\ud800</p>'],
  ])('inspectHtml with %s: a problem or traits', (_name, html) => {
    const built = html();
    expectQuotesLittle(checkHtml(built));
  });

  it.each<[string, () => string]>([
    ['20,000 nested <b>', () => deepHtml('b', DEEP)],
    ['20,000 nested <p>', () => deepHtml('p', DEEP)],
    ['20,000 nested <td>', () => deepHtml('td', DEEP)],
    ['16,666 nested <div> (the longest the limit allows)', () => deepHtml('div', Math.floor((MAX_MARGIN_BOX_CHARS - 1) / 5))],
    ['20,000 nested unknown elements', () => deepHtml('x', DEEP)],
    ['an <svg> with 16,000 nested <g>', () => '<svg>' + deepHtml('g', 16_000)],
  ])('header_html with %s: refused by the options schema, or sanitized and built without an exception', (_name, header) => {
    const built = header();
    expect(built.length).toBeLessThanOrEqual(MAX_MARGIN_BOX_CHARS);
    if (!acceptedAsHeader(built)) return;
    within('sanitizeMarginBox', built, () => sanitizeMarginBox(built));
    within('headerFooterOptions', built, () => headerFooterOptions({ headerHtml: built, margin: {} }, NEW_YEAR));
  });
});
