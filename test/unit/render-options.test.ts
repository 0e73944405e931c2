/**
 * Render options (lib/render/options.ts) as a caller meets them: through the single endpoint's body
 * schema and a batch item's options schema, then `resolveRenderOptions` for defaults and the
 * cross-field margin check.
 */
import { describe, expect, it } from 'vitest';
import { generateBodySchema, itemOptionsSchema } from '#lib/documents/document-options.ts';
import {
  describeIssue,
  lengthToPixels,
  MAX_MARGIN_BOX_CHARS,
  PAPER_FORMATS,
  resolveRenderOptions,
  type RenderOptions,
} from '#lib/render/options.ts';

/** The caller-facing outcome of a single-endpoint body: the parsed data, or the one-sentence message. */
function parseBody(body: unknown): { ok: true; data: Record<string, unknown> } | { ok: false; message: string } {
  const result = generateBodySchema.safeParse(body);
  return result.success ? { ok: true, data: result.data } : { ok: false, message: describeIssue(result.error) };
}

/** The same for a batch item's nested `options`. */
function parseItemOptions(options: unknown): { ok: true; data: Record<string, unknown> } | { ok: false; message: string } {
  const result = itemOptionsSchema.safeParse(options);
  return result.success ? { ok: true, data: result.data } : { ok: false, message: describeIssue(result.error) };
}

/** Parses and resolves like prepareDocument does, failing loudly when parsing fails. */
function resolve(options: Record<string, unknown>): RenderOptions | { error: string } {
  const parsed = itemOptionsSchema.parse(options);
  return resolveRenderOptions(parsed);
}

const FORMAT_LIST = 'A4, A3, A5, Letter, Legal, Tabloid';
const LENGTH_RULE = 'a non-negative length with a unit of px, pt, in, cm or mm';

describe('format', () => {
  it.each(['A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'])('accepts %s and keeps its spelling', (format) => {
    // Act
    const result = parseBody({ html: '<p>x</p>', format });

    // Assess
    expect(result).toEqual({ ok: true, data: { html: '<p>x</p>', format } });
  });

  it.each([
    ['letter', 'Letter'],
    ['LETTER', 'Letter'],
    [' letter ', 'Letter'],
    ['a4', 'A4'],
    ['tabloid', 'Tabloid'],
  ])('accepts %j case-insensitively and echoes the canonical name %s', (given, canonical) => {
    // Act
    const result = parseBody({ format: given });
    const resolved = resolve({ format: given });

    // Assess
    expect(result).toEqual({ ok: true, data: { format: canonical } });
    expect(resolved).toMatchObject({ format: canonical });
  });

  it.each(['A9', 'A6', 'B5', 'letterhead', '', 'A 4'])('rejects %j and lists the allowed formats', (format) => {
    // Act
    const result = parseBody({ format });

    // Assess
    expect(result).toEqual({ ok: false, message: `format must be one of ${FORMAT_LIST}` });
  });

  it.each([4, null, true, ['A4'], { name: 'A4' }])('rejects the non-string %j with the same message', (format) => {
    // Act
    const result = parseBody({ format });

    // Assess
    expect(result).toEqual({ ok: false, message: `format must be one of ${FORMAT_LIST}` });
  });
});

describe('scale', () => {
  it.each([0.1, 0.5, 1, 1.5, 2])('accepts %s (0.1 to 2 inclusive)', (scale) => {
    // Act
    const result = parseBody({ scale });

    // Assess
    expect(result).toEqual({ ok: true, data: { scale } });
  });

  it.each([0.09, 0, -1, 2.01, 3, 100])('rejects %s and states the allowed range', (scale) => {
    // Act
    const result = parseBody({ scale });

    // Assess
    expect(result).toEqual({ ok: false, message: 'scale must be a number from 0.1 to 2' });
  });

  it.each(['1', '0.5', null, true])('rejects the non-number %j instead of coercing it', (scale) => {
    // Act
    const result = parseBody({ scale });

    // Assess
    expect(result).toEqual({ ok: false, message: 'scale must be a number from 0.1 to 2' });
  });
});

