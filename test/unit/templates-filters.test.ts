/**
 * The document filters (lib/templates/filters.ts, codes.ts): what a customer's template prints for
 * numbers, money, percentages and dates in en-US and de-DE, the QR codes, barcodes and payment
 * codes it draws, and the image data URLs it takes, and the TemplateError naming the filter when
 * the data will not do.
 */
import { describe, expect, it } from 'vitest';
import { BARCODE_TYPES, epcPayload } from '../../lib/templates/codes.ts';
import { renderTemplate, TemplateError } from '../../lib/templates/engine.ts';

const NBSP = '\u00a0';

async function render(html: string, data: unknown = {}, locale?: string): Promise<string> {
  return (await renderTemplate({ html }, data, locale === undefined ? {} : { locale })).html;
}

async function failure(html: string, data: unknown = {}): Promise<string> {
  try {
    await render(html, data);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return (error as TemplateError).detail;
  }
  throw new Error('the template rendered');
}

describe('number, currency, percent', () => {
  const data = { total: 1234.56, rate: 0.19, share: '0.125', big: '1234567890123456.785', neg: -5 };

  it('prints en-US and de-DE', async () => {
    const html = '{{ total | currency: "EUR" }}|{{ total | number }}|{{ total | number: 1 }}|{{ rate | percent }}|{{ share | percent: 1 }}|{{ neg | currency: "USD" }}';
    expect(await render(html, data, 'en-US')).toBe('€1,234.56|1,234.56|1,234.6|19%|12.5%|-$5.00');
    expect(await render(html, data, 'de-DE')).toBe(`1.234,56${NBSP}€|1.234,56|1.234,6|19${NBSP}%|12,5${NBSP}%|-5,00${NBSP}$`);
  });

  it('takes a locale per filter, by position or name', async () => {
    expect(await render('{{ total | currency: "EUR", "de-DE" }}|{{ total | number: 2, locale: "de-DE" }}|{{ rate | percent: 0, "fr-FR" }}', data)).toBe(
      `1.234,56${NBSP}€|1.234,56|19${NBSP}%`,
    );
    expect(await render('{{ total | currency: "EUR", locale: "en-US" }}', data, 'de-DE')).toBe('€1,234.56');
  });

  it('rounds to the currency’s decimals, or the ones asked for', async () => {
    expect(await render('{{ 1234.5 | currency: "JPY" }}|{{ 2.345 | currency: "EUR" }}|{{ 2.5 | currency: "EUR", decimals: 0 }}', {})).toBe('¥1,235|€2.35|€3');
  });

  it('formats decimal strings exactly', async () => {
    expect(await render('{{ big | number: 2 }}|{{ "0.1" | currency: "EUR" }}|{{ " 12.50 " | number: 2 }}', data)).toBe('1,234,567,890,123,456.79|€0.10|12.50');
  });

  it('prints nothing for a missing value', async () => {
    expect(await render('[{{ missing | currency: "EUR" }}{{ nil | number }}{{ "" | percent }}]', {})).toBe('[]');
  });

  it('never prints a negative zero: what rounds to zero prints as zero', async () => {
    const html = '{{ v | currency: "EUR" }}|{{ v | number: 2 }}|{{ v | percent }}|{{ "-0.004" | currency: "EUR" }}|{{ -0 | number }}';
    expect(await render(html, { v: -0.004 })).toBe('€0.00|0.00|0%|€0.00|0');
    expect(await render(html, { v: -0.004 }, 'de-DE')).toBe(`0,00${NBSP}€|0,00|0${NBSP}%|0,00${NBSP}€|0`);
    // What does not round to zero keeps its sign.
    expect(await render('{{ -0.005 | currency: "EUR" }}|{{ -0.4 | number: 0 }}|{{ -0.6 | number: 0 }}', {})).toBe('-€0.01|0|-1');
  });

  it.each([
    ['{{ "12,50" | number }}', 'number: expects a number, got "12,50"'],
    ['{{ customer | currency: "EUR" }}', 'currency: expects a number, got an object'],
    ['{{ 1 | currency }}', 'currency: the first argument is the currency, a three-letter ISO 4217 code like "EUR" or "USD"'],
    ['{{ 1 | currency: "EURO" }}', 'currency: the first argument is the currency, a three-letter ISO 4217 code like "EUR" or "USD"'],
    ['{{ 1 | currency: "XYZ" }}', 'currency: "XYZ" is not an ISO 4217 currency code (like "EUR" or "USD")'],
    ['{{ 1 | currency: "eux" }}', 'currency: "EUX" is not an ISO 4217 currency code (like "EUR" or "USD")'],
    ['{{ 1 | number: 11 }}', 'number: the number of decimals must be a whole number from 0 to 10'],
    ['{{ 1 | number: 2, "xx_!" }}', 'number: "xx_!" is not a locale (a BCP 47 tag like "de-DE")'],
    ['{{ 1 | percent: 1, 2, 3 }}', 'percent: takes at most 2 arguments'],
    ['{{ 1 | number: lcale: "de" }}', 'number: unknown option "lcale" (options: locale)'],
  ])('%s is refused', async (html, message) => {
    expect(await failure(html, { customer: { a: 1 } })).toBe(message);
  });
});

