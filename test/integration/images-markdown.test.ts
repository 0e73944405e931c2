/**
 * Pictures, Markdown and thumbnails (shared/spec/beyond.md "Images and Markdown"), through the local
 * stack and real Chromium: what a user downloads is decoded and looked at, never trusted.
 */
import { loadImage, createCanvas } from '@napi-rs/canvas';
import { imageSize } from 'image-size';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, download, expectApiError, generate, post, quotaUsed, request, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

/** The colour of one pixel of a picture, as [r, g, b, a]. */
async function pixelAt(bytes: Uint8Array, x: number, y: number): Promise<number[]> {
  const image = await loadImage(Buffer.from(bytes));
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  return Array.from(context.getImageData(x, y, 1, 1).data);
}

const README = `# Release notes

| Feature | State |
|---------|-------|
| Tables  | shipped |

- [x] Task done
- [ ] Task open

\`\`\`js
const answer = 42;
\`\`\`

<script>document.body.innerHTML = 'HIJACKED'</script>
<img src="x" onerror="document.body.innerHTML = 'HIJACKED'">
`;

describe('images, markdown and thumbnails', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('starter');
  });

  it('POST /v1/image/generate stores a picture of the page at the asked viewport, listed and charged as one document', async () => {
    // Prepare
    const html = '<!doctype html><body style="margin:0;background:rgb(255,0,0)"><div style="position:absolute;left:0;top:0;width:100px;height:50px;background:rgb(0,0,255)"></div>';

    // Act
    const png = await post('/v1/image/generate', { html, image: { width: 400, height: 300, device_scale_factor: 2 } }, key.apiKey);
    const jpeg = await post('/v1/image/generate', { markdown: '# Card', image: { format: 'jpeg', quality: 80, width: 320, height: 200 }, filename: 'card' }, key.apiKey);

    // Assess
    expect(png.status, JSON.stringify(png.body)).toBe(200);
    expect(png.body).toMatchObject({ content_type: 'image/png', width: 800, height: 600 });
    expect(png.body.id).toMatch(/^img_[0-9A-Za-z]{20,}$/);
    const pngBytes = await download(png.body.url);
    expect(png.body.size).toBe(pngBytes.byteLength);
    expect(imageSize(pngBytes)).toMatchObject({ type: 'png', width: 800, height: 600 });
    // The blue box is 100 x 50 CSS pixels: 200 x 100 device pixels at scale 2, on the red page.
    expect(await pixelAt(pngBytes, 150, 80)).toEqual([0, 0, 255, 255]);
    expect(await pixelAt(pngBytes, 250, 150)).toEqual([255, 0, 0, 255]);

    expect(jpeg.status, JSON.stringify(jpeg.body)).toBe(200);
    expect(jpeg.body).toMatchObject({ content_type: 'image/jpeg', width: 320, height: 200, filename: 'card.jpg' });
    expect(imageSize(await download(jpeg.body.url))).toMatchObject({ type: 'jpg', width: 320, height: 200 });

    const record = await request('GET', `/v1/pdf/${png.body.id}`, { apiKey: key.apiKey });
    expect(record.body).toMatchObject({ id: png.body.id, content_type: 'image/png', width: 800, height: 600 });

    // A PDF option is refused by name, before anything is charged.
    const refused = await post('/v1/image/generate', { html, format: 'A4' }, key.apiKey);
    expectApiError(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toMatch(/format applies to PDFs only/);
  });

  it('markdown prints every element of a README, and its raw HTML never runs', async () => {
    // Act
    const { status, body } = await generate(key.apiKey, { markdown: README });

    // Assess
    expect(status, JSON.stringify(body)).toBe(200);
    const pdf = await readPdf(await download(body.url));
    const text = pdf.pages.map((page) => page.text).join('\n');
    for (const expected of ['Release notes', 'Feature', 'shipped', 'Task done', 'Task open', 'const answer = 42']) expect(text).toContain(expected);
    // The markup is shown as the text it is, and nothing replaced the document.
    expect(text).toContain("<script>document.body.innerHTML = 'HIJACKED'</script>");
    expect(text).toContain('onerror=');
    expect(text).not.toMatch(/^\s*HIJACKED\s*$/);
  });

  it('thumbnail stores a picture of the first page beside the PDF, shown in the record and its GET', async () => {
    // Act
    const { status, body } = await generate(key.apiKey, { html: '<!doctype html><h1 style="font-size:120px">Big title</h1>', thumbnail: { width: 210 } });

    // Assess
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.content_type).toBe('application/pdf');
    expect(body.thumbnail_url).toMatch(/\/v1\/files\/pdf_[0-9A-Za-z]+\.thumbnail\?/);
    const thumbnail = await download(body.thumbnail_url);
    // A4 is 210 x 297 mm: the page's shape, at the width asked for.
    expect(imageSize(thumbnail)).toMatchObject({ type: 'png', width: 210, height: 297 });
    // White paper with ink where the title is.
    expect(await pixelAt(thumbnail, 200, 280)).toEqual([255, 255, 255, 255]);
    const again = await request('GET', `/v1/pdf/${body.id}`, { apiKey: key.apiKey });
    expect(again.body.thumbnail_url).toMatch(/\.thumbnail\?/);

    // A batch item may ask for a picture; its failure beside it is not charged.
    const batch = await post('/v1/pdf/batch', { pdfs: [{ markdown: '**Item**', output: 'image', options: { image: { format: 'webp', width: 200, height: 100 } } }, { html: '<p>x</p>', output: 'gif' }] }, key.apiKey);
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.results[0]).toMatchObject({ success: true, pdf_id: expect.stringMatching(/^img_/), content_type: 'image/webp' });
    expect(imageSize(await download(batch.body.results[0].download_url))).toMatchObject({ type: 'webp', width: 200, height: 100 });
    expect(batch.body.results[1]).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });

    // Every document stored is listed, each with its content type, and charged once.
    const listed = await request('GET', '/v1/pdf?limit=100', { apiKey: key.apiKey });
    const types = (listed.body.data as { content_type: string }[]).map((record) => record.content_type).sort();
    expect(types).toEqual(['application/pdf', 'application/pdf', 'image/jpeg', 'image/png', 'image/webp']);
    expect(await quotaUsed(key)).toBe(listed.body.data.length);
  });
});