describe('orientation', () => {
  it.each(['portrait', 'landscape'])('accepts %s', (orientation) => {
    // Act
    const result = parseBody({ orientation });

    // Assess
    expect(result).toEqual({ ok: true, data: { orientation } });
  });

  it.each(['sideways', 'Landscape', 'PORTRAIT', '', 1])('rejects %j and lists portrait, landscape', (orientation) => {
    // Act
    const result = parseBody({ orientation });

    // Assess
    expect(result).toEqual({ ok: false, message: 'orientation must be one of portrait, landscape' });
  });

  it('turns landscape into a landscape page', () => {
    // Act
    const landscape = resolve({ orientation: 'landscape' });
    const portrait = resolve({ orientation: 'portrait' });

    // Assess
    expect(landscape).toMatchObject({ landscape: true });
    expect(portrait).toMatchObject({ landscape: false });
  });
});

describe('print_background', () => {
  it.each([true, false])('accepts %s and carries it through', (value) => {
    // Act
    const resolved = resolve({ print_background: value });

    // Assess
    expect(resolved).toMatchObject({ printBackground: value });
  });

  it.each(['yes', 'true', 1, 0, null])('rejects %j: only JSON booleans', (value) => {
    // Act
    const result = parseBody({ print_background: value });

    // Assess
    expect(result).toEqual({ ok: false, message: 'print_background must be true or false' });
  });
});

describe('tagged', () => {
  it.each([true, false])('accepts %s and carries it through', (value) => {
    // Act
    const resolved = resolve({ tagged: value });

    // Assess
    expect(resolved).toMatchObject({ tagged: value });
  });

  it.each(['yes', 1, null])('rejects %j: only JSON booleans', (value) => {
    // Act
    const result = parseBody({ tagged: value });

    // Assess
    expect(result).toEqual({ ok: false, message: 'tagged must be true or false' });
  });
});

describe('wait_for', () => {
  it.each(['load', 'domcontentloaded', 'networkidle0', 'networkidle2'])('accepts %s', (waitFor) => {
    // Act
    const resolved = resolve({ wait_for: waitFor });

    // Assess
    expect(resolved).toMatchObject({ waitFor });
  });

  it.each(['later', 'networkidle', 'LOAD', ''])('rejects %j and lists the four conditions', (waitFor) => {
    // Act
    const result = parseBody({ wait_for: waitFor });

    // Assess
    expect(result).toEqual({
      ok: false,
      message: 'wait_for must be one of load, domcontentloaded, networkidle0, networkidle2',
    });
  });
});

describe('readiness: wait_for_selector, wait_for_expression, wait_delay_ms, emulate_media', () => {
  it('carries a selector and an expression through, trimmed', () => {
    // Act
    const resolved = resolve({ wait_for_selector: ' #chart canvas ', wait_for_expression: 'window.chartsReady === true' });

    // Assess
    expect(resolved).toMatchObject({ waitForSelector: '#chart canvas', waitForExpression: 'window.chartsReady === true' });
  });

  it.each([
    ['wait_for_selector', '', 'wait_for_selector must be a CSS selector, not empty'],
    ['wait_for_selector', '   ', 'wait_for_selector must be a CSS selector, not empty'],
    ['wait_for_selector', 42, 'wait_for_selector must be a CSS selector'],
    ['wait_for_selector', 'x'.repeat(10_001), 'wait_for_selector must be at most 10000 characters'],
    ['wait_for_expression', '', 'wait_for_expression must be a JavaScript expression, not empty'],
    ['wait_for_expression', true, 'wait_for_expression must be a JavaScript expression'],
  ])('rejects %s %j and says why', (field, value, message) => {
    // Act
    const result = parseBody({ [field]: value });

    // Assess
    expect(result).toEqual({ ok: false, message });
  });

  it.each([0, 1, 2500, 10_000])('accepts wait_delay_ms %s', (delay) => {
    // Act
    const resolved = resolve({ wait_delay_ms: delay });

    // Assess
    expect(resolved).toMatchObject({ waitDelayMs: delay });
  });

  it.each([-1, 10_001, 1.5, '100', null])('rejects wait_delay_ms %j and states the range', (delay) => {
    // Act
    const result = parseItemOptions({ wait_delay_ms: delay });

    // Assess
    expect(result).toEqual({ ok: false, message: 'wait_delay_ms must be a whole number of milliseconds from 0 to 10000' });
  });

  it.each(['print', 'screen'])('accepts emulate_media %s', (media) => {
    // Act
    const resolved = resolve({ emulate_media: media });

    // Assess
    expect(resolved).toMatchObject({ emulateMedia: media });
  });

  it.each(['Screen', 'all', '', 1])('rejects emulate_media %j and lists print, screen', (media) => {
    // Act
    const result = parseBody({ emulate_media: media });

    // Assess
    expect(result).toEqual({ ok: false, message: 'emulate_media must be one of print, screen' });
  });
});