describe('date_format', () => {
  const data = { day: '2024-03-05', at: '2024-03-05T23:30:00Z', local: '2024-03-05T23:30', unix: 1709681400 };

  it('prints en-US and de-DE in the four styles', async () => {
    const html = '{{ day | date_format: "short" }}|{{ day | date_format }}|{{ day | date_format: "long" }}|{{ day | date_format: "full" }}';
    expect(await render(html, data, 'en-US')).toBe('3/5/24|Mar 5, 2024|March 5, 2024|Tuesday, March 5, 2024');
    expect(await render(html, data, 'de-DE')).toBe('05.03.24|05.03.2024|5. März 2024|Dienstag, 5. März 2024');
  });

  it('prints a time in a time zone, UTC unless one is given', async () => {
    expect(await render('{{ at | date_format: "medium", time: "short" }}', data)).toBe('Mar 5, 2024, 11:30 PM');
    expect(await render('{{ at | date_format: "medium", time: "short", timezone: "Europe/Berlin" }}', data, 'de-DE')).toBe('06.03.2024, 00:30');
    expect(await render('{{ local | date_format: "long", time: "short", locale: "de-DE" }}', data)).toBe('5. März 2024 um 23:30');
  });

  it('prints a calendar date as that day in any time zone', async () => {
    expect(await render('{{ day | date_format: "long", timezone: "America/Los_Angeles" }}', data)).toBe('March 5, 2024');
    expect(await render('{{ "2026-01-15" | date_format: "medium", timezone: "America/New_York" }}', data)).toBe('Jan 15, 2026');
    expect(await render('{{ "2026-01-15" | date_format: "medium", timezone: "Pacific/Kiritimati" }}', data)).toBe('Jan 15, 2026');
    // A moment, though, is where it falls.
    expect(await render('{{ at | date_format: "long", timezone: "Asia/Tokyo" }}', data)).toBe('March 6, 2024');
  });

  it('prints a calendar date without a time, even when a time style is asked for: it has none', async () => {
    // A template written for date-times prints the day of a date-only value, not an invented midnight.
    expect(await render('{{ "2026-01-15" | date_format: "medium", time: "short", timezone: "America/New_York" }}', data)).toBe('Jan 15, 2026');
    expect(await render('{{ "2026-01-15" | date_format: "long", time: "short" }}', data, 'de-DE')).toBe('15. Januar 2026');
    // A date-time in the same data still prints its time.
    expect(await render('{{ at | date_format: "medium", time: "short", timezone: "America/New_York" }}', data)).toBe('Mar 5, 2024, 6:30 PM');
  });

  it('reads Unix timestamps in seconds, as LiquidJS’s date does', async () => {
    expect(await render('{{ unix | date_format: "medium", time: "short" }}|{{ "1709681400" | date_format: "short" }}', data)).toBe('Mar 5, 2024, 11:30 PM|3/5/24');
  });

  it('keeps LiquidJS’s strftime date filter, in UTC', async () => {
    expect(await render('{{ at | date: "%Y-%m-%d %H:%M" }}', data)).toBe('2024-03-05 23:30');
  });

  it.each([
    ['{{ "05.03.2024" | date_format }}', 'date_format: "05.03.2024" is not a date (use ISO 8601, like 2024-03-05 or 2024-03-05T14:30:00Z, or a Unix timestamp in seconds)'],
    ['{{ "2024-02-30T10:00:00Z" | date_format }}', 'date_format: "2024-02-30T10:00:00Z" is not a date (use ISO 8601, like 2024-03-05 or 2024-03-05T14:30:00Z, or a Unix timestamp in seconds)'],
    ['{{ "2024-13-01" | date_format }}', 'date_format: "2024-13-01" is not a date (use ISO 8601, like 2024-03-05 or 2024-03-05T14:30:00Z, or a Unix timestamp in seconds)'],
    ['{{ "2024-03-05T24:30" | date_format }}', 'date_format: "2024-03-05T24:30" is not a date (use ISO 8601, like 2024-03-05 or 2024-03-05T14:30:00Z, or a Unix timestamp in seconds)'],
    ['{{ day | date_format: "huge" }}', 'date_format: the style must be one of short, medium, long, full'],
    ['{{ day | date_format: "long", timezone: "Mars/Olympus" }}', 'date_format: "Mars/Olympus" is not a time zone (an IANA name like "Europe/Berlin", or "UTC")'],
    ['{{ day | date_format: "long", time: "noon" }}', 'date_format: time must be one of short, medium, long, full'],
  ])('%s is refused', async (html, message) => {
    expect(await failure(html, data)).toBe(message);
  });
});

