/**
 * page_ranges (lib/render/page-ranges.ts): what a caller types, what Chromium is asked to print, and
 * how many pages a print must have when every page asked for exists.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chromiumPageRanges, formatPageRanges, leastPagesSelected, parsePageRanges, type PageRange } from '#lib/render/page-ranges.ts';

function ranges(text: string): PageRange[] {
  const parsed = parsePageRanges(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed.ranges;
}

/** The pages a selection prints from a document of `total` pages, as Chromium documents it. */
function pagesPrinted(selection: readonly PageRange[], total: number): number[] {
  const pages: number[] = [];
  for (let page = 1; page <= total; page++) {
    if (selection.some(({ from, to }) => page >= from && (to === undefined || page <= to))) pages.push(page);
  }
  return pages;
}

describe('parsePageRanges', () => {
  it.each([
    ['1-3, 5', '1-3, 5'],
    ['5,1-3', '1-3, 5'],
    ['2-', '2-'],
    ['1-3,2-6', '1-6'],
    ['1-3,4', '1-4'],
    ['3-, 1', '1, 3-'],
    ['2-, 5-9', '2-'],
    [' 7 ', '7'],
  ])('reads %j as %j', (text, expected) => {
    // Act
    const parsed = ranges(text);

    // Assess
    expect(formatPageRanges(parsed)).toBe(expected);
  });

  it.each([['0'], ['3-1'], ['a'], [''], ['1,,2'], ['-3'], ['1-2-3'], ['1.5'], ['99999999']])('refuses %j with a message naming page_ranges', (text) => {
    // Act
    const parsed = parsePageRanges(text);

    // Assess
    expect('error' in parsed && parsed.error).toMatch(/^page_ranges/);
  });
});

describe('chromiumPageRanges', () => {
  it('prints the whole document up to the cap when there is no selection', () => {
    expect(chromiumPageRanges(undefined, 51)).toBe('1-51');
  });

  it('takes the first pages of the selection up to the cap, closing an open range', () => {
    expect(chromiumPageRanges(ranges('1-10, 20-'), 51)).toBe('1-10, 20-60');
    expect(chromiumPageRanges(ranges('1-3, 5'), 51)).toBe('1-3, 5');
    expect(chromiumPageRanges(ranges('1-100'), 51)).toBe('1-51');
  });
});

describe('the page count check', () => {
  it('a print has at least leastPagesSelected pages exactly when every page asked for exists (any document length)', () => {
    const selection = fc
      .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }), fc.boolean()), { minLength: 1, maxLength: 5 })
      .map((parts) => parts.map(([from, length, open]) => (open ? `${from}-` : length === undefined ? `${from}` : `${from}-${from + length}`)).join(','));
    fc.assert(
      fc.property(selection, fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 30 }), (text, total, maxPages) => {
        // Prepare
        const parsed = ranges(text);
        const everyPageExists = parsed.every(({ from, to }) => from <= total && (to === undefined || to <= total));

        // Act: what Chromium prints of the capped selection
        const printed = pagesPrinted(ranges(chromiumPageRanges(parsed, maxPages + 1)), total).length;

        // Assess: over the limit, or complete exactly when the check says so
        if (printed > maxPages) return;
        expect(printed >= Math.min(leastPagesSelected(parsed), maxPages + 1)).toBe(everyPageExists);
      }),
      { numRuns: 2_000 },
    );
  });
});
