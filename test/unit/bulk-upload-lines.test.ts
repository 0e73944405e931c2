/**
 * Reading a bulk job's JSON Lines upload (lib/bulk/upload-lines.ts) as it streams: one result per
 * line, numbered as an editor numbers lines, each an item or that line's error, with the byte range
 * that reads the line back; the whole upload refused only for its size, its line count or having
 * no line; and memory that does not grow with the upload.
 */
import { describe, expect, it } from 'vitest';
import { checkInlineItems, readUploadLines, UploadRefusedError, type UploadLine } from '#lib/bulk/upload-lines.ts';

const item = (n: number) => JSON.stringify({ html: `<h1>Invoice ${n}</h1>`, options: { format: 'A4' }, metadata: { reference_id: `order-${n}` } });

async function readAll(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options?: Parameters<typeof readUploadLines<Record<string, unknown>>>[1]): Promise<UploadLine[]> {
  const lines: UploadLine[] = [];
  for await (const line of readUploadLines(chunks, options)) lines.push(line);
  return lines;
}

/** The text of `upload` between a line's start and end: what a worker's ranged GET reads. */
const textOf = (upload: Buffer, line: UploadLine) => upload.subarray(line.start, line.end).toString('utf8');

/** Every single-byte split of the upload into chunks: line breaks, \r\n and the BOM land on a chunk boundary somewhere. */
function* everySplit(upload: Buffer): Generator<Buffer[]> {
  for (let at = 1; at < upload.length; at++) yield [upload.subarray(0, at), upload.subarray(at)];
  yield [...upload].map((byte) => Buffer.from([byte]));
}

