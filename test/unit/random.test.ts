/**
 * randomBase62 (lib/random.ts), the source of PDF ids and API keys: the right length, only
 * [0-9A-Za-z], never repeating, and every character equally likely.
 */
import { describe, expect, it } from 'vitest';
import { randomBase62 } from '#lib/random.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('randomBase62', () => {
  it.each([0, 1, 16, 24, 40, 61, 62, 63, 1000])('returns exactly %i characters', (length) => {
    // Act
    const value = randomBase62(length);

    // Assess
    expect(value).toHaveLength(length);
  });

  it('uses only the 62 characters 0-9, A-Z, a-z', () => {
    // Act
    const value = Array.from({ length: 200 }, () => randomBase62(50)).join('');

    // Assess
    expect(value).toMatch(/^[0-9A-Za-z]+$/);
  });

  it('never repeats over 20,000 ids of 24 characters', () => {
    // Act
    const ids = Array.from({ length: 20_000 }, () => randomBase62(24));

    // Assess
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draws every character about equally often (no modulo bias)', () => {
    // Prepare: 620,000 draws, 10,000 expected per character, standard deviation about 100
    const counts = new Map<string, number>();

    // Act
    for (let i = 0; i < 620; i++) {
      for (const char of randomBase62(1_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }

    // Assess: folding bytes with % 62 would make 0-7 about 25% more likely; 10% is 10 standard deviations
    expect([...counts.keys()].sort().join('')).toBe([...BASE62].sort().join(''));
    for (const char of BASE62) {
      expect(counts.get(char), `count of ${char}`).toBeGreaterThan(9_000);
      expect(counts.get(char), `count of ${char}`).toBeLessThan(11_000);
    }
  });

  it('varies every position: no character is fixed or sequential', () => {
    // Act
    const ids = Array.from({ length: 500 }, () => randomBase62(24));

    // Assess: at each position, 500 draws from 62 characters show far more than a handful of values
    for (let position = 0; position < 24; position++) {
      const seen = new Set(ids.map((id) => id[position]));
      expect(seen.size, `distinct characters at position ${position}`).toBeGreaterThan(40);
    }
  });
});
