/**
 * QR codes and barcodes drawn as inline SVG with bwip-js (the JavaScript port of Barcode Writer in
 * Pure PostScript), and the EPC payment QR code ("GiroCode") payload.
 *
 * The SVG is markup we generate: data only decides the geometry (bwip-js draws even the
 * human-readable digits as paths), so it is written unescaped. The data is untrusted: every input
 * is checked, and a bad one is a TemplateError naming the filter.
 */
import type BwipJs from 'bwip-js';
import { TemplateError } from './errors.ts';

type Bwip = typeof BwipJs;

let bwipLoading: Promise<Bwip> | undefined;

/**
 * bwip-js, loaded on first use: it takes 0.1 to 0.25 s to load, which a render without a code
 * (and the cold start of every function that can render templates) should not pay.
 */
export function loadBwip(): Promise<Bwip> {
  bwipLoading ??= import('bwip-js').then((module) => ((module as { default?: Bwip }).default ?? (module as unknown as Bwip)));
  return bwipLoading;
}

/** The filters that need bwip-js, for the engine to load it before a template using one renders. */
export const CODE_FILTERS = ['qr_code', 'epc_qr', 'barcode'] as const;

// ---------------------------------------------------------------------------------------------
// Limits

/**
 * UTF-8 bytes a `qr_code` may hold. bwip-js draws a QR code synchronously, in time growing with
 * its content: about 0.1 s for 330 bytes (the largest EPC payment code), 0.15 to 0.3 s for 500 and
 * up to 1.4 s for 2,000, which would step past the render's time limit in one call. 500 bytes
 * holds any URL, a vCard or a payment.
 */
export const MAX_QR_BYTES = 500;
/** Characters of a Code 128 or Code 39 barcode; longer ones are too wide for scanners anyway. */
export const MAX_BARCODE_LENGTH = 80;

/** Default printed sizes, in millimetres. */
export const DEFAULT_QR_SIZE_MM = 30;
export const DEFAULT_BARCODE_HEIGHT_MM = 15;
const MIN_SIZE_MM = 5;
const MAX_SIZE_MM = 200;

/**
 * bwip-js draws at 72 dots per inch times its scale; at scale 2, one unit of the SVG's viewBox is
 * 1/144 inch. A linear barcode's narrowest bar is then 1 pt (0.35 mm), close to EAN's nominal
 * 0.33 mm, and its height in mm is as asked.
 */
const SCALE = 2;
const MM_PER_UNIT = 25.4 / (72 * SCALE);

// ---------------------------------------------------------------------------------------------
// Drawing

type Bcid = 'qrcode' | 'code128' | 'code39' | 'ean13' | 'ean8' | 'upca' | 'itf14';

/** The barcode types `barcode` draws, and what each accepts. */
export const BARCODE_TYPES: Readonly<Record<string, { bcid: Bcid; input: RegExp; expects: string }>> = {
  code128: { bcid: 'code128', input: new RegExp(`^[\\x20-\\x7e]{1,${MAX_BARCODE_LENGTH}}$`), expects: `1 to ${MAX_BARCODE_LENGTH} printable ASCII characters` },
  code39: { bcid: 'code39', input: new RegExp(`^[0-9A-Z\\-. $/+%]{1,${MAX_BARCODE_LENGTH}}$`), expects: `1 to ${MAX_BARCODE_LENGTH} of 0-9, A-Z, space and - . $ / + %` },
  ean13: { bcid: 'ean13', input: /^\d{12,13}$/, expects: '12 digits, or 13 with a correct check digit' },
  ean8: { bcid: 'ean8', input: /^\d{7,8}$/, expects: '7 digits, or 8 with a correct check digit' },
  upca: { bcid: 'upca', input: /^\d{11,12}$/, expects: '11 digits, or 12 with a correct check digit' },
  itf14: { bcid: 'itf14', input: /^\d{13,14}$/, expects: '13 digits, or 14 with a correct check digit' },
};

const SVG_OPEN = /^<svg viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)" xmlns="http:\/\/www\.w3\.org\/2000\/svg">/;

/** bwip-js's SVG with a printed size: `width`/`height` in mm, the viewBox kept for scaling. */
function sized(svg: string, size: (viewWidth: number, viewHeight: number) => [number, number]): string {
  const match = SVG_OPEN.exec(svg);
  if (match === null) throw new Error('bwip-js drew an SVG of an unexpected shape');
  const viewWidth = Number(match[1]);
  const viewHeight = Number(match[2]);
  const [width, height] = size(viewWidth, viewHeight);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${viewWidth} ${viewHeight}" width="${mm(width)}" height="${mm(height)}">` +
    svg.slice(match[0].length).trim()
  );
}

