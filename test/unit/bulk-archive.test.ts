/**
 * A bulk job's ZIP (lib/bulk/archive.ts), written by streaming into a real S3 API (s3rver) through
 * multipart uploads, then opened by real unzip implementations (Info-ZIP's `unzip`, Python's
 * zipfile): every entry is there under the right name, with the bytes it was given.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveEntryName, PREFETCH, uniqueName, writeArchive, type ArchiveEntry } from '#lib/bulk/archive.ts';
import { startTestS3, type TestS3 } from '../support/s3rver.ts';

const run = promisify(execFile);
const SMALL_PARTS = 64 * 1024;

let store: TestS3;
let workDir: string;

beforeAll(async () => {
  store = await startTestS3();
  workDir = await mkdtemp(join(tmpdir(), 'bulk-archive-'));
});
afterAll(async () => {
  await store?.close();
  await rm(workDir, { recursive: true, force: true });
});

/** The archive written to `key`, saved to a local file. */
async function saveArchive(key: string): Promise<string> {
  const path = join(workDir, `${key.replaceAll('/', '_')}.zip`);
  await writeFile(path, await store.read(key));
  return path;
}

/** Python's zipfile: each entry's name and bytes (hex), and its own integrity test. */
async function pythonEntries(path: string): Promise<Map<string, Buffer>> {
  const script = [
    'import sys, zipfile, json',
    'z = zipfile.ZipFile(sys.argv[1])',
    'bad = z.testzip()',
    'assert bad is None, bad',
    'print(json.dumps([[i.filename, z.read(i).hex()] for i in z.infolist()]))',
  ].join('\n');
  const { stdout } = await run('python3', ['-c', script, path], { maxBuffer: 256 * 1024 * 1024 });
  return new Map((JSON.parse(stdout) as [string, string][]).map(([name, hex]) => [name, Buffer.from(hex, 'hex')]));
}

/** PDF-like bytes: a header and random content, so a wrong offset or a mixed-up entry shows. */
const pdfBytes = (size: number) => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(size)]);