describe('image_data_url', () => {
  const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

  it('passes an image data URL through for an img src', async () => {
    expect(await render('<img src="{{ logo | image_data_url }}" alt="">', { logo: png })).toBe(`<img src="${png}" alt="">`);
    expect(await render('<img src="{{ logo | image_data_url }}">', { logo: 'data:image/svg+xml;base64,PHN2Zy8+' })).toBe('<img src="data:image/svg+xml;base64,PHN2Zy8+">');
    expect(await render('[{{ nothing | image_data_url }}]')).toBe('[]');
  });

  it.each([
    'https://example.com/logo.png',
    'javascript:alert(1)',
    'data:text/html;base64,PHNjcmlwdD4=',
    'data:image/png,<svg onload=alert(1)>',
    'data:image/png;base64,abc" onerror="alert(1)',
    'data:image/svg+xml;base64,PHN2Zy8+ ',
  ])('refuses %s', async (url) => {
    expect(await failure('<img src="{{ url | image_data_url }}">', { url })).toMatch(
      /^image_data_url: expects a data URL of a PNG, JPEG, GIF, WebP or SVG image in base64 \(data:image\/png;base64,...\), got "/,
    );
  });
});

/** The parts of a code's SVG a test can check without decoding it. */
function svgParts(svg: string) {
  const open = /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) (\d+)" width="([\d.]+)mm" height="([\d.]+)mm">/.exec(svg);
  expect(open, svg.slice(0, 120)).not.toBeNull();
  expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  return {
    viewWidth: Number(open![1]),
    viewHeight: Number(open![2]),
    widthMm: Number(open![3]),
    heightMm: Number(open![4]),
    paths: svg.match(/<path [^>]*d="M[^"]+"/g)?.length ?? 0,
    // Only drawing elements: no text, script, foreign content or links.
    elements: new Set([...svg.matchAll(/<([a-zA-Z]+)/g)].map((match) => match[1])),
  };
}

describe('qr_code', () => {
  it('draws a square SVG of paths, 30 mm by default, unescaped', async () => {
    const out = await render('<div>{{ url | qr_code }}</div>', { url: 'https://example.com/invoices/42?x=<script>' });
    expect(out.startsWith('<div><svg ')).toBe(true);
    const svg = svgParts(out.slice('<div>'.length, -'</div>'.length));
    expect(svg).toMatchObject({ widthMm: 30, heightMm: 30 });
    expect(svg.viewWidth).toBe(svg.viewHeight);
    expect(svg.paths).toBeGreaterThan(0);
    expect(svg.elements).toEqual(new Set(['svg', 'path']));
    expect(out).not.toContain('example.com');
  });

  it('takes a size in mm and an error correction level', async () => {
    const low = svgParts(await render('{{ text | qr_code: size: 20, ecc: "L" }}', { text: 'https://example.com/tickets/42' }));
    const high = svgParts(await render('{{ text | qr_code: size: 20, ecc: "H" }}', { text: 'https://example.com/tickets/42' }));
    expect(low).toMatchObject({ widthMm: 20, heightMm: 20 });
    // More error correction, more modules.
    expect(high.viewWidth).toBeGreaterThan(low.viewWidth);
  });

  it('draws the same code once per render', async () => {
    const out = await render('{% for i in (1..3) %}{{ "same" | qr_code }}{% endfor %}');
    expect(out.split('<svg ').length - 1).toBe(3);
  });

  it.each([
    ['{{ long | qr_code }}', 'qr_code: the text is 501 bytes long; at most 500 are allowed'],
    ['{{ "ü" | qr_code: ecc: "X" }}', 'qr_code: ecc must be L, M, Q or H'],
    ['{{ "x" | qr_code: size: 1 }}', 'qr_code: size is in millimetres, from 5 to 200'],
    ['{{ customer | qr_code }}', 'qr_code: expects text, got an object'],
    ['{{ "x" | qr_code: "big" }}', 'qr_code: takes at most 0 arguments'],
  ])('%s is refused', async (html, message) => {
    expect(await failure(html, { long: 'ü'.repeat(250) + 'x', customer: {} })).toBe(message);
  });
});