const mm = (value: number): string => `${Number(value.toFixed(2))}mm`;

function draw(bwip: Bwip, filter: string, options: BwipJs.RenderOptions): string {
  try {
    return bwip.toSVG({ ...options, scale: SCALE });
  } catch (error) {
    // bwip-js errors read "bwipp.ean13badCheckDigit#6915: Incorrect EAN-13 check digit provided".
    const reason = error instanceof Error ? error.message.replace(/^[\w.]+#\d+:\s*/, '') : '';
    throw new TemplateError(`${filter}: ${reason || 'the code could not be drawn'}`.slice(0, 300), { cause: error });
  }
}

/** Text as the UTF-8 bytes bwip-js encodes (one character per byte), so QR codes carry UTF-8. */
const utf8Bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

export interface QrOptions {
  /** Error correction level; M (15 %) unless set. */
  ecc?: 'L' | 'M' | 'Q' | 'H';
  /** Printed width and height in mm. */
  sizeMm?: number;
}

/** A QR code of `text` (UTF-8) as SVG, `sizeMm` square. */
export function qrCodeSvg(bwip: Bwip, text: string, options: QrOptions = {}, filter = 'qr_code'): string {
  const bytes = utf8Bytes(text);
  if (bytes.length === 0) throw new TemplateError(`${filter}: the text is empty`);
  if (bytes.length > MAX_QR_BYTES) throw new TemplateError(`${filter}: the text is ${bytes.length} bytes long; at most ${MAX_QR_BYTES} are allowed`);
  const size = options.sizeMm ?? DEFAULT_QR_SIZE_MM;
  const svg = draw(bwip, filter, { bcid: 'qrcode', text: bytes, binarytext: true, eclevel: options.ecc ?? 'M' } as BwipJs.RenderOptions);
  return sized(svg, () => [size, size]);
}

export interface BarcodeOptions {
  /** Bar height in mm. */
  heightMm?: number;
  /** Whether to print the human-readable text under the bars (default true). */
  text?: boolean;
}

/** A linear barcode as SVG, its bars 1 pt per module wide and `heightMm` high. */
export function barcodeSvg(bwip: Bwip, type: string, value: string, options: BarcodeOptions = {}): string {
  const kind = Object.hasOwn(BARCODE_TYPES, type) ? BARCODE_TYPES[type] : undefined;
  if (kind === undefined) throw new TemplateError(`barcode: unknown type "${type.slice(0, 30)}" (use one of ${Object.keys(BARCODE_TYPES).join(', ')})`);
  if (!kind.input.test(value)) throw new TemplateError(`barcode: a ${type} barcode takes ${kind.expects}`);
  const svg = draw(bwip, 'barcode', {
    bcid: kind.bcid,
    text: value,
    height: options.heightMm ?? DEFAULT_BARCODE_HEIGHT_MM,
    includetext: options.text ?? true,
    // Code 39 and 128 print their text centred under the bars; EAN and UPC place digits themselves.
    ...(type === 'code128' || type === 'code39' ? { textxalign: 'center' } : {}),
  } as BwipJs.RenderOptions);
  return sized(svg, (viewWidth, viewHeight) => [viewWidth * MM_PER_UNIT, viewHeight * MM_PER_UNIT]);
}

/** A size in mm from a filter argument, checked. */
export function sizeArgument(filter: string, name: string, value: unknown): number {
  const size = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof size !== 'number' || !Number.isFinite(size) || size < MIN_SIZE_MM || size > MAX_SIZE_MM) {
    throw new TemplateError(`${filter}: ${name} is in millimetres, from ${MIN_SIZE_MM} to ${MAX_SIZE_MM}`);
  }
  return size;
}

// ---------------------------------------------------------------------------------------------
// EPC payment QR code

/** What `epc_qr` takes: a SEPA credit transfer. */
export interface EpcPayment {
  /** The beneficiary, at most 70 characters. */
  name: string;
  /** The beneficiary's IBAN (spaces allowed). */
  iban: string;
  /** The beneficiary's BIC; optional within the EEA. */
  bic?: string;
  /** In euros, 0.01 to 999,999,999.99, at most two decimals (a number or a decimal string). */
  amount?: number | string;
  /** Only EUR: SEPA credit transfers are in euros. */
  currency?: 'EUR';
  /** A four-letter purpose code (ISO 20022 ExternalPurpose1Code), such as GDDS. */
  purpose?: string;
  /** A structured creditor reference (ISO 11649, `RF…`); or else `text`. */
  reference?: string;
  /** Remittance text, at most 140 characters; or else `reference`. */
  text?: string;
}

