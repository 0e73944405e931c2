/**
 * The filters documents need, beyond LiquidJS's own: numbers, currencies, percentages and dates
 * by locale (Intl), QR codes and barcodes as SVG, images from data URLs. Listed with an example
 * each for customers in docs/templates.md.
 *
 * Every filter renders nothing for a missing value (nil or ''), so optional fields need no `if`;
 * a value it cannot use is a TemplateError naming the filter, never a guess.
 */
import { toValue, type Liquid } from 'liquidjs';
import { barcodeSvg, epcPayload, qrCodeSvg, sizeArgument, type QrOptions } from './codes.ts';
import type BwipJs from 'bwip-js';
import { TemplateError } from './errors.ts';
import { canonicalLocale } from './locale.ts';
import { registerCounterTags } from './counters.ts';

/** The filters this module adds, for the docs and tests. */
export const DOCUMENT_FILTERS = ['number', 'currency', 'percent', 'date_format', 'qr_code', 'epc_qr', 'barcode', 'image_data_url'] as const;

// ---------------------------------------------------------------------------------------------
// Arguments

/**
 * A filter's arguments split into positional ones and `name: value` ones (LiquidJS passes the
 * latter as `[name, value]` pairs). Names outside `known` are refused, so a typo is an error
 * rather than an option silently ignored.
 */
function splitArguments(filter: string, args: unknown[], positional: number, known: readonly string[]): { values: unknown[]; named: Map<string, unknown> } {
  const values: unknown[] = [];
  const named = new Map<string, unknown>();
  for (const arg of args) {
    if (Array.isArray(arg) && arg.length === 2 && typeof arg[0] === 'string') {
      if (!known.includes(arg[0])) throw new TemplateError(`${filter}: unknown option "${arg[0].slice(0, 30)}"${known.length ? ` (options: ${known.join(', ')})` : ''}`);
      named.set(arg[0], plain(arg[1]));
    } else {
      values.push(plain(arg));
    }
  }
  if (values.length > positional) throw new TemplateError(`${filter}: takes at most ${positional} argument${positional === 1 ? '' : 's'}`);
  return { values, named };
}

/** A value as data: LiquidJS's `nil`, `empty` and `blank` are objects of its own standing for null and ''. */
function plain(value: unknown): unknown {
  return toValue(value);
}

function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** A locale argument, checked; undefined when not given. */
function localeArgument(filter: string, value: unknown): string | undefined {
  if (isMissing(value)) return undefined;
  const locale = canonicalLocale(value);
  if (locale === undefined) throw new TemplateError(`${filter}: "${String(value).slice(0, 40)}" is not a locale (a BCP 47 tag like "de-DE")`);
  return locale;
}

/** A count of fraction digits, 0 to 10; undefined when not given. */
function digitsArgument(filter: string, value: unknown): number | undefined {
  if (isMissing(value)) return undefined;
  const digits = typeof value === 'string' ? Number(value) : value;
  if (typeof digits !== 'number' || !Number.isInteger(digits) || digits < 0 || digits > 10) {
    throw new TemplateError(`${filter}: the number of decimals must be a whole number from 0 to 10`);
  }
  return digits;
}

/**
 * A value to format as a number: a finite number, or a decimal string (JSON often carries money
 * as "12.50"), which Intl formats exactly, without a round trip through binary floating point.
 */
function numeric(filter: string, value: unknown): number | `${number}` {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?\s*$/.test(value)) return value.trim() as `${number}`;
  throw new TemplateError(`${filter}: expects a number, got ${describeValue(value)}`);
}

/**
 * How every number, currency and percentage is signed: a minus only for a value that is still
 * negative once rounded, so -0.004 EUR prints €0.00 and never -€0.00 (Intl's default, 'auto', keeps
 * the sign of negative zero).
 */
const SIGN: Pick<Intl.NumberFormatOptions, 'signDisplay'> = { signDisplay: 'negative' };

/**
 * The ISO 4217 codes Intl knows. Intl formats any three letters, printing an unknown code as is
 * (`XYZ 1.00`), so a typo would reach the document instead of failing the render.
 */
const CURRENCY_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