describe('barcode', () => {
  it('draws an EAN-13 at its nominal size: 1 pt modules, 15 mm bars, digits as paths', async () => {
    const out = await render('{{ "400638133393" | barcode: "ean13" }}');
    const svg = svgParts(out);
    // 95 modules and the leading digit, at 25.4/72 mm a module.
    expect(svg.widthMm).toBeCloseTo((svg.viewWidth * 25.4) / 144, 1);
    expect(svg.widthMm).toBeGreaterThan(33);
    expect(svg.widthMm).toBeLessThan(40);
    expect(svg.heightMm).toBeGreaterThan(15);
    expect(svg.heightMm).toBeLessThan(20);
    expect(svg.elements).toEqual(new Set(['svg', 'path']));
    expect(out).not.toMatch(/4006381333931/);
    // 12 digits and with the right check digit draw the same bars.
    expect(await render('{{ "4006381333931" | barcode: "ean13" }}')).toBe(out);
  });

  it('draws a Code 128 of any printable ASCII, with a height and without text', async () => {
    const withText = svgParts(await render('{{ id | barcode: "code128" }}', { id: 'INV-2024/0042 <&>' }));
    const bare = svgParts(await render('{{ id | barcode: "code128", height: 10, text: false }}', { id: 'INV-2024/0042 <&>' }));
    expect(withText.heightMm).toBeGreaterThan(15);
    expect(bare.heightMm).toBeCloseTo(10, 0);
    expect(bare.paths).toBeLessThan(withText.paths);
  });

  it.each(Object.entries({ code39: 'ABC-123', ean8: '9638507', upca: '03600029145', itf14: '1540014128876' }))('draws %s', async (type, value) => {
    expect(svgParts(await render(`{{ "${value}" | barcode: "${type}" }}`)).paths).toBeGreaterThan(0);
  });

  it('lists its types', () => {
    expect(Object.keys(BARCODE_TYPES)).toEqual(['code128', 'code39', 'ean13', 'ean8', 'upca', 'itf14']);
  });

  it.each([
    ['{{ "4006381333932" | barcode: "ean13" }}', 'barcode: Incorrect EAN-13 check digit provided'],
    ['{{ "40063813" | barcode: "ean13" }}', 'barcode: a ean13 barcode takes 12 digits, or 13 with a correct check digit'],
    ['{{ "Grüße" | barcode: "code128" }}', 'barcode: a code128 barcode takes 1 to 80 printable ASCII characters'],
    ['{{ "x" | barcode: "qrcode" }}', 'barcode: unknown type "qrcode" (use one of code128, code39, ean13, ean8, upca, itf14)'],
    ['{{ "x" | barcode: "constructor" }}', 'barcode: unknown type "constructor" (use one of code128, code39, ean13, ean8, upca, itf14)'],
    ['{{ "x" | barcode }}', 'barcode: the first argument is the type, like "code128" or "ean13"'],
    ['{{ "x" | barcode: "code128", text: "no" }}', 'barcode: text must be true or false'],
    ['{{ "x" | barcode: "code128", height: 500 }}', 'barcode: height is in millimetres, from 5 to 200'],
  ])('%s is refused', async (html, message) => {
    expect(await failure(html)).toBe(message);
  });
});

