/**
 * The rendering options a caller may give (spec 4.1), their validation and their defaults.
 *
 * The same schema serves the single endpoint (options at the top level of the body) and batch items
 * (options nested under `options`), so both reject exactly the same things with the same words.
 */
import { Script } from 'node:vm';
import { z } from 'zod';
import { quoteInput } from './errors.ts';
import { fragmentNestingDepth } from './html.ts';
import { PAGE_RANGES_RULE, parsePageRanges, type PageRange } from './page-ranges.ts';
import { finishingShape, resolveFinishing, type Finishing } from './finishing-options.ts';
import { urlAccessProblem, urlAccessShape, resolveUrlAccess, type UrlAccess } from './url-access-options.ts';

/** Paper sizes in inches (width x height, portrait), matching Chromium's own table. */
export const PAPER_FORMATS = {
  A3: { width: 11.7, height: 16.54 },
  A4: { width: 8.27, height: 11.7 },
  A5: { width: 5.83, height: 8.27 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Tabloid: { width: 11, height: 17 },
} as const;
export type PaperFormat = keyof typeof PAPER_FORMATS;
export const FORMAT_NAMES = ['A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'] as const satisfies readonly PaperFormat[];

export const WAIT_FOR = ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] as const;
export type WaitFor = (typeof WAIT_FOR)[number];

/** Largest `header_html` or `footer_html` accepted; headers and footers are small by nature. */
export const MAX_MARGIN_BOX_CHARS = 100_000;
/** Deepest element nesting accepted in a header or footer (a real one nests a handful deep). */
export const MAX_MARGIN_BOX_DEPTH = 100;
/** Longest readiness condition (a selector or an expression) accepted. */
export const MAX_CONDITION_CHARS = 10_000;
/** Longest fixed delay a caller may ask for before printing (shared/spec/beyond.md). */
export const MAX_WAIT_DELAY_MS = 10_000;
export const EMULATED_MEDIA = ['print', 'screen'] as const;
export type EmulatedMedia = (typeof EMULATED_MEDIA)[number];

const PIXELS_PER_UNIT = { px: 1, pt: 96 / 72, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 } as const;
const LENGTH_PATTERN = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(px|pt|in|cm|mm)?\s*$/i;
const LENGTH_RULE = 'a non-negative length with a unit of px, pt, in, cm or mm, such as "10mm" or "0.5in"';

/** A CSS-style length in CSS pixels (96 per inch), or undefined when it is not one we accept. */
export function lengthToPixels(length: string): number | undefined {
  const match = LENGTH_PATTERN.exec(length);
  if (!match) return undefined;
  const unit = (match[2]?.toLowerCase() ?? 'px') as keyof typeof PIXELS_PER_UNIT;
  const pixels = Number(match[1]) * PIXELS_PER_UNIT[unit];
  // Four hundred nines are digits too, and Number() makes them Infinity.
  return Number.isFinite(pixels) ? pixels : undefined;
}

const length = (field: string) =>
  z
    .string({ error: `${field} must be ${LENGTH_RULE}` })
    .refine((value) => lengthToPixels(value) !== undefined, { error: `${field} must be ${LENGTH_RULE}` });

const SIDES = ['top', 'right', 'bottom', 'left'] as const;
/** Margin given to the side a header or footer sits on when the caller did not choose one. */
export const DEFAULT_HEADER_FOOTER_MARGIN = '20mm';
/** Half an inch: the least content width and height a page with margins must keep. */
const MIN_CONTENT_PX = 48;
type Side = (typeof SIDES)[number];
export type Margin = Partial<Record<Side, string>>;

const marginSchema = z.union([length('margin'), z.strictObject({
  top: length('margin.top').optional(),
  right: length('margin.right').optional(),
  bottom: length('margin.bottom').optional(),
  left: length('margin.left').optional(),
})], { error: `margin must be ${LENGTH_RULE}, or an object with any of the keys top, right, bottom, left` });

