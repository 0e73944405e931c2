/**
 * A batch's merged file keeps to the limits every PDF does (issue #29, item 2), through the local
 * stack: items that are each within the size limit but larger together are stored and charged, and
 * the batch answers 200 with `merge_error` MERGE_TOO_LARGE instead of a merged file past the limit.
 * (The test stack allows 8 MB per PDF, test/support/global-setup.ts.)
 */
import { describe, expect, it } from 'vitest';
import { createKey, download, post, quotaUsed } from '../support/api.ts';
import { TEST_MAX_PDF_BYTES } from '../support/global-setup.ts';

/** A page holding one canvas of noise, which no compression shrinks: a PDF of about 3.5 MB. */
const noisyHtml = (seed: number) => `<!doctype html><style>@page { size: 12in 12in; margin: 0 } body { margin: 0 }</style>
<canvas id="c" width="1100" height="1100" style="width: 11in; height: 11in"></canvas>
<script>
  const canvas = document.getElementById('c');
  const context = canvas.getContext('2d');
  const image = context.createImageData(canvas.width, canvas.height);
  let state = ${seed};
  for (let i = 0; i < image.data.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    image.data[i] = i % 4 === 3 ? 255 : state >>> 24;
  }
  context.putImageData(image, 0, 0);
</script>`;

describe('merge limits', () => {
  it('answers merge_error MERGE_TOO_LARGE, not a 5xx, when the items together pass the size limit; the items stay stored and charged', async () => {
    // Prepare
    const key = await createKey('pro');

    // Act
    const response = await post('/v1/pdf/batch', { merge: true, pdfs: [1, 2, 3, 4].map((seed) => ({ html: noisyHtml(seed) })) }, key.apiKey);

    // Assess: every item made, each under the limit, together over it
    expect(response.status).toBe(200);
    const { results, merged, merge_error: mergeError } = response.body;
    expect(results.map((result: { success: boolean }) => result.success)).toEqual([true, true, true, true]);
    const sizes = results.map((result: { size_bytes: number }) => result.size_bytes);
    expect(Math.min(...sizes)).toBeGreaterThan(2_000_000);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(TEST_MAX_PDF_BYTES);
    expect(sizes.reduce((a: number, b: number) => a + b, 0)).toBeGreaterThan(TEST_MAX_PDF_BYTES);
    // Assess: no merged file, the reason given, the items downloadable and charged
    expect(merged).toBeNull();
    expect(mergeError).toMatchObject({ code: 'MERGE_TOO_LARGE' });
    expect(mergeError.message).toMatch(/stored on its own/);
    expect((await download(results[3].download_url)).byteLength).toBe(sizes[3]);
    expect(await quotaUsed(key)).toBe(4);
  });

  it('joins items that fit, a few MB each, into one file of their pages', async () => {
    // Prepare
    const key = await createKey('pro');

    // Act
    const response = await post('/v1/pdf/batch', { merge: true, pdfs: [5, 6].map((seed) => ({ html: noisyHtml(seed) })) }, key.apiKey);

    // Assess
    expect(response.status).toBe(200);
    const { results, merged } = response.body;
    expect(merged).toMatchObject({ pages: 2 });
    const sizes = results.map((result: { size_bytes: number }) => result.size_bytes);
    expect(merged.size).toBeGreaterThan(sizes[0] + sizes[1] - 10_000);
    expect(merged.size).toBeLessThanOrEqual(TEST_MAX_PDF_BYTES);
    expect((await download(merged.url)).byteLength).toBe(merged.size);
    expect(await quotaUsed(key)).toBe(2);
  });
});
