/**
 * docs/templates.md states the template limits per tier in words for customers; the tier table in
 * lib/accounts/tiers.ts is the one source of truth, and this keeps the two equal.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TEMPLATE_LIMITS, TIER_NAMES } from '#lib/accounts/tiers.ts';

const docs = readFileSync(new URL('../../docs/templates.md', import.meta.url), 'utf8');

const bytes = (size: string): number => {
  const match = /^(\d+(?:\.\d+)?) (KB|MB)$/.exec(size.trim());
  if (!match) throw new Error(`not a size: ${size}`);
  return Number(match[1]) * (match[2] === 'KB' ? 1024 : 1024 * 1024);
};

describe('docs/templates.md', () => {
  it('gives every tier’s template limits exactly as lib/accounts/tiers.ts has them', () => {
    // Prepare: the rows of the table under "Limits per tier".
    const section = docs.slice(docs.indexOf('### Limits per tier'));
    const rows = new Map(
      section
        .split('\n')
        .filter((line) => /^\| (free|starter|pro|enterprise) \|/.test(line))
        .map((line) => {
          const [tier, templates, size, versions, previews] = line.split('|').slice(1, 6).map((cell) => cell.trim());
          return [tier, { maxTemplates: Number(templates), maxTemplateBytes: bytes(size!), versionsKept: Number(versions), previewsPerMinute: Number(previews) }];
        }),
    );

    // Assess
    expect([...rows.keys()]).toEqual([...TIER_NAMES]);
    for (const tier of TIER_NAMES) expect(rows.get(tier), tier).toEqual(TEMPLATE_LIMITS[tier]);
  });
});