const EPC_FIELDS = new Set(['name', 'iban', 'bic', 'amount', 'currency', 'purpose', 'reference', 'text']);
/** The payload's limit in the EPC's guidelines (EPC069-12). */
const EPC_MAX_BYTES = 331;

function epcError(detail: string): TemplateError {
  return new TemplateError(`epc_qr: ${detail}`);
}

/** Checks ISO 7064 MOD 97-10, as IBANs and creditor references use: the code moved 4 to the end, letters as 10..35. */
function mod97(code: string): boolean {
  const rearranged = code.slice(4) + code.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? char.charCodeAt(0) - 55 : Number(char);
    remainder = (value >= 10 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

function optionalString(payment: Record<string, unknown>, field: string): string | undefined {
  const value = payment[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw epcError(`${field} must be a string`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw epcError(`${field} must be one line of text`);
  return value.trim();
}

/** `amount` as the EPC writes it: `12.30` (dot, two decimals), checked for range and precision. */
function epcAmount(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  const match = text === undefined ? null : /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text);
  if (match === null) throw epcError('amount must be a number of euros with at most two decimals, like 12.30');
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (cents < 1) throw epcError('amount must be at least 0.01');
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/**
 * The EPC QR code payload (EPC069-12, version 002, UTF-8) for a SEPA credit transfer: the lines
 * BCD, 002, 1, SCT, BIC, name, IBAN, EUR amount, purpose, creditor reference, text, with empty
 * trailing lines left out. Throws a TemplateError naming the field that is wrong.
 */
export function epcPayload(payment: unknown): string {
  if (typeof payment !== 'object' || payment === null || Array.isArray(payment)) {
    throw epcError('expects a payment object: { name, iban, bic?, amount?, currency?, purpose?, reference? or text? }');
  }
  const fields = payment as Record<string, unknown>;
  for (const field of Object.keys(fields)) {
    if (!EPC_FIELDS.has(field)) throw epcError(`unknown field "${field.slice(0, 30)}" (expected ${[...EPC_FIELDS].join(', ')})`);
  }

  const name = optionalString(fields, 'name');
  if (name === undefined) throw epcError('name (the beneficiary) is required');
  if ([...name].length > 70) throw epcError('name is longer than 70 characters');

  const iban = optionalString(fields, 'iban')?.replace(/\s+/g, '').toUpperCase();
  if (iban === undefined) throw epcError('iban is required');
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban) || !mod97(iban)) throw epcError('iban is not a valid IBAN');

  const bic = optionalString(fields, 'bic')?.replace(/\s+/g, '').toUpperCase();
  if (bic !== undefined && !/^[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$/.test(bic)) throw epcError('bic is not a valid BIC (8 or 11 letters and digits)');

  const currency = optionalString(fields, 'currency');
  if (currency !== undefined && currency.toUpperCase() !== 'EUR') throw epcError('currency must be EUR: SEPA credit transfers are in euros');
  const amount = epcAmount(fields.amount);

  const purpose = optionalString(fields, 'purpose');
  if (purpose !== undefined && !/^[A-Z]{4}$/.test(purpose)) throw epcError('purpose must be four capital letters (an ISO 20022 purpose code)');

  const reference = optionalString(fields, 'reference')?.replace(/\s+/g, '').toUpperCase();
  const text = optionalString(fields, 'text');
  if (reference !== undefined && text !== undefined) throw epcError('give either reference or text, not both');
  if (reference !== undefined && (!/^RF\d{2}[A-Z0-9]{1,21}$/.test(reference) || !mod97(reference))) {
    throw epcError('reference must be a creditor reference (ISO 11649, like RF18539007547034); put other references in text');
  }
  if (text !== undefined && [...text].length > 140) throw epcError('text is longer than 140 characters');

  const lines = ['BCD', '002', '1', 'SCT', bic ?? '', name, iban, amount === undefined ? '' : `EUR${amount}`, purpose ?? '', reference ?? '', text ?? ''];
  while (lines.at(-1) === '') lines.pop();
  const payload = lines.join('\n');
  if (Buffer.byteLength(payload, 'utf8') > EPC_MAX_BYTES) throw epcError(`the payment is longer than the ${EPC_MAX_BYTES} bytes an EPC QR code holds`);
  return payload;
}
