/**
 * The pure parts of pictures, Markdown and thumbnails (shared/spec/beyond.md "Images and Markdown"):
 * the `image` options' defaults and refusals, Markdown into HTML, and the thumbnail's link id.
 * The routes themselves are checked through the stack in test/integration/images-markdown.test.ts.
 */
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { imageSchema, MAX_IMAGE_SIDE_PX, resolveImageOptions } from '#lib/render/image-options.ts';
import { inspectHtml } from '#lib/render/html.ts';
import { describeIssue } from '#lib/render/options.ts';
import { markdownCssProblem, markdownToHtml } from '#lib/render/markdown.ts';
import { fileLinkId, parseFileLinkId } from '#lib/storage/links.ts';
import { documentIdFor, outputOf } from '#lib/documents/source.ts';
import { archiveEntryName } from '#lib/bulk/archive.ts';
import { downloadName, extensionOf, type PdfRecord } from '#lib/storage/pdfs.ts';
import { manifestLine } from '#lib/bulk/bulk-completion.ts';
import { manifestExtension, Names } from '../../packages/cli/src/bulk.ts';
import type { ManifestLine as CliManifestLine } from '../../packages/client/src/index.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { pictureFirstPage } from '#lib/render/thumbnail.ts';

const resolve = (image: unknown) => {
  const parsed = imageSchema.safeParse(image);
  if (!parsed.success) return { error: describeIssue(parsed.error) };
  return resolveImageOptions(parsed.data);
};

describe('image options', () => {
  it('default to a png of the 800 x 600 window PDFs are laid out in, at scale 1', () => {
    expect(resolve({})).toEqual({ format: 'png', viewport: { width: 800, height: 600, deviceScaleFactor: 1 }, fullPage: false, omitBackground: false });
  });

  it('give jpeg and webp a quality of 90 unless asked', () => {
    expect(resolve({ format: 'jpeg' })).toMatchObject({ format: 'jpeg', quality: 90 });
    expect(resolve({ format: 'webp', quality: 40 })).toMatchObject({ format: 'webp', quality: 40 });
  });

  it.each([
    [{ format: 'gif' }, /image.format must be one of png, jpeg, webp/],
    [{ format: 'png', quality: 80 }, /quality applies to jpeg and webp only/],
    [{ format: 'jpeg', omit_background: true }, /jpeg has no transparency/],
    [{ full_page: true, clip: { x: 0, y: 0, width: 10, height: 10 } }, /cannot be combined/],
    [{ width: 0 }, /image.width must be a whole number of pixels from 1/],
    [{ width: 1.5 }, /image.width must be a whole number/],
    [{ device_scale_factor: 5 }, /device_scale_factor must be a number from 0.1 to 4/],
    [{ clip: { x: 0, y: 0, width: 10 } }, /image.clip.height/],
    [{ depth: 8 }, /Unknown field: depth/],
  ])('refuse %j by name', (image, message) => {
    const resolved = resolve(image);
    expect('error' in resolved ? resolved.error : '').toMatch(message);
  });

  it('refuse a picture past the largest side once scaled, naming its size', () => {
    const resolved = resolve({ width: 5000, height: 100, device_scale_factor: 4 });
    expect('error' in resolved && resolved.error).toMatch(new RegExp(`20000 x 400 pixels; each side may be at most ${MAX_IMAGE_SIDE_PX}`));
  });

  it('measure a clip, not the viewport, against the limits', () => {
    expect(resolve({ width: 16_000, height: 16_000, clip: { x: 0, y: 0, width: 100, height: 100 } })).toMatchObject({ clip: { width: 100 } });
  });
});

describe('markdown', () => {
  const readme = [
    '# Title',
    '',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
    '',
    '- [x] done',
    '- [ ] open',
    '',
    '~~old~~',
    '',
    '```ts',
    'const x: number = 1;',
    '```',
  ].join('\n');

  it('makes GFM tables, task lists, strikethrough and highlighted code', async () => {
    // Act
    const html = await markdownToHtml(readme);

    // Assess
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toMatch(/<table>[\s\S]*<th>a<\/th>[\s\S]*<td>2<\/td>/);
    expect(html).toMatch(/<input type="checkbox"[^>]*checked[^>]*disabled[^>]*><label[^>]*> done<\/label>/);
    expect(html).toMatch(/<input type="checkbox" class="task-list-item-checkbox" id="task-item-1" disabled="disabled">/);
    expect(html).toContain('<s>old</s>');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
  });

  it('writes raw HTML out as text and drops javascript: links, leaving a document with no script', async () => {
    // Act
    const html = await markdownToHtml('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">\n\n[x](javascript:alert(1)) <a href="javascript:alert(1)">y</a>');

    // Assess
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).not.toMatch(/href="javascript:/i);
    expect(inspectHtml(html)).toMatchObject({ scripted: false });
  });

  it('uses the default stylesheet unless css replaces it whole', async () => {
    expect(await markdownToHtml('x')).toContain('.markdown-body');
    const styled = await markdownToHtml('x', 'p { color: red }');
    expect(styled).toContain('<style>p { color: red }</style>');
    expect(styled).not.toContain('.markdown-body {');
  });

  it('refuses css that would close its style element', () => {
    expect(markdownCssProblem('p{}</STYLE><script>alert(1)</script>')).toMatch(/must not contain "<\/style"/);
    expect(markdownCssProblem('p { content: "</p>" }')).toBeUndefined();
  });
});