describe('readUploadLines', () => {
  it('yields each line as an item, numbered from 1, with the byte range that reads it back', async () => {
    // Arrange
    const upload = Buffer.from(`${item(1)}\n${item(2)}\n${item(3)}\n`);

    // Act
    const lines = await readAll([upload]);

    // Assert
    expect(lines.map((line) => line.line)).toEqual([1, 2, 3]);
    expect(lines.map((line) => line.error)).toEqual([undefined, undefined, undefined]);
    expect(lines.map((line) => line.item)).toEqual([1, 2, 3].map((n) => JSON.parse(item(n))));
    expect(lines.map((line) => textOf(upload, line))).toEqual([item(1), item(2), item(3)]);
  });

  it('reads \\r\\n line ends, a BOM and a last line without a line break, however the bytes are split', async () => {
    // Arrange: a Windows editor's file.
    const upload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${item(1)}\r\n${item(2)}\r\n${item(3)}`)]);

    for (const chunks of everySplit(upload)) {
      // Act
      const lines = await readAll(chunks);

      // Assert
      expect(lines.map((line) => [line.line, line.error, textOf(upload, line)])).toEqual([
        [1, undefined, item(1)],
        [2, undefined, item(2)],
        [3, undefined, item(3)],
      ]);
    }
  });

  it('reads a part of the upload (a worker’s chunk) with the lines’ own numbers and byte ranges', async () => {
    // Arrange: a BOM file; lines 2 and 3 located by a first read, then read back by their range.
    const upload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${item(1)}\r\n${item(2)}\r\n${item(3)}\r\n${item(4)}\r\n`)]);
    const whole = await readAll([upload]);
    const start = whole[1]!.start;
    const end = whole[2]!.end;

    // Act
    const part = await readAll([upload.subarray(start, end)], { range: { start, firstLine: 2 } });

    // Assert
    expect(part).toEqual([whole[1], whole[2]]);
  });

  it('takes a file too short to hold a whole BOM as it is', async () => {
    // Act
    const lines = await readAll([Buffer.from([0xef, 0xbb])]);

    // Assert
    expect(lines).toEqual([{ line: 1, start: 0, end: 2, error: { code: 'INVALID_OPTIONS', message: 'The line is not valid UTF-8 text' } }]);
  });

  it('reports a blank line as invalid, by its number, and does not count a final line break as a line', async () => {
    // Arrange
    const upload = Buffer.from(`${item(1)}\n\n   \n${item(4)}\n`);

    // Act
    const lines = await readAll([upload]);

    // Assert
    expect(lines.map((line) => [line.line, line.error?.code])).toEqual([
      [1, undefined],
      [2, 'INVALID_OPTIONS'],
      [3, 'INVALID_OPTIONS'],
      [4, undefined],
    ]);
    expect(lines[1]!.error!.message).toMatch(/blank/);
  });

  it('names what is wrong with a line as a batch names an item’s problem', async () => {
    // Arrange
    const upload = [
      '{"html": "<p>ok</p>"',
      '"just a string"',
      '{"html": "<p>x</p>", "options": {"format": "A9"}}',
      '{"html": "<p>x</p>", "options": {"paper": "A4"}}',
      '{"html": "<p>x</p>", "url": "https://example.com"}',
      '{}',
      '{"html": ""}',
      '{"html": "<p>x</p>", "options": {"http_headers": {"X-A": "1"}}}',
      '{"html": "<p>x</p>", "colour": "red"}',
      '{"url": "https://example.com", "options": {"http_headers": {"X-A": "1"}}, "metadata": {"filename": "a"}}',
    ].join('\n');

    // Act
    const lines = await readAll([Buffer.from(upload)]);

    // Assert
    expect(lines.map((line) => line.error?.code)).toEqual([
      'INVALID_OPTIONS',
      'INVALID_HTML',
      'INVALID_OPTIONS',
      'INVALID_OPTIONS',
      'INVALID_OPTIONS',
      'INVALID_HTML',
      'INVALID_HTML',
      'INVALID_OPTIONS',
      'INVALID_OPTIONS',
      undefined,
    ]);
    expect(lines[0]!.error!.message).toMatch(/not valid JSON/);
    expect(lines[2]!.error!.message).toMatch(/format/);
    expect(lines[3]!.error!.message).toMatch(/paper/);
    expect(lines[7]!.error!.message).toMatch(/http_headers applies to url documents only/);
    expect(lines[8]!.error!.message).toMatch(/colour/);
  });

  it('reports a line longer than the limit as that line’s error and goes on with the next', async () => {
    // Arrange: the limit is 100 bytes; line 2 is 1,000, line 3 exactly 100 with \r\n.
    const long = JSON.stringify({ html: 'x'.repeat(990) });
    const exact = JSON.stringify({ html: `<p>${'y'.repeat(100 - 18)}</p>` });
    expect(Buffer.byteLength(exact)).toBe(100);
    const upload = Buffer.from(`${item(1)}\n${long}\n${exact}\r\n${item(4)}`);

    for (const chunks of [[upload], [...upload].map((byte) => Buffer.from([byte]))]) {
      // Act
      const lines = await readAll(chunks, { limits: { maxLineBytes: 100 } });

      // Assert
      expect(lines.map((line) => [line.line, line.error?.code])).toEqual([
        [1, undefined],
        [2, 'INVALID_OPTIONS'],
        [3, undefined],
        [4, undefined],
      ]);
      expect(lines[1]!.error!.message).toBe('The line is longer than 100 bytes, the most one line may hold');
      expect(textOf(upload, lines[1]!)).toBe(long);
      expect(textOf(upload, lines[2]!)).toBe(exact);
    }
  });

  it('reports a line that is not UTF-8 rather than rendering replacement characters', async () => {
    // Arrange: "é" in Latin-1.
    const upload = Buffer.concat([Buffer.from('{"html": "<p>caf'), Buffer.from([0xe9]), Buffer.from('</p>"}\n'), Buffer.from(`${item(2)}\n`)]);

    // Act
    const lines = await readAll([upload]);

    // Assert
    expect(lines.map((line) => [line.line, line.error?.message])).toEqual([
      [1, 'The line is not valid UTF-8 text'],
      [2, undefined],
    ]);
  });

  it('refuses an upload over the size limit as soon as it is passed', async () => {
    // Arrange: 10 lines of ~60 bytes, a limit of 300 bytes.
    const upload = Buffer.from(Array.from({ length: 10 }, (_, n) => `${item(n + 1)}\n`).join(''));
    const seen: number[] = [];

    // Act
    const reading = (async () => {
      for await (const line of readUploadLines(everyByte(upload), { limits: { maxUploadBytes: 300 } })) seen.push(line.line);
    })();

    // Assert
    await expect(reading).rejects.toMatchObject({ name: 'UploadRefusedError', reason: 'too_large' });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(10);
  });

  it('refuses an upload with more lines than a job takes, and one with none', async () => {
    // Arrange
    const three = Buffer.from(`${item(1)}\n${item(2)}\n${item(3)}\n`);

    // Act, Assert
    await expect(readAll([three], { limits: { maxItems: 2 } })).rejects.toMatchObject({ reason: 'too_many_items', message: expect.stringMatching(/more than 2 lines/) });
    expect(await readAll([three], { limits: { maxItems: 3 } })).toHaveLength(3);
    await expect(readAll([])).rejects.toBeInstanceOf(UploadRefusedError);
    await expect(readAll([Buffer.from([0xef, 0xbb, 0xbf])])).rejects.toMatchObject({ reason: 'empty' });
  });

  it('yields a line as soon as it has arrived, before the upload ends', async () => {
    // Arrange: a stream that sends line 1, then waits until line 1 was read before sending line 2.
    let lineOneRead!: () => void;
    const readLineOne = new Promise<void>((resolve) => (lineOneRead = resolve));
    async function* slowUpload() {
      yield Buffer.from(`${item(1)}\n`);
      await readLineOne;
      yield Buffer.from(`${item(2)}\n`);
    }

    // Act
    const lines: number[] = [];
    for await (const line of readUploadLines(slowUpload())) {
      lines.push(line.line);
      if (line.line === 1) lineOneRead();
    }

    // Assert: had the reader waited for the end, this would never have finished.
    expect(lines).toEqual([1, 2]);
  });

  it('keeps memory flat over a 50 MB upload, and never holds a line longer than the limit', { timeout: 60_000 }, async () => {
    // Arrange: the same 64 KiB of whole lines sent 800 times (the input itself allocates nothing),
    // then one line of 50 MB. Were lines kept, 50 MB of copies would be alive at the end. Lines are
    // only framed here (the item check is not what this measures, and takes longer).
    const line = `${item(1)}\n`;
    const chunk = Buffer.from(line.repeat(Math.floor(65_536 / line.length)));
    const filler = Buffer.alloc(65_536, 'x');
    const baseline = process.memoryUsage().arrayBuffers;
    let peak = 0;
    async function* upload() {
      for (let n = 0; n < 800; n++) yield chunk;
      yield Buffer.from('{"html": "');
      for (let n = 0; n < 800; n++) {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
        yield filler;
      }
      yield Buffer.from(`"}\n${item(2)}\n`);
    }

    // Act
    let count = 0;
    let last: UploadLine | undefined;
    for await (const read of readUploadLines(upload(), { check: (text) => ({ item: { bytes: text.length } }) })) {
      count += 1;
      last = read;
      if (count % 1000 === 0) peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
    }

    // Assert: about 104 MB went through; the 5 MiB line limit plus a chunk bounds what was held.
    expect(count).toBe(800 * Math.floor(65_536 / line.length) + 2);
    expect(last!.error).toBeUndefined();
    expect(peak).toBeLessThan(20 * 1024 * 1024);
  });
});

describe('checkInlineItems', () => {
  it('checks inline items as upload lines, item i as line i + 1', () => {
    // Act
    const lines = checkInlineItems([{ html: '<p>a</p>' }, { html: '<p>b</p>', options: { format: 'A9' } }, 'no']);

    // Assert
    expect(lines.map((line) => [line.line, line.error?.code])).toEqual([
      [1, undefined],
      [2, 'INVALID_OPTIONS'],
      [3, 'INVALID_HTML'],
    ]);
  });
});

function* everyByte(upload: Buffer): Generator<Buffer> {
  for (let at = 0; at < upload.length; at += 7) yield upload.subarray(at, at + 7);
}