describe('writeArchive', () => {
  it('writes a ZIP that unzip and Python open, every entry with its bytes and its name', async () => {
    // Arrange: bodies of every kind, over several parts, names from filename or line number.
    const fromBytes = pdfBytes(200_000);
    const fromStream = pdfBytes(150_000);
    const fromS3 = pdfBytes(300_000);
    await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: 'retention/7d/key/pdf_a.pdf', Body: fromS3 }));
    const entries: ArchiveEntry[] = [
      { name: archiveEntryName(1, 'invoice-2026-001.pdf'), line: 1, body: fromBytes },
      { name: archiveEntryName(2), line: 2, body: Readable.from([fromStream.subarray(0, 1000), fromStream.subarray(1000)]) },
      { name: archiveEntryName(3, 'Rechnung März.pdf'), line: 3, body: { key: 'retention/7d/key/pdf_a.pdf' } },
    ];

    // Act
    const written = await writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job1/archive.zip', firstPartBytes: SMALL_PARTS }, entries);

    // Assert
    expect(written).toMatchObject({ entries: 3, missing: [], zip64: false });
    expect(written.parts).toBeGreaterThan(5);
    const path = await saveArchive('bulk/job1/archive.zip');
    const { stdout } = await run('unzip', ['-t', path]);
    expect(stdout).toMatch(/No errors detected/);
    const files = await pythonEntries(path);
    expect([...files.keys()]).toEqual(['invoice-2026-001.pdf', '000002.pdf', 'Rechnung März.pdf']);
    expect(files.get('invoice-2026-001.pdf')!.equals(fromBytes)).toBe(true);
    expect(files.get('000002.pdf')!.equals(fromStream)).toBe(true);
    expect(files.get('Rechnung März.pdf')!.equals(fromS3)).toBe(true);
  });

  it('opens the next PDFs while copying one, never more than PREFETCH at once', async () => {
    // Arrange: 40 PDFs in S3, read through a client that counts the GETs under way.
    const bodies = Array.from({ length: 40 }, (_, index) => pdfBytes(20_000 + index));
    for (const [index, body] of bodies.entries()) {
      await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: `retention/7d/key/many-${index}.pdf`, Body: body }));
    }
    let open = 0;
    let mostOpen = 0;
    const counting = Object.create(store.s3) as S3Client;
    counting.send = (async (command: { constructor: { name: string } }, options?: unknown) => {
      if (command.constructor.name !== 'GetObjectCommand') return store.s3.send(command as never, options as never);
      mostOpen = Math.max(mostOpen, ++open);
      const answer = (await store.s3.send(command as never, options as never)) as { Body: AsyncIterable<Uint8Array> };
      // Open until its body has been read to the end.
      const body = answer.Body;
      return {
        ...answer,
        Body: (async function* () {
          try {
            yield* body;
          } finally {
            open -= 1;
          }
        })(),
      };
    }) as S3Client['send'];

    // Act
    const written = await writeArchive(
      { s3: counting, bucketName: store.bucketName, key: 'bulk/job-prefetch/archive.zip', firstPartBytes: SMALL_PARTS },
      bodies.map((_, index) => ({ name: archiveEntryName(index + 1), line: index + 1, body: { key: `retention/7d/key/many-${index}.pdf` } })),
    );

    // Assert
    expect(written.entries).toBe(40);
    expect(mostOpen).toBeGreaterThan(1);
    expect(mostOpen).toBeLessThanOrEqual(PREFETCH);
    const files = await pythonEntries(await saveArchive('bulk/job-prefetch/archive.zip'));
    expect(bodies.every((body, index) => files.get(archiveEntryName(index + 1))!.equals(body))).toBe(true);
  });

  it('extracts with unzip into files named as given, with the time given', async () => {
    // Arrange
    const body = pdfBytes(1000);
    const modifiedAt = new Date('2026-03-14T15:09:26Z');

    // Act
    await writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-time/archive.zip' }, [{ name: 'a.pdf', body, modifiedAt }]);

    // Assert
    const path = await saveArchive('bulk/job-time/archive.zip');
    const into = await mkdtemp(join(workDir, 'x-'));
    await run('unzip', ['-q', path, '-d', into], { env: { ...process.env, TZ: 'UTC' } });
    expect(await readdir(into)).toEqual(['a.pdf']);
    expect((await readFile(join(into, 'a.pdf'))).equals(body)).toBe(true);
    const { stdout } = await run('zipinfo', ['-T', path], { env: { ...process.env, TZ: 'UTC' } });
    expect(stdout).toMatch(/20260314\.1509(26|25)/);
  });

  it('tells duplicate names apart by line number, whatever their case', async () => {
    // Arrange
    const entries: ArchiveEntry[] = [
      { name: 'invoice.pdf', line: 1, body: Buffer.from('one') },
      { name: 'INVOICE.pdf', line: 2, body: Buffer.from('two') },
      { name: 'invoice.pdf', line: 3, body: Buffer.from('three') },
    ];

    // Act
    await writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-dup/archive.zip' }, entries);

    // Assert
    const files = await pythonEntries(await saveArchive('bulk/job-dup/archive.zip'));
    expect([...files.entries()].map(([name, bytes]) => [name, bytes.toString()])).toEqual([
      ['invoice.pdf', 'one'],
      ['INVOICE (line 2).pdf', 'two'],
      ['invoice (line 3).pdf', 'three'],
    ]);
  });

  it('leaves out a PDF whose object is gone, and says which', async () => {
    // Act
    const written = await writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-gone/archive.zip' }, [
      { name: '000001.pdf', line: 1, body: Buffer.from('kept') },
      { name: '000002.pdf', line: 2, body: { key: 'retention/7d/key/deleted.pdf' } },
    ]);

    // Assert
    expect(written).toMatchObject({ entries: 1, missing: [{ name: '000002.pdf', line: 2 }] });
    expect([...(await pythonEntries(await saveArchive('bulk/job-gone/archive.zip'))).keys()]).toEqual(['000001.pdf']);
  });

  it('uses ZIP64 past 65,535 entries, and unzip and Python still read every one', { timeout: 120_000 }, async () => {
    // Arrange: 70,000 tiny entries, made as they are read.
    const count = 70_000;
    function* entries(): Generator<ArchiveEntry> {
      for (let line = 1; line <= count; line++) yield { name: archiveEntryName(line), line, body: Buffer.from(`pdf ${line}`) };
    }

    // Act
    const written = await writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-many/archive.zip', firstPartBytes: 1024 * 1024 }, entries());

    // Assert
    expect(written).toMatchObject({ entries: count, zip64: true });
    const path = await saveArchive('bulk/job-many/archive.zip');
    const { stdout } = await run('unzip', ['-t', '-q', path], { maxBuffer: 64 * 1024 * 1024 });
    expect(stdout).toMatch(/No errors detected/);
    const files = await pythonEntries(path);
    expect(files.size).toBe(count);
    expect(files.get('000001.pdf')!.toString()).toBe('pdf 1');
    expect(files.get('070000.pdf')!.toString()).toBe('pdf 70000');
  });

  // s3rver neither lists nor aborts multipart uploads: that they are aborted is S3's side (and the
  // bucket's abort-incomplete-uploads rule), not testable here; that no object appears is.
  it('leaves no object behind when an entry fails', async () => {
    // Arrange: the second entry's stream breaks after the first part went up.
    async function* breaking() {
      yield randomBytes(200_000);
      throw new Error('the PDF could not be read');
    }

    // Act
    const writing = writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-broken/archive.zip', firstPartBytes: SMALL_PARTS }, [
      { name: 'a.pdf', body: randomBytes(100_000) },
      { name: 'b.pdf', body: breaking() },
    ]);

    // Assert
    await expect(writing).rejects.toThrow('the PDF could not be read');
    await expect(store.read('bulk/job-broken/archive.zip')).rejects.toMatchObject({ name: 'NoSuchKey' });
  });

  it('refuses a name that is a path', async () => {
    // Act
    const writing = writeArchive({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/job-path/archive.zip' }, [{ name: '../evil.pdf', body: Buffer.from('x') }]);

    // Assert
    await expect(writing).rejects.toThrow(/is a path/);
  });
});

