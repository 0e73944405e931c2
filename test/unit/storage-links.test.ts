/**
 * Download links (lib/storage/links.ts): a signed link works until its expiry and not after, and no
 * part of it can be changed without the link becoming invalid.
 */
import { describe, expect, it } from 'vitest';
import { FILES_PATH, signDownloadLink, verifyDownloadLink } from '#lib/storage/links.ts';

const SECRET = 'test-link-secret-0123456789';
const BASE_URL = 'https://pdf.example.com';
const PDF_ID = 'pdf_3kTq9ZbW0xYv7LmN2pR8sAfC';
const EXPIRES_AT = new Date('2026-12-01T10:00:00Z');

/** What the files function reads from an incoming link: the id from the path, the two query parameters. */
function partsOf(link: string): { pdfId: string; expires: string | undefined; signature: string | undefined } {
  const url = new URL(link);
  const prefix = `${FILES_PATH}/`;
  if (!url.pathname.startsWith(prefix)) throw new Error(`not a download link: ${link}`);
  return {
    pdfId: decodeURIComponent(url.pathname.slice(prefix.length)),
    expires: url.searchParams.get('expires') ?? undefined,
    signature: url.searchParams.get('signature') ?? undefined,
  };
}

function sign(overrides: Partial<{ pdfId: string; expiresAt: Date; secret: string }> = {}): string {
  return signDownloadLink({ baseUrl: BASE_URL, pdfId: PDF_ID, expiresAt: EXPIRES_AT, secret: SECRET, ...overrides });
}

/** A string with one character changed, still in the same alphabet. */
function flipLastChar(value: string): string {
  const last = value.at(-1);
  return value.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}

describe('signDownloadLink', () => {
  it('points at the service\'s files path with the expiry in epoch seconds', () => {
    // Act
    const link = sign();

    // Assess
    const url = new URL(link);
    expect(url.origin).toBe(BASE_URL);
    expect(url.pathname).toBe(`/v1/files/${PDF_ID}`);
    expect(url.searchParams.get('expires')).toBe(String(EXPIRES_AT.getTime() / 1000));
    expect(url.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('signs the same inputs to the same link, and different ids to different signatures', () => {
    // Act
    const first = sign();
    const again = sign();
    const other = sign({ pdfId: 'pdf_other' });

    // Assess
    expect(again).toBe(first);
    expect(partsOf(other).signature).not.toBe(partsOf(first).signature);
  });
});

describe('verifyDownloadLink', () => {
  it('accepts a link it signed, before its expiry', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const check = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(check).toBe('valid');
  });

  it('round-trips an id that needs percent-encoding', () => {
    // Prepare
    const parts = partsOf(sign({ pdfId: 'pdf_a/b c?d' }));

    // Act
    const check = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(parts.pdfId).toBe('pdf_a/b c?d');
    expect(check).toBe('valid');
  });

  it('is valid one millisecond before the expiry and expired exactly at it', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const justBefore = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date(EXPIRES_AT.getTime() - 1) });
    const atExpiry = verifyDownloadLink({ ...parts, secret: SECRET, now: EXPIRES_AT });
    const later = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2027-06-01T00:00:00Z') });

    // Assess
    expect(justBefore).toBe('valid');
    expect(atExpiry).toBe('expired');
    expect(later).toBe('expired');
  });

  it('rounds a sub-second expiry down, so a link never outlives its expires_at', () => {
    // Prepare
    const expiresAt = new Date('2026-12-01T10:00:00.900Z');
    const parts = partsOf(sign({ expiresAt }));

    // Act
    const check = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2026-12-01T10:00:00.000Z') });

    // Assess
    expect(check).toBe('expired');
  });

  it('refuses a tampered signature', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const check = verifyDownloadLink({
      ...parts,
      signature: flipLastChar(parts.signature ?? ''),
      secret: SECRET,
      now: new Date('2026-11-01T00:00:00Z'),
    });

    // Assess
    expect(check).toBe('invalid');
  });

  it('refuses the signature of one PDF presented for another PDF', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const check = verifyDownloadLink({
      ...parts,
      pdfId: 'pdf_SomebodyElsesDocument00',
      secret: SECRET,
      now: new Date('2026-11-01T00:00:00Z'),
    });

    // Assess
    expect(check).toBe('invalid');
  });

  it('refuses an expiry pushed later, and reports it invalid rather than valid or expired', () => {
    // Prepare
    const parts = partsOf(sign());
    const extended = String(Number(parts.expires) + 365 * 86_400);

    // Act
    const duringExtension = verifyDownloadLink({ ...parts, expires: extended, secret: SECRET, now: new Date('2027-01-01T00:00:00Z') });
    const beforeExpiry = verifyDownloadLink({ ...parts, expires: extended, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(duringExtension).toBe('invalid');
    expect(beforeExpiry).toBe('invalid');
  });

  it('reports an expired link with a bad signature as invalid: expiry is only told for genuine links', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const check = verifyDownloadLink({ ...parts, signature: flipLastChar(parts.signature ?? ''), secret: SECRET, now: new Date('2030-01-01T00:00:00Z') });

    // Assess
    expect(check).toBe('invalid');
  });

  it('refuses a link signed with a different secret (after rotation)', () => {
    // Prepare
    const parts = partsOf(sign({ secret: 'the-old-secret' }));

    // Act
    const check = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(check).toBe('invalid');
  });

  it.each([
    ['no expires', { expires: undefined }],
    ['no signature', { signature: undefined }],
    ['empty expires', { expires: '' }],
    ['empty signature', { signature: '' }],
    ['non-numeric expires', { expires: 'tomorrow' }],
    ['negative expires', { expires: '-1' }],
    ['fractional expires', { expires: '1796119200.5' }],
    ['expires with a leading plus', { expires: '+1796119200' }],
    ['absurdly long expires', { expires: '9'.repeat(13) }],
    ['truncated signature', { signature: 'abc' }],
  ])('refuses a link with %s', (_name, override) => {
    // Prepare
    const parts = { ...partsOf(sign()), ...override };

    // Act
    const check = verifyDownloadLink({ ...parts, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(check).toBe('invalid');
  });

  it('refuses the signature with padding or a longer tail appended', () => {
    // Prepare
    const parts = partsOf(sign());

    // Act
    const padded = verifyDownloadLink({ ...parts, signature: `${parts.signature}=`, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });
    const extended = verifyDownloadLink({ ...parts, signature: `${parts.signature}AAAA`, secret: SECRET, now: new Date('2026-11-01T00:00:00Z') });

    // Assess
    expect(padded).toBe('invalid');
    expect(extended).toBe('invalid');
  });
});