function describeValue(value: unknown): string {
  if (typeof value === 'string') return `"${value.slice(0, 40)}${value.length > 40 ? '…' : ''}"`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

// ---------------------------------------------------------------------------------------------
// Dates

const DATE_STYLES = ['short', 'medium', 'long', 'full'] as const;
type DateStyle = (typeof DATE_STYLES)[number];
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i;

/** Whether year, month and day name a day of the calendar (JavaScript would roll 2024-02-30 over to March). */
function isCalendarDay(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
}

/**
 * The instant a value names, and whether it is a calendar date (printed as that day whatever the
 * time zone). ISO 8601 dates and date-times (UTC when they carry no offset), Unix timestamps in
 * seconds (as LiquidJS's `date` reads numbers), and "now" / "today".
 */
function parseDate(value: unknown): { date: Date; calendarDate: boolean } | undefined {
  if (value === 'now' || value === 'today') return { date: new Date(), calendarDate: false };
  if (typeof value === 'number' && Number.isFinite(value)) return valid(new Date(value * 1000), false);
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d{1,12}$/.test(text)) return valid(new Date(Number(text) * 1000), false);
  const day = ISO_DATE.exec(text);
  if (day !== null) return isCalendarDay(day[1]!, day[2]!, day[3]!) ? valid(new Date(`${text}T00:00:00Z`), true) : undefined;
  const moment = ISO_DATE_TIME.exec(text);
  if (moment === null || !isCalendarDay(moment[1]!, moment[2]!, moment[3]!)) return undefined;
  return valid(new Date(moment[4] === undefined ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T')), false);
}

function valid(date: Date, calendarDate: boolean): { date: Date; calendarDate: boolean } | undefined {
  return Number.isNaN(date.getTime()) ? undefined : { date, calendarDate };
}

function styleArgument(filter: string, name: string, value: unknown): DateStyle | undefined {
  if (isMissing(value)) return undefined;
  if (typeof value === 'string' && (DATE_STYLES as readonly string[]).includes(value)) return value as DateStyle;
  throw new TemplateError(`${filter}: ${name} must be one of ${DATE_STYLES.join(', ')}`);
}

function timeZoneArgument(filter: string, value: unknown): string | undefined {
  if (isMissing(value)) return undefined;
  if (typeof value === 'string' && value.length <= 64) {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
    } catch {
      // not a time zone: refused below
    }
  }
  throw new TemplateError(`${filter}: "${String(value).slice(0, 40)}" is not a time zone (an IANA name like "Europe/Berlin", or "UTC")`);
}

// ---------------------------------------------------------------------------------------------
// Images

const IMAGE_DATA_URL = /^data:image\/(?:png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/i;

// ---------------------------------------------------------------------------------------------
// Registration

/** What the code filters need from the engine. */
export interface CodeDrawing {
  /** The barcode library, when the template uses a code filter (see loadBwip). */
  bwip: typeof BwipJs | undefined;
  /** Runs a drawing on the render's code-time budget. */
  drawing: <T>(draw: () => T) => T;
}

/**
 * Registers the document filters on `liquid`, with `locale` as their default locale, and the
 * counter tags that keep `increment` and `decrement` apart from the data (counters.ts).
 */
export function registerDocumentFilters(liquid: Liquid, locale: string, codes: CodeDrawing): void {
  // Here because this is where the engine (createTemplateEngine) hands its Liquid over for our
  // additions; registering them beside the engine's own tags there would say so more plainly.
  registerCounterTags(liquid);
  // One formatter per distinct set of options in this render (a 5,000-line invoice asks for the
  // same few thousands of times); the engine is per render, so is this cache.
  const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
  const numberFormat = (options: Intl.NumberFormatOptions, localeOverride: string | undefined): Intl.NumberFormat => {
    const key = JSON.stringify(['n', localeOverride ?? locale, options]);
    let format = formatters.get(key) as Intl.NumberFormat | undefined;
    if (format === undefined) formatters.set(key, (format = new Intl.NumberFormat(localeOverride ?? locale, options)));
    return format;
  };
  const dateFormat = (options: Intl.DateTimeFormatOptions, localeOverride: string | undefined): Intl.DateTimeFormat => {
    const key = JSON.stringify(['d', localeOverride ?? locale, options]);
    let format = formatters.get(key) as Intl.DateTimeFormat | undefined;
    if (format === undefined) formatters.set(key, (format = new Intl.DateTimeFormat(localeOverride ?? locale, options)));
    return format;
  };

  // {{ 1234.5 | number }} → 1,234.5; {{ 1234.5 | number: 2, "de-DE" }} → 1.234,50
  liquid.registerFilter('number', function (input: unknown, ...args: unknown[]) {
    const value = plain(input);
    if (isMissing(value)) return '';
    const { values, named } = splitArguments('number', args, 2, ['locale']);
    const digits = digitsArgument('number', values[0]);
    const override = localeArgument('number', named.get('locale') ?? values[1]);
    const options: Intl.NumberFormatOptions = { ...SIGN, ...(digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }) };
    return numberFormat(options, override).format(numeric('number', value));
  });

  // {{ 1234.56 | currency: "EUR" }} → €1,234.56; with "de-DE" → 1.234,56 €
  liquid.registerFilter('currency', function (input: unknown, ...args: unknown[]) {
    const value = plain(input);
    if (isMissing(value)) return '';
    const { values, named } = splitArguments('currency', args, 2, ['locale', 'decimals']);
    const code = values[0];
    if (typeof code !== 'string' || !/^[A-Za-z]{3}$/.test(code)) {
      throw new TemplateError('currency: the first argument is the currency, a three-letter ISO 4217 code like "EUR" or "USD"');
    }
    const currency = code.toUpperCase();
    if (!CURRENCY_CODES.has(currency)) throw new TemplateError(`currency: "${currency}" is not an ISO 4217 currency code (like "EUR" or "USD")`);
    const override = localeArgument('currency', named.get('locale') ?? values[1]);
    const digits = digitsArgument('currency', named.get('decimals'));
    const options: Intl.NumberFormatOptions = {
      ...SIGN,
      style: 'currency',
      currency,
      ...(digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }),
    };
    return numberFormat(options, override).format(numeric('currency', value));
  });

  // {{ 0.19 | percent }} → 19%; {{ 0.125 | percent: 1, "de-DE" }} → 12,5 %
  liquid.registerFilter('percent', function (input: unknown, ...args: unknown[]) {
    const value = plain(input);
    if (isMissing(value)) return '';
    const { values, named } = splitArguments('percent', args, 2, ['locale']);
    const digits = digitsArgument('percent', values[0]);
    const override = localeArgument('percent', named.get('locale') ?? values[1]);
    const options: Intl.NumberFormatOptions = { ...SIGN, style: 'percent', ...(digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }) };
    return numberFormat(options, override).format(numeric('percent', value));
  });

  // {{ "2024-03-05" | date_format: "long" }} → March 5, 2024; with "de-DE" → 5. März 2024
  liquid.registerFilter('date_format', function (input: unknown, ...args: unknown[]) {
    const value = plain(input);
    if (isMissing(value)) return '';
    const { values, named } = splitArguments('date_format', args, 2, ['time', 'timezone', 'locale']);
    const dateStyle = styleArgument('date_format', 'the style', values[0]) ?? 'medium';
    const timeStyle = styleArgument('date_format', 'time', named.get('time'));
    const override = localeArgument('date_format', named.get('locale') ?? values[1]);
    const timeZone = timeZoneArgument('date_format', named.get('timezone'));
    const parsed = parseDate(value);
    if (parsed === undefined) {
      throw new TemplateError(
        `date_format: ${describeValue(value)} is not a date (use ISO 8601, like 2024-03-05 or 2024-03-05T14:30:00Z, or a Unix timestamp in seconds)`,
      );
    }
    // A calendar date (2026-01-15) is that day everywhere, so it prints in UTC, where it was read:
    // in New York's time zone its midnight would be the evening before. It has no time of day
    // either, so a time style prints nothing rather than an invented midnight; a template written
    // for date-times thus prints the day of a date-only value.
    if (parsed.calendarDate) return dateFormat({ dateStyle, timeZone: 'UTC' }, override).format(parsed.date);
    return dateFormat({ dateStyle, ...(timeStyle === undefined ? {} : { timeStyle }), timeZone: timeZone ?? 'UTC' }, override).format(parsed.date);
  });

  // <img src="{{ logo | image_data_url }}" alt="Logo">
  liquid.registerFilter('image_data_url', function (input: unknown) {
    const value = plain(input);
    if (isMissing(value)) return '';
    if (typeof value !== 'string' || !IMAGE_DATA_URL.test(value)) {
      throw new TemplateError(
        `image_data_url: expects a data URL of a PNG, JPEG, GIF, WebP or SVG image in base64 (data:image/png;base64,...), got ${describeValue(value)}`,
      );
    }
    return value;
  });

  // Identical codes (the same payment QR on every page, say) are drawn once per render.
  const drawn = new Map<string, string>();
  const drawCode = (filter: string, key: unknown[], draw: (bwip: typeof BwipJs) => string): string => {
    const { bwip } = codes;
    if (bwip === undefined) throw new Error(`${filter} used without the barcode library loaded`);
    const cacheKey = JSON.stringify([filter, ...key]);
    let svg = drawn.get(cacheKey);
    if (svg === undefined) drawn.set(cacheKey, (svg = codes.drawing(() => draw(bwip))));
    return svg;
  };
  const qrOptions = (filter: string, named: Map<string, unknown>): QrOptions => {
    const ecc = named.get('ecc');
    if (ecc !== undefined && !(typeof ecc === 'string' && ['L', 'M', 'Q', 'H'].includes(ecc))) throw new TemplateError(`${filter}: ecc must be L, M, Q or H`);
    const size = named.get('size');
    return { ...(ecc === undefined ? {} : { ecc: ecc as QrOptions['ecc'] }), ...(size === undefined ? {} : { sizeMm: sizeArgument(filter, 'size', size) }) };
  };

  // {{ "https://example.com/i/42" | qr_code }}, {{ url | qr_code: size: 25, ecc: "H" }}
  liquid.registerFilter('qr_code', {
    raw: true,
    handler(input: unknown, ...args: unknown[]) {
      const value = plain(input);
      if (isMissing(value)) return '';
      const { named } = splitArguments('qr_code', args, 0, ['size', 'ecc']);
      if (typeof value !== 'string' && typeof value !== 'number') throw new TemplateError(`qr_code: expects text, got ${describeValue(value)}`);
      const options = qrOptions('qr_code', named);
      return drawCode('qr_code', [String(value), options], (bwip) => qrCodeSvg(bwip, String(value), options));
    },
  });

  // {{ payment | epc_qr }} with payment = { name, iban, amount, text }
  liquid.registerFilter('epc_qr', {
    raw: true,
    handler(input: unknown, ...args: unknown[]) {
      const value = plain(input);
      if (isMissing(value)) return '';
      const { named } = splitArguments('epc_qr', args, 0, ['size']);
      const payload = epcPayload(value);
      // Error correction M, as the EPC's guidelines require.
      const options: QrOptions = { ...qrOptions('epc_qr', named), ecc: 'M' };
      return drawCode('epc_qr', [payload, options], (bwip) => qrCodeSvg(bwip, payload, options, 'epc_qr'));
    },
  });

  // {{ "4006381333931" | barcode: "ean13" }}, {{ order.id | barcode: "code128", height: 10, text: false }}
  liquid.registerFilter('barcode', {
    raw: true,
    handler(input: unknown, ...args: unknown[]) {
      const value = plain(input);
      if (isMissing(value)) return '';
      const { values, named } = splitArguments('barcode', args, 1, ['height', 'text']);
      const type = values[0];
      if (typeof type !== 'string') throw new TemplateError('barcode: the first argument is the type, like "code128" or "ean13"');
      if (typeof value !== 'string' && typeof value !== 'number') throw new TemplateError(`barcode: expects text, got ${describeValue(value)}`);
      const height = named.get('height');
      const text = named.get('text');
      if (text !== undefined && typeof text !== 'boolean') throw new TemplateError('barcode: text must be true or false');
      const options = {
        ...(height === undefined ? {} : { heightMm: sizeArgument('barcode', 'height', height) }),
        ...(text === undefined ? {} : { text }),
      };
      return drawCode('barcode', [type, String(value), options], (bwip) => barcodeSvg(bwip, type, String(value), options));
    },
  });
}