/**
 * An S3 stand-in for archives too large for s3rver in a unit test: multipart parts written into a
 * local file at their offsets, all-zero parts left as holes (a sparse file), so a 4 GiB archive
 * costs seconds and no disk. Only what MultipartWriter sends is understood.
 */
function sparseFileS3(path: string) {
  let offset = 0;
  const file = openSync(path, 'w');
  const zeros = Buffer.alloc(8 * 1024 * 1024);
  const write = (body: Uint8Array) => {
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    for (let at = 0; at < bytes.length; at += zeros.length) {
      const piece = bytes.subarray(at, at + zeros.length);
      if (!piece.equals(zeros.subarray(0, piece.length))) writeSync(file, piece, 0, piece.length, offset + at);
    }
    offset += bytes.length;
  };
  const send = async (command: { constructor: { name: string }; input: { Body?: Uint8Array } }) => {
    switch (command.constructor.name) {
      case 'CreateMultipartUploadCommand':
        return { UploadId: 'sparse' };
      case 'UploadPartCommand':
        write(command.input.Body!);
        return { ETag: '"part"' };
      case 'PutObjectCommand':
        write(command.input.Body!);
        ftruncateSync(file, offset);
        closeSync(file);
        return {};
      case 'CompleteMultipartUploadCommand':
        ftruncateSync(file, offset);
        closeSync(file);
        return {};
      default:
        throw new Error(`not expected: ${command.constructor.name}`);
    }
  };
  return { send } as unknown as S3Client;
}

describe('writeArchive past 4 GiB', () => {
  it('writes an entry of 4 GiB and the entries after it in ZIP64, read back by Python and unzip', { timeout: 300_000 }, async () => {
    // Arrange: an entry of 4 GiB + 64 KiB of zeros (declared), then a small one that starts past 4 GiB.
    const path = join(workDir, 'huge.zip');
    const chunk = Buffer.alloc(64 * 1024);
    const hugeSize = 2 ** 32 + chunk.length;
    async function* huge() {
      for (let sent = 0; sent < hugeSize; sent += chunk.length) yield chunk;
    }
    const small = pdfBytes(1000);

    // Act
    const written = await writeArchive({ s3: sparseFileS3(path), bucketName: 'sparse', key: 'huge.zip', firstPartBytes: 64 * 1024 * 1024 }, [
      { name: 'huge.pdf', body: huge(), size: hugeSize },
      { name: 'after.pdf', body: small },
    ]);

    // Assert: the central directory (read without the 4 GiB) says what was written, and the entry
    // past 4 GiB reads back by its ZIP64 offset.
    expect(written).toMatchObject({ entries: 2, zip64: true });
    expect(written.bytes).toBeGreaterThan(hugeSize);
    let crc = 0;
    for (let sent = 0; sent < hugeSize; sent += chunk.length) crc = crc32(chunk, crc);
    const script = [
      'import sys, zipfile, json',
      'z = zipfile.ZipFile(sys.argv[1])',
      'info = {i.filename: [i.file_size, i.CRC, i.header_offset] for i in z.infolist()}',
      'print(json.dumps({"info": info, "after": z.read("after.pdf").hex()}))',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script, path]);
    const read = JSON.parse(stdout) as { info: Record<string, [number, number, number]>; after: string };
    expect(read.info['huge.pdf']).toEqual([hugeSize, crc, 0]);
    expect(read.info['after.pdf']![2]).toBeGreaterThan(2 ** 32);
    expect(Buffer.from(read.after, 'hex').equals(small)).toBe(true);
    const listed = await run('unzip', ['-l', path]);
    expect(listed.stdout).toMatch(new RegExp(`${hugeSize}\\s+\\S+\\s+\\S+\\s+huge\\.pdf`));
    const tested = await run('unzip', ['-t', path, 'after.pdf']);
    expect(tested.stdout).toMatch(/No errors detected/);
  });
});

describe('uniqueName', () => {
  it('falls back to a copy number when the line-numbered name is taken too', () => {
    const taken = new Set<string>();
    expect(uniqueName('a.pdf', 7, taken)).toBe('a.pdf');
    expect(uniqueName('a (line 7).pdf', undefined, taken)).toBe('a (line 7).pdf');
    expect(uniqueName('a.pdf', 7, taken)).toBe('a (2).pdf');
    expect(uniqueName('a.pdf', undefined, taken)).toBe('a (3).pdf');
  });
});