describe('epc_qr', () => {
  const payment = { name: 'Müller & Söhne GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX', amount: 1234.5, text: 'Invoice 2024-0042' };

  it('builds the EPC069-12 payload', () => {
    expect(epcPayload(payment)).toBe(
      ['BCD', '002', '1', 'SCT', 'COBADEFFXXX', 'Müller & Söhne GmbH', 'DE89370400440532013000', 'EUR1234.50', '', '', 'Invoice 2024-0042'].join('\n'),
    );
    // Without BIC and amount, with a creditor reference; trailing empty lines left out.
    expect(epcPayload({ name: 'Red Cross', iban: 'BE72000000001616', reference: 'RF18 5390 0754 7034' })).toBe(
      ['BCD', '002', '1', 'SCT', '', 'Red Cross', 'BE72000000001616', '', '', 'RF18539007547034'].join('\n'),
    );
    expect(epcPayload({ name: 'A', iban: 'BE72000000001616', amount: '0.01', currency: 'EUR', purpose: 'CHAR' })).toBe(
      ['BCD', '002', '1', 'SCT', '', 'A', 'BE72000000001616', 'EUR0.01', 'CHAR'].join('\n'),
    );
    expect(epcPayload({ name: 'A', iban: 'BE72000000001616', amount: 999999999.99 })).toContain('\nEUR999999999.99');
  });

  it('draws it as a QR code', async () => {
    const out = await render('{{ payment | epc_qr }}', { payment });
    expect(svgParts(out)).toMatchObject({ widthMm: 30, heightMm: 30 });
    expect(out).not.toContain('Müller');
    expect(svgParts(await render('{{ payment | epc_qr: size: 40 }}', { payment })).widthMm).toBe(40);
  });

  it.each([
    [{ ...payment, iban: 'DE89370400440532013001' }, 'epc_qr: iban is not a valid IBAN'],
    [{ ...payment, iban: undefined }, 'epc_qr: iban is required'],
    [{ ...payment, name: '' }, 'epc_qr: name (the beneficiary) is required'],
    [{ ...payment, name: 'x'.repeat(71) }, 'epc_qr: name is longer than 70 characters'],
    [{ ...payment, name: 'two\nlines' }, 'epc_qr: name must be one line of text'],
    [{ ...payment, bic: 'COBADE' }, 'epc_qr: bic is not a valid BIC (8 or 11 letters and digits)'],
    [{ ...payment, amount: 12.345 }, 'epc_qr: amount must be a number of euros with at most two decimals, like 12.30'],
    [{ ...payment, amount: -1 }, 'epc_qr: amount must be a number of euros with at most two decimals, like 12.30'],
    [{ ...payment, amount: 1e9 }, 'epc_qr: amount must be a number of euros with at most two decimals, like 12.30'],
    [{ ...payment, amount: 0 }, 'epc_qr: amount must be at least 0.01'],
    [{ ...payment, currency: 'USD' }, 'epc_qr: currency must be EUR: SEPA credit transfers are in euros'],
    [{ ...payment, reference: 'RF18539007547034' }, 'epc_qr: give either reference or text, not both'],
    [{ ...payment, text: undefined, reference: 'RF19539007547034' }, 'epc_qr: reference must be a creditor reference (ISO 11649, like RF18539007547034); put other references in text'],
    [{ ...payment, text: 'x'.repeat(141) }, 'epc_qr: text is longer than 140 characters'],
    [{ ...payment, purpose: 'char' }, 'epc_qr: purpose must be four capital letters (an ISO 20022 purpose code)'],
    [{ ...payment, refernce: 'x' }, 'epc_qr: unknown field "refernce" (expected name, iban, bic, amount, currency, purpose, reference, text)'],
    [{ ...payment, name: 'ü'.repeat(70), text: '€'.repeat(140) }, 'epc_qr: the payment is longer than the 331 bytes an EPC QR code holds'],
    ['DE89370400440532013000', 'epc_qr: expects a payment object: { name, iban, bic?, amount?, currency?, purpose?, reference? or text? }'],
  ])('refuses %j', async (value, message) => {
    expect(() => epcPayload(value)).toThrow(message);
    expect(await failure('{{ payment | epc_qr }}', { payment: value })).toBe(message);
  });
});

describe('codes in headers and footers', () => {
  it('survive as SVG next to the page numbers', async () => {
    const out = await renderTemplate({ html: 'body', footer_html: '{{ "x" | qr_code: size: 10 }} {{ pageNumber }}' }, {});
    expect(out.footer_html).toMatch(/^<svg [^>]*width="10mm"[\s\S]*<\/svg> \{\{pageNumber\}\}$/);
  });
});