describe('ids and links of pictures and thumbnails', () => {
  it('a thumbnail link names its PDF and part, and a plain id names the file', () => {
    expect(parseFileLinkId(fileLinkId('pdf_abc', 'thumbnail'))).toEqual({ id: 'pdf_abc', part: 'thumbnail' });
    expect(parseFileLinkId(fileLinkId('img_abc', 'file'))).toEqual({ id: 'img_abc', part: 'file' });
  });

  it('a derived id is a picture’s by its prefix only, so a retry finds what it made', () => {
    expect(documentIdFor('image', 'pdf_0123456789abcdefghijKLMN')).toBe('img_0123456789abcdefghijKLMN');
    expect(documentIdFor('pdf', 'pdf_0123456789abcdefghijKLMN')).toBe('pdf_0123456789abcdefghijKLMN');
    expect([outputOf({ output: 'image' }), outputOf({}), outputOf(null), outputOf({ output: 'gif' })]).toEqual(['image', 'pdf', 'pdf', 'pdf']);
  });
});

describe('file names of pictures', () => {
  it('a picture downloads and is archived under its own extension', () => {
    const record = { id: 'img_abc', contentType: 'image/jpeg' } as PdfRecord;
    expect(downloadName(record)).toBe('img_abc.jpg');
    expect(downloadName({ id: 'pdf_abc' } as PdfRecord)).toBe('pdf_abc.pdf');
    expect(archiveEntryName(7, undefined, extensionOf('image/webp'))).toBe('000007.webp');
    expect(archiveEntryName(7)).toBe('000007.pdf');
  });

  it('a bulk manifest line says what its line made, and the CLI names the file by it (.pdf when a manifest does not say)', () => {
    // The line's download link is signed with the deployment's secret.
    vi.stubEnv('LINK_SIGNING_SECRET', 'unit-test-secret');
    onTestFinished(() => {
      vi.unstubAllEnvs();
    });
    const stored = (id: string, contentType?: string) =>
      ({ id, pages: 1, size: 10, expiresAt: '2030-01-01T00:00:00.000Z', ...(contentType && { contentType }) }) as PdfRecord;
    const picture = manifestLine({ line: 2, success: true, record: stored('img_abc', 'image/webp') }, 'https://api.example.com');
    const pdf = manifestLine({ line: 3, success: true, record: stored('pdf_abc') }, 'https://api.example.com');
    const failed = manifestLine({ line: 4, success: false, code: 'RENDER_TIMEOUT', message: 'slow', counted: false }, 'https://api.example.com');
    expect(picture).toMatchObject({ line: 2, success: true, pdf_id: 'img_abc', content_type: 'image/webp' });
    expect(pdf).toMatchObject({ line: 3, success: true, pdf_id: 'pdf_abc', content_type: 'application/pdf' });
    expect(failed).not.toHaveProperty('content_type');

    // The CLI reads the manifest back as JSON: what it names each line's file.
    const read = (line: object) => JSON.parse(JSON.stringify(line)) as CliManifestLine;
    const names = new Names(4);
    expect(names.next(1, undefined, manifestExtension(read({ line: 1, success: true, pdf_id: 'pdf_old', download_url: 'u', pages: 1, size_bytes: 1, metadata: {} })))).toBe('000001.pdf');
    expect(names.next(2, 'card', manifestExtension(read(picture)))).toBe('card.webp');
    expect(names.next(3, undefined, manifestExtension(read(pdf)))).toBe('000003.pdf');
    // A second line asking the same name is told apart by its number; a jpeg keeps .jpeg or .jpg as one.
    expect(names.next(4, 'card.webp', 'webp')).toBe('card (line 4).webp');
    expect(new Names(1).next(1, 'photo.jpeg', 'jpg')).toBe('photo.jpg');
  });
});

describe('a thumbnail’s time', () => {
  it('is what the PDF left of the render time limit: with nothing left it fails RENDER_TIMEOUT, naming the limit both shared', async () => {
    const drawing = pictureFirstPage(new Uint8Array(), { width: 300, format: 'png' }, { timeoutMs: 5_000, workspaces: { prepared: 0 } }, 0);
    await expect(drawing).rejects.toBeInstanceOf(DocumentError);
    await expect(drawing).rejects.toMatchObject({ code: 'RENDER_TIMEOUT', message: expect.stringMatching(/the PDF and drawing its thumbnail took longer than the limit of 5000 ms/) });
  });
});
