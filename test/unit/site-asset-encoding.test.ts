/**
 * Which coding an asset is sent in, from the Accept-Encoding a browser (or a proxy, or curl) sends,
 * and which If-None-Match names the file: pure logic of lib/site/asset-encoding.ts.
 */
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EncodedFile, pickCoding } from '#lib/site/asset-encoding.ts';

describe('pickCoding', () => {
  it.each([
    ['gzip, deflate, br, zstd', 'br'], // Chrome, Firefox
    ['gzip, deflate', 'gzip'], // older clients, curl --compressed without brotli
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['identity', 'identity'],
    ['', 'identity'],
    [undefined, 'identity'],
  ] as const)('Accept-Encoding %j: %s', (header, coding) => {
    expect(pickCoding(header)).toBe(coding);
  });
});

describe('EncodedFile', () => {
  const file = new EncodedFile(Buffer.from('body { color: black }\n'.repeat(200)));

  it('makes each coding once, smaller, and the same bytes when decoded', async () => {
    const br = await file.body('br');
    expect(await file.body('br')).toBe(br);
    expect(br.bytes.length).toBeLessThan(200);
    expect(brotliDecompressSync(br.bytes).toString()).toBe('body { color: black }\n'.repeat(200));
  });

  it('matches an If-None-Match naming it in any coding, weak or not, and no other file', () => {
    expect(file.matches(file.etag('gzip'))).toBe(true);
    expect(file.matches(`"other", W/${file.etag('identity')}`)).toBe(true);
    expect(file.matches('*')).toBe(true);
    expect(file.matches(new EncodedFile(Buffer.from('other')).etag('br'))).toBe(false);
    expect(file.matches(undefined)).toBe(false);
  });
});
