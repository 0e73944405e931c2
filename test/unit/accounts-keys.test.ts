/**
 * The pure parts of API keys (lib/accounts/keys.ts): the stored hash, and the limits a key runs
 * under (its tier's from lib/accounts/tiers.ts, with the key's own overrides on top).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acceptsCredential, hashApiKey, limitsFor, type ApiKey } from '#lib/accounts/keys.ts';
import { TIER_NAMES, TIERS, type TierName } from '#lib/accounts/tiers.ts';

function keyOf(tier: TierName, overrides: Partial<ApiKey> = {}): ApiKey {
  return { keyId: 'key_test', tier, name: 'test', createdAt: '2026-01-01T00:00:00.000Z', ...overrides };
}

describe('hashApiKey', () => {
  it('is the SHA-256 of the key in lower-case hex (FIPS 180-2 test vector "abc")', () => {
    // Act
    const hash = hashApiKey('abc');

    // Assess
    expect(hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes a real-looking key to 64 hex characters, the same every time', () => {
    // Prepare
    const apiKey = 'pdfk_0123456789abcdefghijABCDEFGHIJ0123456789';

    // Act
    const first = hashApiKey(apiKey);
    const second = hashApiKey(apiKey);

    // Assess
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(second).toBe(first);
    expect(first).toBe(createHash('sha256').update(apiKey, 'utf8').digest('hex'));
  });

  it('never contains the key itself', () => {
    // Prepare
    const apiKey = 'pdfk_deadbeefdeadbeefdeadbeefdeadbeefdeadbeef';

    // Act
    const hash = hashApiKey(apiKey);

    // Assess
    expect(hash).not.toContain('deadbeef');
  });

  it('gives keys that differ in one character or in case different hashes', () => {
    // Act
    const hashes = new Set([hashApiKey('pdfk_abcdef'), hashApiKey('pdfk_abcdeg'), hashApiKey('pdfk_ABCDEF'), hashApiKey('pdfk_abcdef ')]);

    // Assess
    expect(hashes.size).toBe(4);
  });
});

describe('limitsFor', () => {
  it.each(TIER_NAMES)('gives a %s key without overrides exactly its tier\'s limits', (tier) => {
    // Act
    const limits = limitsFor(keyOf(tier));

    // Assess
    expect(limits).toEqual(TIERS[tier]);
  });

  it('matches the tier table of decisions.md', () => {
    // Act
    const table = Object.fromEntries(TIER_NAMES.map((tier) => [tier, limitsFor(keyOf(tier))]));

    // Assess
    expect(table).toEqual({
      free: { maxBatchSize: 10, rateLimitPerMinute: 10, monthlyQuota: 100, linkValidityDays: 7, maxConcurrentRenders: 2, jobRenderTimeoutMs: 60_000 },
      starter: { maxBatchSize: 50, rateLimitPerMinute: 60, monthlyQuota: 5_000, linkValidityDays: 30, maxConcurrentRenders: 10, jobRenderTimeoutMs: 120_000 },
      pro: { maxBatchSize: 100, rateLimitPerMinute: 300, monthlyQuota: 50_000, linkValidityDays: 90, maxConcurrentRenders: 50, jobRenderTimeoutMs: 240_000 },
      enterprise: { maxBatchSize: 100, rateLimitPerMinute: 1_000, monthlyQuota: 1_000_000, linkValidityDays: 365, maxConcurrentRenders: 100, jobRenderTimeoutMs: 240_000 },
    });
  });

  it('applies an enterprise key\'s own rate limit and quota over the tier\'s', () => {
    // Act
    const limits = limitsFor(keyOf('enterprise', { rateLimitPerMinute: 5_000, monthlyQuota: 20_000_000 }));

    // Assess
    expect(limits).toEqual({ ...TIERS.enterprise, rateLimitPerMinute: 5_000, monthlyQuota: 20_000_000 });
  });

  it('applies one override and keeps the tier value for the other', () => {
    // Act
    const rateOnly = limitsFor(keyOf('pro', { rateLimitPerMinute: 42 }));
    const quotaOnly = limitsFor(keyOf('pro', { monthlyQuota: 7 }));

    // Assess
    expect(rateOnly).toEqual({ ...TIERS.pro, rateLimitPerMinute: 42 });
    expect(quotaOnly).toEqual({ ...TIERS.pro, monthlyQuota: 7 });
  });

  it('keeps an override of 0 rather than falling back to the tier', () => {
    // Act
    const limits = limitsFor(keyOf('starter', { monthlyQuota: 0 }));

    // Assess
    expect(limits.monthlyQuota).toBe(0);
  });

  it('does not change the shared tier table', () => {
    // Prepare
    const before = structuredClone(TIERS);

    // Act
    limitsFor(keyOf('free', { rateLimitPerMinute: 999, monthlyQuota: 999 }));

    // Assess
    expect(TIERS).toEqual(before);
  });
});

describe('acceptsCredential', () => {
  const now = new Date('2026-11-28T10:00:00.000Z');
  const credentials = {
    current: { createdAt: '2026-11-28T09:00:00.000Z' },
    overlapping: { createdAt: '2026-11-01T00:00:00.000Z', retiresAt: '2026-11-28T10:00:00.001Z' },
    ending: { createdAt: '2026-11-01T00:00:00.000Z', retiresAt: '2026-11-28T10:00:00.000Z' },
  };

  it('accepts a plaintext key with no end, and one whose end is still ahead', () => {
    // Act / Assess
    expect(acceptsCredential(credentials, 'current', now)).toBe(true);
    expect(acceptsCredential(credentials, 'overlapping', now)).toBe(true);
  });

  it('refuses one from the very moment of its end, and one the key does not list', () => {
    // Act / Assess
    expect(acceptsCredential(credentials, 'ending', now)).toBe(false);
    expect(acceptsCredential(credentials, 'overlapping', new Date('2026-11-28T10:00:00.001Z'))).toBe(false);
    expect(acceptsCredential(credentials, 'unknown', now)).toBe(false);
  });
});
