/**
 * When a document looks long enough to be counted before printing (lib/render/page-limit.ts): the
 * estimate only decides whether to probe, so it must catch what is plainly long and leave ordinary
 * documents alone.
 */
import { describe, expect, it } from 'vitest';
import { estimatePages, mightExceed } from '#lib/render/page-limit.ts';
import { resolveRenderOptions, type RenderOptions } from '#lib/render/options.ts';

function options(parsed: Parameters<typeof resolveRenderOptions>[0] = {}): RenderOptions {
  const resolved = resolveRenderOptions(parsed);
  if ('error' in resolved) throw new Error(resolved.error);
  return resolved;
}

describe('estimatePages', () => {
  it('an A4 page of content height is about one page', () => {
    // Act
    const pages = estimatePages({ height: 11.7 * 96, forcedBreaks: 0 }, options());

    // Assess
    expect(pages).toBeCloseTo(1, 1);
  });

  it('counts each forced break as a page', () => {
    // Act
    const pages = estimatePages({ height: 0, forcedBreaks: 10_000 }, options());

    // Assess
    expect(pages).toBe(10_000);
  });

  it('a page narrower than the window, or scaled up, makes more pages of the same layout', () => {
    // Prepare
    const layout = { height: 100_000, forcedBreaks: 0 };

    // Act
    const plain = estimatePages(layout, options());
    const scaled = estimatePages(layout, options({ scale: 2 }));
    const narrow = estimatePages(layout, options({ format: 'A5', margin: '2in' }));

    // Assess
    expect(scaled).toBeGreaterThan(plain * 3);
    expect(narrow).toBeGreaterThan(plain * 2);
  });
});

describe('mightExceed', () => {
  it('leaves an ordinary report alone', () => {
    // Act / Assess: 40 pages tall, 30 chapter breaks
    expect(mightExceed({ height: 40 * 1123, forcedBreaks: 30 }, options(), 2_000)).toBe(false);
  });

  it('probes a document whose layout or breaks reach half the limit', () => {
    // Act / Assess
    expect(mightExceed({ height: 30_000_000, forcedBreaks: 0 }, options(), 2_000)).toBe(true);
    expect(mightExceed({ height: 0, forcedBreaks: 1_000 }, options(), 2_000)).toBe(true);
  });
});