describe('margin', () => {
  it.each([
    ['10mm', '37.795px'],
    ['1cm', '37.795px'],
    ['0.5in', '48px'],
    ['.5in', '48px'],
    ['20px', '20px'],
    ['12pt', '16px'],
    ['20', '20px'],
    ['0', '0px'],
    [' 12 MM ', '45.354px'],
  ])('accepts the length %j and hands it to Chromium as %s', (margin, pixels) => {
    // Act
    const resolved = resolve({ margin });

    // Assess: one string applies to all four sides, in the one unit spelling Chromium parses exactly
    expect(resolved).toMatchObject({ margin: { top: pixels, right: pixels, bottom: pixels, left: pixels } });
  });

  it.each(['banana', '-5mm', '10em', '10 em', '1e2px', 'mm', '', '10mm 5mm'])('rejects %j and says what a length is', (margin) => {
    // Act
    const result = parseBody({ margin });

    // Assess
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ message: expect.stringContaining(`margin must be ${LENGTH_RULE}`) });
  });

  it('rejects a number and explains both accepted shapes', () => {
    // Act
    const result = parseBody({ margin: 10 });

    // Assess
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/^margin must be .*or an object with any of the keys top, right, bottom, left$/) });
  });

  it('accepts an object with some sides and leaves the others unset', () => {
    // Act
    const resolved = resolve({ margin: { top: '1in', bottom: '2cm' } });

    // Assess
    expect(resolved).toMatchObject({ margin: { top: '96px', bottom: '75.591px' } });
    expect((resolved as RenderOptions).margin).not.toHaveProperty('left');
    expect((resolved as RenderOptions).margin).not.toHaveProperty('right');
  });

  it('rejects an object with an unknown key and names the key', () => {
    // Act
    const result = parseBody({ margin: { top: '1cm', middle: '1cm' } });

    // Assess
    expect(result).toEqual({ ok: false, message: 'Unknown field in margin: middle' });
  });

  it('rejects a bad side and names that side', () => {
    // Act
    const result = parseBody({ margin: { top: '1cm', left: '-2mm' } });

    // Assess
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining(`margin.left must be ${LENGTH_RULE}`) });
  });

  it('rejects margins that leave no room for content and names format and orientation', () => {
    // Act
    const portrait = resolve({ margin: '4in' });
    const landscape = resolve({ orientation: 'landscape', format: 'A5', margin: { top: '3in', bottom: '3in' } });

    // Assess
    expect(portrait).toEqual({ error: 'margin leaves no room for content on a A4 portrait page' });
    expect(landscape).toEqual({ error: 'margin leaves no room for content on a A5 landscape page' });
  });

  it('keeps at least half an inch of content: 4in on a Letter page (8.5in wide) is the limit', () => {
    // Act: 8.5in - 2 x 4in = 0.5in exactly; a hair more is too much
    const atLimit = resolve({ format: 'Letter', margin: { left: '4in', right: '4in' } });
    const overLimit = resolve({ format: 'Letter', margin: { left: '4in', right: '4.01in' } });

    // Assess
    expect(atLimit).not.toHaveProperty('error');
    expect(overLimit).toEqual({ error: 'margin leaves no room for content on a Letter portrait page' });
  });

  it('measures the room along the rotated page in landscape', () => {
    // Prepare: 5in top and bottom fits an A4 portrait page (11.7in tall) but not a landscape one (8.27in)
    const margin = { top: '5in', bottom: '5in' };

    // Act
    const portrait = resolve({ margin });
    const landscape = resolve({ margin, orientation: 'landscape' });

    // Assess
    expect(portrait).not.toHaveProperty('error');
    expect(landscape).toEqual({ error: 'margin leaves no room for content on a A4 landscape page' });
  });
});

describe('header_html and footer_html', () => {
  it('accepts templates up to the size limit and carries them through', () => {
    // Prepare
    const header = 'h'.repeat(MAX_MARGIN_BOX_CHARS);

    // Act
    const resolved = resolve({ header_html: header, footer_html: '<span>{{pageNumber}}</span>' });

    // Assess
    expect(resolved).toMatchObject({ headerHtml: header, footerHtml: '<span>{{pageNumber}}</span>' });
  });

  it.each(['header_html', 'footer_html'])('rejects a %s one character over the limit and states the limit', (field) => {
    // Act
    const result = parseBody({ [field]: 'x'.repeat(MAX_MARGIN_BOX_CHARS + 1) });

    // Assess
    expect(result).toEqual({ ok: false, message: `${field} must be at most ${MAX_MARGIN_BOX_CHARS} characters` });
  });

  it('rejects a template that is not a string', () => {
    // Act
    const result = parseBody({ header_html: { html: '<b>x</b>' } });

    // Assess
    expect(result).toEqual({ ok: false, message: 'header_html must be a string of HTML' });
  });
});