const marginBoxHtml = (field: string) =>
  z
    .string({ error: `${field} must be a string of HTML` })
    .max(MAX_MARGIN_BOX_CHARS, { error: `${field} must be at most ${MAX_MARGIN_BOX_CHARS} characters`, abort: true })
    .refine((value) => fragmentNestingDepth(value) <= MAX_MARGIN_BOX_DEPTH, {
      error: `${field} nests elements more than ${MAX_MARGIN_BOX_DEPTH} deep`,
    });

const condition = (field: string, what: string) =>
  z
    .string({ error: `${field} must be ${what}` })
    .trim()
    .min(1, { error: `${field} must be ${what}, not empty` })
    .max(MAX_CONDITION_CHARS, { error: `${field} must be at most ${MAX_CONDITION_CHARS} characters` });

/** Whether `source` parses as one JavaScript expression. It is compiled only, never run here. */
function isExpression(source: string): boolean {
  try {
    new Script(`(${source}\n)`);
    return true;
  } catch {
    return false;
  }
}

/** Option fields as the API names them. */
export const renderOptionsShape = {
  format: z
    .string({ error: `format must be one of ${FORMAT_NAMES.join(', ')}` })
    .transform((value) => FORMAT_NAMES.find((name) => name.toLowerCase() === value.trim().toLowerCase()))
    .refine((value) => value !== undefined, { error: `format must be one of ${FORMAT_NAMES.join(', ')}` })
    .optional(),
  margin: marginSchema.optional(),
  orientation: z.enum(['portrait', 'landscape'], { error: 'orientation must be one of portrait, landscape' }).optional(),
  print_background: z.boolean({ error: 'print_background must be true or false' }).optional(),
  scale: z
    .number({ error: 'scale must be a number from 0.1 to 2' })
    .min(0.1, { error: 'scale must be a number from 0.1 to 2' })
    .max(2, { error: 'scale must be a number from 0.1 to 2' })
    .optional(),
  wait_for: z.enum(WAIT_FOR, { error: `wait_for must be one of ${WAIT_FOR.join(', ')}` }).optional(),
  header_html: marginBoxHtml('header_html').optional(),
  footer_html: marginBoxHtml('footer_html').optional(),
  // Our additions to the contract (shared/spec/beyond.md): readiness, media, tagging.
  wait_for_selector: condition('wait_for_selector', 'a CSS selector').optional(),
  wait_for_expression: condition('wait_for_expression', 'a JavaScript expression')
    .refine(isExpression, { error: 'wait_for_expression must be a JavaScript expression: it does not parse' })
    .optional(),
  wait_delay_ms: z
    .number({ error: `wait_delay_ms must be a whole number of milliseconds from 0 to ${MAX_WAIT_DELAY_MS}` })
    .int({ error: `wait_delay_ms must be a whole number of milliseconds from 0 to ${MAX_WAIT_DELAY_MS}` })
    .min(0, { error: `wait_delay_ms must be a whole number of milliseconds from 0 to ${MAX_WAIT_DELAY_MS}` })
    .max(MAX_WAIT_DELAY_MS, { error: `wait_delay_ms must be a whole number of milliseconds from 0 to ${MAX_WAIT_DELAY_MS}` })
    .optional(),
  emulate_media: z.enum(EMULATED_MEDIA, { error: `emulate_media must be one of ${EMULATED_MEDIA.join(', ')}` }).optional(),
  tagged: z.boolean({ error: 'tagged must be true or false' }).optional(),
  // Page and document (shared/spec/beyond.md).
  width: length('width').optional(),
  height: length('height').optional(),
  prefer_css_page_size: z.boolean({ error: 'prefer_css_page_size must be true or false' }).optional(),
  page_ranges: z
    .string({ error: `page_ranges must be ${PAGE_RANGES_RULE}` })
    .max(1_000, { error: 'page_ranges must be at most 1000 characters', abort: true })
    .transform((text, context) => {
      const parsed = parsePageRanges(text);
      if ('error' in parsed) {
        context.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      return parsed.ranges;
    })
    .optional(),
  outline: z.boolean({ error: 'outline must be true or false' }).optional(),
  ...finishingShape,
  // Fetching a url (shared/spec/beyond.md).
  ...urlAccessShape,
};

/** Options after validation, with every default applied. */
export interface RenderOptions {
  /** The paper format used, or `custom` for a caller's `width` and `height`. */
  readonly format: PaperFormat | 'custom';
  /** The caller's own page size, when given (`width` and `height`), in CSS px as Chromium takes it. */
  readonly pageSize?: { readonly width: string; readonly height: string };
  /** The paper the document prints on unless it declares its own size, turned as `landscape` says, in CSS px. */
  readonly paper: { readonly width: number; readonly height: number };
  readonly landscape: boolean;
  /** Margins given by the caller, one value per side in CSS px (absent sides are unset). */
  readonly margin: Margin;
  readonly printBackground: boolean;
  readonly scale: number;
  readonly waitFor: WaitFor;
  /**
   * Whether a page size the document declares itself (CSS `@page { size: ... }`) wins over the
   * paper; on by default, as in Chrome's print dialog (docs/api.md, "Page size, margins and paged media").
   */
  readonly preferCssPageSize: boolean;
  /** The pages to print, sorted and joined (lib/render/page-ranges.ts); all of them when absent. */
  readonly pageRanges?: readonly PageRange[];
  /** PDF bookmarks from the document's headings. */
  readonly outline: boolean;
  readonly headerHtml?: string;
  readonly footerHtml?: string;
  /** Print once an element matches this selector and is visible. */
  readonly waitForSelector?: string;
  /** Print once this expression, evaluated in the page, is truthy. */
  readonly waitForExpression?: string;
  /** Waited after every other condition. */
  readonly waitDelayMs: number;
  /** The CSS media type the document is laid out for: `print`, as Chrome prints, or `screen`. */
  readonly emulateMedia: EmulatedMedia;
  /**
   * A tagged PDF: the document's structure (headings, paragraphs, tables, reading order) for
   * screen readers and reflow, as Chrome prints it. On by default (accessibility first); `false`
   * gives a smaller file for less CPU (about a third less Chromium CPU and a fifth of the size on
   * the benchmark's invoice).
   */
  readonly tagged: boolean;
  /** What is done to the printed file: metadata, watermark, encryption (lib/render/finishing.ts). */
  readonly finishing: Finishing;
  /** How a `url` document is fetched: headers, cookies, credentials (lib/render/url-access.ts). */
  readonly urlAccess: UrlAccess;
}

/** The smallest and largest page side accepted for `width` and `height` (PDF allows 200 in). */
const MIN_PAGE_SIDE_PX = 48;
const MAX_PAGE_SIDE_PX = 200 * 96;

type ParsedOptions = {
  [K in keyof typeof renderOptionsShape]?: z.output<(typeof renderOptionsShape)[K]>;
};

/** Applies defaults (spec 4.1) and checks what single fields cannot: that the margins leave room for content. */
export function resolveRenderOptions(parsed: ParsedOptions): RenderOptions | { error: string } {
  const landscape = parsed.orientation === 'landscape';
  if ((parsed.width === undefined) !== (parsed.height === undefined)) {
    return { error: `${parsed.width === undefined ? 'height' : 'width'} needs ${parsed.width === undefined ? 'width' : 'height'}: give both, or neither` };
  }
  // width and height override format (shared/spec/beyond.md).
  const custom = parsed.width !== undefined && parsed.height !== undefined ? { width: lengthToPixels(parsed.width) as number, height: lengthToPixels(parsed.height) as number } : undefined;
  if (custom && [custom.width, custom.height].some((side) => side < MIN_PAGE_SIDE_PX || side > MAX_PAGE_SIDE_PX)) {
    return { error: 'width and height must each be from 0.5in to 200in' };
  }
  const format = custom ? 'custom' : ((parsed.format ?? 'A4') as PaperFormat);
  const portrait = custom ?? { width: PAPER_FORMATS[format as PaperFormat].width * 96, height: PAPER_FORMATS[format as PaperFormat].height * 96 };
  // Chromium turns any paper, a custom one too, when printing landscape.
  const paper = landscape ? { width: portrait.height, height: portrait.width } : portrait;
  const finishing = resolveFinishing(parsed);
  if ('error' in finishing) return finishing;
  const urlAccess = resolveUrlAccess(parsed);
  const accessProblem = urlAccessProblem(urlAccess);
  if (accessProblem) return { error: accessProblem };
  const given: Margin =
    typeof parsed.margin === 'string'
      ? { top: parsed.margin, right: parsed.margin, bottom: parsed.margin, left: parsed.margin }
      : { ...parsed.margin };
  // A header or footer needs room of its own (lib/render/margin-boxes.ts): its side's default counts too.
  const printed: Margin = {
    ...given,
    ...(parsed.header_html !== undefined && { top: given.top ?? DEFAULT_HEADER_FOOTER_MARGIN }),
    ...(parsed.footer_html !== undefined && { bottom: given.bottom ?? DEFAULT_HEADER_FOOTER_MARGIN }),
  };
  // Validation let through only lengths with a finite size in px.
  const px = (side: Side) => (printed[side] === undefined ? 0 : (lengthToPixels(printed[side]) as number));
  // Half an inch of content in each direction is the least a page can usefully hold.
  if (paper.width - px('left') - px('right') < MIN_CONTENT_PX || paper.height - px('top') - px('bottom') < MIN_CONTENT_PX) {
    const page = custom ? `${parsed.width} by ${parsed.height}` : `${format} ${landscape ? 'landscape' : 'portrait'}`;
    return { error: `margin leaves no room for content on a ${page} page` };
  }
  // Chromium understands px, in, cm and mm only, spelled exactly; every length leaves here in px.
  const inPx = (pixels: number) => `${Math.round(pixels * 1000) / 1000}px`;
  const margin: Margin = Object.fromEntries(
    SIDES.flatMap((side) => (printed[side] === undefined ? [] : [[side, inPx(px(side))]])),
  );

  return {
    format,
    ...(custom && { pageSize: { width: inPx(custom.width), height: inPx(custom.height) } }),
    paper,
    landscape,
    margin,
    printBackground: parsed.print_background ?? true,
    scale: parsed.scale ?? 1,
    waitFor: parsed.wait_for ?? 'load',
    preferCssPageSize: parsed.prefer_css_page_size ?? true,
    ...(parsed.page_ranges !== undefined && { pageRanges: parsed.page_ranges }),
    outline: parsed.outline ?? false,
    tagged: parsed.tagged ?? true,
    finishing,
    urlAccess,
    waitDelayMs: parsed.wait_delay_ms ?? 0,
    emulateMedia: parsed.emulate_media ?? 'print',
    ...(parsed.header_html !== undefined && { headerHtml: parsed.header_html }),
    ...(parsed.footer_html !== undefined && { footerHtml: parsed.footer_html }),
    ...(parsed.wait_for_selector !== undefined && { waitForSelector: parsed.wait_for_selector }),
    ...(parsed.wait_for_expression !== undefined && { waitForExpression: parsed.wait_for_expression }),
  };
}

/** The first problem zod found, as one sentence naming the field. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request is invalid.';
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? ` in ${issue.path.join('.')}` : '';
    return `Unknown field${issue.keys.length > 1 ? 's' : ''}${where}: ${quoteInput(issue.keys.join(', '))}`;
  }
  // Union failures carry the per-branch issues; the union's own message is the useful one.
  return issue.message;
}
