/**
 * Margin boxes, the header and footer (lib/render/margin-boxes.ts): the API's {{variables}} become
 * what Chromium prints, the box is readable, and a header or footer gets room in the page margin.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_HEADER_FOOTER_MARGIN } from '#lib/render/options.ts';
import { buildMarginBox, formatMarginBoxDate, headerFooterOptions, substituteMarginBoxVariables } from '#lib/render/margin-boxes.ts';

const NOON = new Date('2026-11-21T12:00:00Z');

describe('substituteMarginBoxVariables', () => {
  it('turns {{pageNumber}} and {{totalPages}} into the spans Chromium fills in', () => {
    // Act
    const result = substituteMarginBoxVariables('Page {{pageNumber}} of {{totalPages}}', NOON);

    // Assess
    expect(result).toBe('Page <span class="pageNumber"></span> of <span class="totalPages"></span>');
  });

  it('accepts spaces inside the braces', () => {
    // Act
    const result = substituteMarginBoxVariables('{{ pageNumber }}/{{  totalPages\t}} on {{ date }}', NOON);

    // Assess
    expect(result).toBe('<span class="pageNumber"></span>/<span class="totalPages"></span> on 2026-11-21');
  });

  it('replaces every occurrence, not just the first', () => {
    // Act
    const result = substituteMarginBoxVariables('{{date}} {{date}} {{pageNumber}} {{pageNumber}}', NOON);

    // Assess
    expect(result).toBe('2026-11-21 2026-11-21 <span class="pageNumber"></span> <span class="pageNumber"></span>');
  });

  it('leaves unknown variables and near-misses exactly as written', () => {
    // Prepare
    const html = '{{foo}} {{title}} {{ url }} {{PageNumber}} {pageNumber} {{pageNumber}';

    // Act
    const result = substituteMarginBoxVariables(html, NOON);

    // Assess
    expect(result).toBe(html);
  });

  it('leaves a header without variables untouched', () => {
    // Prepare
    const html = '<div style="text-align:right">ACME Corp. — Confidential</div>';

    // Act
    const result = substituteMarginBoxVariables(html, NOON);

    // Assess
    expect(result).toBe(html);
  });
});

describe('{{date}}', () => {
  it.each([
    ['a minute before midnight UTC', '2026-03-31T23:59:00Z', '2026-03-31'],
    ['the last millisecond of the day', '2026-12-31T23:59:59.999Z', '2026-12-31'],
    ['midnight UTC exactly', '2027-01-01T00:00:00Z', '2027-01-01'],
    ['a time that is already the next day at UTC+2', '2026-04-01T01:30:00+02:00', '2026-03-31'],
    ['a time that is still the previous day at UTC-5', '2026-04-01T20:30:00-05:00', '2026-04-02'],
  ])('prints the UTC calendar date for %s', (_name, instant, expected) => {
    // Prepare
    const now = new Date(instant);

    // Act
    const printed = substituteMarginBoxVariables('{{date}}', now);

    // Assess
    expect(printed).toBe(expected);
    expect(formatMarginBoxDate(now)).toBe(expected);
  });
});

describe('{{date}} does not depend on the server\'s time zone', () => {
  const savedTz = process.env.TZ;
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it.each([
    ['UTC+14 (already tomorrow there)', 'Pacific/Kiritimati', '2026-03-31T23:30:00Z', '2026-03-31'],
    ['UTC-11 (still yesterday there)', 'Pacific/Pago_Pago', '2026-04-01T00:30:00Z', '2026-04-01'],
  ])('prints the UTC date on a server at %s', (_name, tz, instant, expected) => {
    // Prepare: Node re-reads TZ when it is assigned
    process.env.TZ = tz;
    const now = new Date(instant);

    // Act
    const printed = substituteMarginBoxVariables('{{date}}', now);

    // Assess: the local calendar date differs here, the printed one must not
    expect(now.getDate()).not.toBe(now.getUTCDate());
    expect(printed).toBe(expected);
  });
});

describe('buildMarginBox', () => {
  it('wraps the header in a box with an explicit, readable font size', () => {
    // Act
    const html = buildMarginBox('Page {{pageNumber}}', {}, NOON);

    // Assess: Chromium's default header and footer font is under 1pt, so a size must be set
    const fontSize = /font-size:\s*(\d+(?:\.\d+)?)(px|pt)/.exec(html);
    expect(fontSize).not.toBeNull();
    expect(Number(fontSize?.[1])).toBeGreaterThanOrEqual(8);
    expect(html).toContain('Page <span class="pageNumber"></span>');
  });

  it('insets the box by the page\'s side margins', () => {
    // Act
    const html = buildMarginBox('x', { left: '25mm', right: '15mm' }, NOON);

    // Assess: CSS padding order is top right bottom left
    expect(html).toContain('padding:0 15mm 0 25mm');
  });

  it('uses a default inset when no side margin is set', () => {
    // Act
    const html = buildMarginBox('x', {}, NOON);

    // Assess
    expect(html).toMatch(/padding:0 \S+ 0 \S+;/);
    expect(html).not.toContain('undefined');
  });

  it('keeps background colours of the margin box when printed', () => {
    // Act
    const html = buildMarginBox('<div style="background:#eee">x</div>', {}, NOON);

    // Assess
    expect(html).toContain('print-color-adjust:exact');
  });
});

describe('headerFooterOptions', () => {
  it('turns header and footer off when neither is given and keeps the margin as is', () => {
    // Prepare
    const margin = { top: '1cm' };

    // Act
    const result = headerFooterOptions({ margin }, NOON);

    // Assess
    expect(result).toEqual({ displayHeaderFooter: false, margin: { top: '1cm' } });
  });

  it('gives a header a default top margin and leaves the bottom alone', () => {
    // Act
    const result = headerFooterOptions({ headerHtml: 'Invoice', margin: {} }, NOON);

    // Assess
    expect(result.displayHeaderFooter).toBe(true);
    expect(result.margin).toEqual({ top: DEFAULT_HEADER_FOOTER_MARGIN });
    expect(result.headerTemplate).toContain('Invoice');
  });

  it('gives a footer a default bottom margin and leaves the top alone', () => {
    // Act
    const result = headerFooterOptions({ footerHtml: '{{pageNumber}}', margin: {} }, NOON);

    // Assess
    expect(result.displayHeaderFooter).toBe(true);
    expect(result.margin).toEqual({ bottom: DEFAULT_HEADER_FOOTER_MARGIN });
    expect(result.footerTemplate).toContain('<span class="pageNumber"></span>');
  });

  it('gives both sides a default margin when header and footer are given', () => {
    // Act
    const result = headerFooterOptions({ headerHtml: 'H', footerHtml: 'F', margin: { left: '5mm' } }, NOON);

    // Assess
    expect(result.margin).toEqual({ top: DEFAULT_HEADER_FOOTER_MARGIN, bottom: DEFAULT_HEADER_FOOTER_MARGIN, left: '5mm' });
  });

  it('keeps the caller\'s margins, even a zero one, over the defaults', () => {
    // Act
    const result = headerFooterOptions(
      { headerHtml: 'H', footerHtml: 'F', margin: { top: '0', bottom: '35mm', left: '1in', right: '1in' } },
      NOON,
    );

    // Assess
    expect(result.margin).toEqual({ top: '0', bottom: '35mm', left: '1in', right: '1in' });
  });

  it('does not change the caller\'s margin object', () => {
    // Prepare
    const margin = { left: '1cm' };

    // Act
    headerFooterOptions({ headerHtml: 'H', margin }, NOON);

    // Assess
    expect(margin).toEqual({ left: '1cm' });
  });

  it('gives an empty footerTemplate for the missing footer so Chromium prints no title or URL', () => {
    // Act
    const result = headerFooterOptions({ headerHtml: 'H', margin: {} }, NOON);

    // Assess
    expect(result.footerTemplate).toBe('<span></span>');
  });

  it('gives an empty headerTemplate for the missing header', () => {
    // Act
    const result = headerFooterOptions({ footerHtml: 'F', margin: {} }, NOON);

    // Assess
    expect(result.headerTemplate).toBe('<span></span>');
  });

  it('treats an empty header as given, so it still reserves the margin', () => {
    // Act
    const result = headerFooterOptions({ headerHtml: '', margin: {} }, NOON);

    // Assess
    expect(result.displayHeaderFooter).toBe(true);
    expect(result.margin.top).toBe(DEFAULT_HEADER_FOOTER_MARGIN);
  });

  it('substitutes the date into the header with the date it is given', () => {
    // Act
    const result = headerFooterOptions({ headerHtml: 'Printed {{date}}', margin: {} }, new Date('2026-02-28T23:59:59Z'));

    // Assess
    expect(result.headerTemplate).toContain('Printed 2026-02-28');
  });

  it('insets the margin boxes by the page\'s side margins', () => {
    // Act
    const result = headerFooterOptions({ footerHtml: 'F', margin: { left: '30mm', right: '12mm' } }, NOON);

    // Assess
    expect(result.footerTemplate).toContain('padding:0 12mm 0 30mm');
  });
});