describe('unknown fields', () => {
  it('rejects an unknown top-level field of the single endpoint and names it', () => {
    // Act
    const result = parseBody({ html: '<p>x</p>', paper: 'A4' });

    // Assess
    expect(result).toEqual({ ok: false, message: 'Unknown field: paper' });
  });

  it('names every unknown field when there are several', () => {
    // Act
    const result = parseBody({ html: '<p>x</p>', paper: 'A4', landscape: true });

    // Assess
    expect(result).toEqual({ ok: false, message: 'Unknown fields: paper, landscape' });
  });

  it('rejects an unknown option in a batch item the same way', () => {
    // Act
    const result = parseItemOptions({ format: 'A4', colour: 'red' });

    // Assess
    expect(result).toEqual({ ok: false, message: 'Unknown field: colour' });
  });

  it.each([null, 'A4', [], 42])('rejects batch item options that are not an object (%j)', (options) => {
    // Act
    const result = parseItemOptions(options);

    // Assess
    expect(result).toEqual({ ok: false, message: 'options must be an object' });
  });

  it('gives batch items exactly the single endpoint\'s rules and messages', () => {
    // Prepare
    const bad = [{ format: 'A9' }, { scale: 3 }, { orientation: 'sideways' }, { margin: 'banana' }, { wait_for: 'later' }];

    // Act
    const single = bad.map((options) => parseBody(options));
    const item = bad.map((options) => parseItemOptions(options));

    // Assess
    expect(item).toEqual(single);
    expect(item.every((result) => !result.ok)).toBe(true);
  });
});

describe('defaults', () => {
  it('applies A4, portrait, backgrounds on, scale 1, wait for load, print media, no delay and tagging when nothing is given', () => {
    // Act
    const resolved = resolveRenderOptions(itemOptionsSchema.parse({}));

    // Assess
    expect(resolved).toEqual({
      format: 'A4',
      paper: { width: 8.27 * 96, height: 11.7 * 96 },
      landscape: false,
      margin: {},
      printBackground: true,
      scale: 1,
      waitFor: 'load',
      preferCssPageSize: true,
      outline: false,
      tagged: true,
      waitDelayMs: 0,
      emulateMedia: 'print',
      finishing: {},
      urlAccess: { headers: {}, cookies: [], failOnHttpStatus: true },
    });
  });

  it('keeps explicit values over the defaults', () => {
    // Act
    const resolved = resolve({
      format: 'Legal',
      orientation: 'landscape',
      print_background: false,
      scale: 0.5,
      wait_for: 'networkidle0',
    });

    // Assess
    expect(resolved).toMatchObject({
      format: 'Legal',
      landscape: true,
      printBackground: false,
      scale: 0.5,
      waitFor: 'networkidle0',
    });
  });
});

describe('lengthToPixels', () => {
  it.each([
    ['96px', 96],
    ['96', 96],
    ['1in', 96],
    ['2.54cm', 96],
    ['25.4mm', 96],
    ['0.5IN', 48],
    ['72pt', 96],
    ['.25in', 24],
    [' 10 px ', 10],
    ['0', 0],
  ])('converts %j to %s CSS pixels', (length, pixels) => {
    // Act
    const result = lengthToPixels(length);

    // Assess
    expect(result).toBeCloseTo(pixels, 9);
  });

  it.each(['-1px', '10em', '10%', 'abc', '', '1.2.3in', 'in'])('returns undefined for %j', (length) => {
    // Act
    const result = lengthToPixels(length);

    // Assess
    expect(result).toBeUndefined();
  });

  it('matches the paper table: an A4 page is 8.27in wide', () => {
    // Act
    const width = lengthToPixels(`${PAPER_FORMATS.A4.width}in`);

    // Assess
    expect(width).toBeCloseTo(793.92, 6);
  });
});

describe('describeIssue', () => {
  it('names the field for a wrong type nested in a valid body', () => {
    // Act
    const result = parseBody({ html: '<p>x</p>', url: 42 });

    // Assess
    expect(result).toEqual({ ok: false, message: 'url must be a string' });
  });
});
