/**
 * `page_ranges` (shared/spec/beyond.md): which pages of the document go into the PDF.
 *
 * Chromium prints a selection in document order, each page once, and quietly drops pages past the
 * document's end. We promise more: a range past the last page is the caller's mistake and is
 * reported, not quietly shortened. Chromium does not say how long the document is, so the check is
 * made on what it printed: every page asked for exists exactly when the file has as many pages as
 * the selection names (at least one from an open range such as "5-", which means "to the end").
 */

import { quoteInput } from './errors.ts';

/** Pages `from` to `to`, both included; `to` undefined is "to the last page". */
export interface PageRange {
  readonly from: number;
  readonly to?: number;
}

/** Most ranges one selection may list: a selection is typed by a person, not generated. */
export const MAX_PAGE_RANGES = 100;
/** Highest page number accepted, far above any page limit. */
const MAX_PAGE_NUMBER = 1_000_000;
export const PAGE_RANGES_RULE = 'page numbers and ranges separated by commas, such as "1-3, 5" or "2-" (from page 2 to the end)';

/**
 * The selection in `text`, sorted and with overlapping or touching ranges joined (as Chromium
 * prints them), or why it is not one.
 */
export function parsePageRanges(text: string): { ranges: PageRange[] } | { error: string } {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > MAX_PAGE_RANGES) return { error: `page_ranges may list at most ${MAX_PAGE_RANGES} ranges` };
  const ranges: PageRange[] = [];
  for (const part of parts) {
    // Any run of digits is read, so that a number too high is named as such rather than called malformed.
    const match = /^(\d+)(?:\s*-\s*(\d+)?)?$/.exec(part);
    if (!match) return { error: `page_ranges must be ${PAGE_RANGES_RULE}` };
    const from = Number(match[1]);
    const open = match[2] === undefined && part.includes('-');
    const to = open ? undefined : Number(match[2] ?? match[1]);
    if (from < 1 || from > MAX_PAGE_NUMBER || (to !== undefined && to > MAX_PAGE_NUMBER)) {
      return { error: `page_ranges: ${JSON.stringify(quoteInput(part))} is out of bounds: page numbers run from 1 to ${MAX_PAGE_NUMBER}` };
    }
    if (to !== undefined && to < from) return { error: `page_ranges: the range ${from}-${to} ends before it starts` };
    ranges.push(to === undefined ? { from } : { from, to });
  }
  return { ranges: joinRanges(ranges) };
}

function joinRanges(ranges: PageRange[]): PageRange[] {
  const sorted = [...ranges].sort((a, b) => a.from - b.from);
  const joined: PageRange[] = [];
  for (const range of sorted) {
    const last = joined.at(-1);
    if (last && (last.to === undefined || range.from <= last.to + 1)) {
      const to = last.to === undefined || range.to === undefined ? undefined : Math.max(last.to, range.to);
      joined[joined.length - 1] = to === undefined ? { from: last.from } : { from: last.from, to };
    } else joined.push(range);
  }
  return joined;
}

/** The selection as text again, e.g. for a message. */
export function formatPageRanges(ranges: readonly PageRange[]): string {
  return ranges.map(({ from, to }) => (to === undefined ? `${from}-` : to === from ? `${from}` : `${from}-${to}`)).join(', ');
}

/**
 * Chromium's `pageRanges` for the first `most` pages of the selection (the whole document when
 * there is none): the print stops there, so a document over the page limit is detected by the one
 * page past it, without printing the rest.
 */
export function chromiumPageRanges(ranges: readonly PageRange[] | undefined, most: number): string {
  if (!ranges) return `1-${most}`;
  const taken: PageRange[] = [];
  let left = most;
  for (const { from, to } of ranges) {
    if (left === 0) break;
    const end = to === undefined ? from + left - 1 : Math.min(to, from + left - 1);
    taken.push({ from, to: end });
    left -= end - from + 1;
  }
  return formatPageRanges(taken);
}

/**
 * The fewest pages a print of the selection has when every page it asks for exists: each closed
 * range whole, and the first page of an open one.
 */
export function leastPagesSelected(ranges: readonly PageRange[]): number {
  return ranges.reduce((sum, { from, to }) => sum + (to === undefined ? 1 : to - from + 1), 0);
}
