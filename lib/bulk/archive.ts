/**
 * A bulk job's ZIP of all its PDFs (`archive: true`, shared/spec/beyond.md "Bulk jobs"), written by
 * streaming into S3 (multipart.ts): each PDF is read from S3 (or any stream) and copied into the
 * archive as it arrives, so memory stays at one part whatever the job's size.
 *
 * The ZIP container is written here by hand (PKWARE APPNOTE 6.3.10): the project depends on no ZIP
 * library (only the client and CLI run outside Lambda, and a library would be one more thing in the
 * render path's bundle), and what a streamed archive of PDFs needs is small and standard:
 * - entries are stored, not deflated: PDFs are compressed inside already (Flate streams, compressed
 *   fonts and images), so deflating them again costs CPU for a few percent, and a stored entry's
 *   bytes are the PDF's bytes;
 * - each entry's CRC-32 and size follow its data in a data descriptor (general purpose bit 3), as
 *   they are known only once the PDF has streamed through; readers take them from the central
 *   directory at the end, as every unzip tool does (unzip, Python's zipfile, Windows Explorer,
 *   macOS Archive Utility);
 * - names are UTF-8 (bit 11) and each entry carries its modification time in UTC (the "UT" extra
 *   field, 0x5455) beside the DOS date and time (which have no time zone: UTC is written there too);
 * - ZIP64 where needed: the ZIP64 end of central directory record and locator once the archive
 *   has more than 65,535 entries or its central directory starts past 4 GiB, an entry's offset past
 *   4 GiB in its central directory record, and an entry declared as 4 GiB or more (its local header
 *   and data descriptor in ZIP64 form).
 *
 * The central directory, written after the last entry, is the one thing kept until the end: about
 * 60 bytes plus the name per entry (7 MB for 100,000 PDFs), held in memory up to 1 MiB and beyond that
 * spooled to a temporary file, so it is not what bounds a job's size.
 */
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import { MultipartWriter, type MultipartTarget, type WrittenObject } from './multipart.ts';

export const ARCHIVE_CONTENT_TYPE = 'application/zip';

/** One PDF of the archive. */
export interface ArchiveEntry {
  /** Its name in the archive (archiveEntryName); a name already taken is made unique (see uniqueName). */
  readonly name: string;
  /** The input line it came from: what a duplicate name is told apart by. */
  readonly line?: number;
  /** Its bytes: an object in the target's bucket, a stream, or bytes. */
  readonly body: { readonly key: string } | AsyncIterable<Uint8Array> | Uint8Array;
  /** Its size, when known before it streams (an S3 object's is read from S3): 4 GiB or more needs ZIP64 up front. */
  readonly size?: number;
  /** Shown as the file's modification time; the writing time by default. */
  readonly modifiedAt?: Date;
}

export interface WrittenArchive extends WrittenObject {
  /** Entries written. */
  readonly entries: number;
  /** Entries left out because their S3 object no longer exists (a PDF deleted while the job ran), by line or name. */
  readonly missing: readonly { readonly name: string; readonly line?: number }[];
  readonly zip64: boolean;
}

/**
 * The file name of a bulk job's PDF (or picture, with its own `extension`) in its archive: its
 * `filename` option, or its line number (`000123.pdf`, `000124.png`).
 */
export function archiveEntryName(line: number, filename?: string, extension = 'pdf'): string {
  return filename ?? `${String(line).padStart(6, '0')}.${extension}`;
}

const UINT16_MAX = 0xffff;
const UINT32_MAX = 0xffffffff;
/** "made by" Unix, ZIP 4.5 (ZIP64); "needed" 2.0 (stored, descriptor) or 4.5 (ZIP64). */
const VERSION_MADE_BY = (3 << 8) | 45;
const VERSION_NEEDED = 20;
const VERSION_NEEDED_ZIP64 = 45;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
const METHOD_STORED = 0;
/** A regular file, rw-r--r--, as Unix unzip sets it. */
const EXTERNAL_ATTRIBUTES = (0o100644 << 16) >>> 0;
/** Central directory records kept in memory before they are spooled to a file. */
const SPOOL_MEMORY_BYTES = 1024 * 1024;

/** DOS date and time (2-second resolution, years 1980 to 2107), from the UTC fields. */
function dosDateTime(date: Date): { time: number; date: number } {
  const year = Math.min(Math.max(date.getUTCFullYear(), 1980), 2107);
  return {
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

/** The "UT" extended timestamp: modification time in Unix seconds (clamped to what 32 bits hold). */
function timestampExtra(date: Date): Buffer {
  const extra = Buffer.alloc(9);
  extra.writeUInt16LE(0x5455, 0);
  extra.writeUInt16LE(5, 2);
  extra.writeUInt8(1, 4);
  extra.writeUInt32LE(Math.min(Math.max(Math.floor(date.getTime() / 1000), 0), UINT32_MAX), 5);
  return extra;
}

/** ZIP64 extended information: the given 8-byte values, in APPNOTE's order. */
function zip64Extra(values: readonly bigint[]): Buffer {
  const extra = Buffer.alloc(4 + 8 * values.length);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(8 * values.length, 2);
  values.forEach((value, index) => extra.writeBigUInt64LE(value, 4 + 8 * index));
  return extra;
}

/**
 * `name` unless a name already in the archive is the same to a file system (compared without case,
 * Unicode-normalized, as macOS and Windows compare them): then `<stem> (line N).<ext>`, telling it
 * apart by its input line, or `<stem> (2).<ext>`, `(3)`… without one or if that too is taken.
 */
export function uniqueName(name: string, line: number | undefined, taken: Set<string>): string {
  const fold = (candidate: string) => candidate.normalize('NFC').toLowerCase();
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const candidates = function* () {
    yield name;
    if (line !== undefined) yield `${stem} (line ${line})${extension}`;
    for (let copy = 2; ; copy++) yield `${stem} (${copy})${extension}`;
  };
  for (const candidate of candidates()) {
    if (!taken.has(fold(candidate))) {
      taken.add(fold(candidate));
      return candidate;
    }
  }
  throw new Error('unreachable');
}

/** Why `name` cannot be an entry's name (it would be written outside the folder it is unzipped into), or undefined. */
function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'an archive entry needs a name';
  if (/[/\\]/.test(name) || name === '.' || name === '..') return `archive entry name ${JSON.stringify(name)} is a path, not a file name`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return `archive entry name ${JSON.stringify(name)} has control characters`;
  return undefined;
}

/** Central directory records: in memory up to SPOOL_MEMORY_BYTES, then appended to a temporary file. */
class CentralDirectorySpool {
  #memory: Buffer[] = [];
  #memoryBytes = 0;
  #file: { path: string; handle: FileHandle } | undefined;
  bytes = 0;

  async append(record: Buffer): Promise<void> {
    this.#memory.push(record);
    this.#memoryBytes += record.byteLength;
    this.bytes += record.byteLength;
    if (this.#memoryBytes >= SPOOL_MEMORY_BYTES) await this.#spill();
  }

  async #spill(): Promise<void> {
    if (!this.#file) {
      const path = join(tmpdir(), `archive-cd-${randomBytes(8).toString('hex')}`);
      this.#file = { path, handle: await open(path, 'w+', 0o600) };
    }
    const chunk = Buffer.concat(this.#memory, this.#memoryBytes);
    this.#memory = [];
    this.#memoryBytes = 0;
    await this.#file.handle.appendFile(chunk);
  }

  /** The records in order, a megabyte at a time. */
  async *read(): AsyncGenerator<Uint8Array> {
    if (this.#file) {
      await this.#spill();
      const chunk = Buffer.allocUnsafe(SPOOL_MEMORY_BYTES);
      for (let position = 0; position < this.bytes; ) {
        const { bytesRead } = await this.#file.handle.read(chunk, 0, chunk.byteLength, position);
        if (bytesRead === 0) throw new Error('the central directory spool ended early');
        yield chunk.subarray(0, bytesRead);
        position += bytesRead;
      }
      return;
    }
    yield* this.#memory;
  }

  async dispose(): Promise<void> {
    this.#memory = [];
    if (!this.#file) return;
    const { path, handle } = this.#file;
    this.#file = undefined;
    await handle.close().catch(() => undefined);
    await rm(path, { force: true });
  }
}

/**
 * S3 objects opened ahead of the one being copied: each GET costs a round trip (tens of
 * milliseconds) before its first byte, which, one PDF after the other, would bound an archive to a
 * few dozen PDFs a second (100,000 PDFs: most of an hour). Opened ahead, their first bytes wait in
 * the socket (a response not read is paused at its stream's high-water mark, tens of KB each), so
 * memory still holds one part, and the copy runs at the network's speed.
 */
export const PREFETCH = 16;

type Opened = { chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>; size?: number } | undefined;

/** The entries, each with its body being opened, up to `depth` ahead of the one taken. */
class Lookahead {
  readonly #iterator: AsyncIterator<ArchiveEntry> | Iterator<ArchiveEntry>;
  readonly #depth: number;
  readonly #open: (entry: ArchiveEntry) => Promise<Opened>;
  readonly #queue: { entry: ArchiveEntry; opened: Promise<Opened> }[] = [];
  #done = false;

  constructor(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, depth: number, open: (entry: ArchiveEntry) => Promise<Opened>) {
    this.#iterator = Symbol.asyncIterator in entries ? entries[Symbol.asyncIterator]() : entries[Symbol.iterator]();
    this.#depth = depth;
    this.#open = open;
  }

  async next(): Promise<{ entry: ArchiveEntry; opened: Promise<Opened> } | undefined> {
    while (!this.#done && this.#queue.length < this.#depth) {
      const next = await this.#iterator.next();
      if (next.done) this.#done = true;
      else {
        const opened = this.#open(next.value);
        // Awaited in turn; until then a failure must not count as unhandled.
        opened.catch(() => undefined);
        this.#queue.push({ entry: next.value, opened });
      }
    }
    return this.#queue.shift();
  }

  /** Lets go of bodies opened but never copied (the archive failed): their connections are closed. */
  async close(): Promise<void> {
    for (const { opened } of this.#queue.splice(0)) {
      const body = await opened.catch(() => undefined);
      const chunks = body?.chunks as { destroy?: () => void } | undefined;
      chunks?.destroy?.();
    }
    if (!this.#done) await this.#iterator.return?.();
  }
}

/** An entry's bytes and, for an S3 object, its size; undefined when the object no longer exists. */
async function openBody(target: MultipartTarget, entry: ArchiveEntry): Promise<{ chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>; size?: number } | undefined> {
  const { body } = entry;
  if (body instanceof Uint8Array) return { chunks: [body], size: body.byteLength };
  if (!('key' in body)) return { chunks: body, ...(entry.size !== undefined && { size: entry.size }) };
  try {
    const object = await target.s3.send(new GetObjectCommand({ Bucket: target.bucketName, Key: body.key }));
    if (!object.Body) throw new Error(`GetObject ${body.key} answered no body`);
    return { chunks: object.Body as AsyncIterable<Uint8Array>, ...(object.ContentLength !== undefined && { size: object.ContentLength }) };
  } catch (error) {
    if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
    throw error;
  }
}

/**
 * Writes the ZIP of `entries`, in their order, to `target`'s key. Resolves once the object is
 * complete; on failure nothing is left (the multipart upload is aborted) and the error is rethrown,
 * and writing it again from the start is always safe.
 */
export async function writeArchive(
  target: Omit<MultipartTarget, 'contentType'>,
  entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>,
  { now = () => new Date(), prefetch = PREFETCH }: { now?: () => Date; prefetch?: number } = {},
): Promise<WrittenArchive> {
  const full: MultipartTarget = { contentType: ARCHIVE_CONTENT_TYPE, ...target };
  const writer = new MultipartWriter(full);
  const spool = new CentralDirectorySpool();
  const ahead = new Lookahead(entries, Math.max(1, prefetch), (entry) => openBody(full, entry));
  const taken = new Set<string>();
  const missing: { name: string; line?: number }[] = [];
  let count = 0;
  let anyZip64 = false;
  try {
    for (let next = await ahead.next(); next; next = await ahead.next()) {
      const { entry } = next;
      const problem = nameProblem(entry.name);
      if (problem) throw new Error(problem);
      const opened = await next.opened;
      if (!opened) {
        missing.push({ name: entry.name, ...(entry.line !== undefined && { line: entry.line }) });
        continue;
      }
      const name = uniqueName(entry.name, entry.line, taken);
      const nameBytes = Buffer.from(name, 'utf8');
      const modified = entry.modifiedAt ?? now();
      const { time, date } = dosDateTime(modified);
      const timestamp = timestampExtra(modified);
      // An entry known to reach 4 GiB says so in its local header; any other has 4-byte sizes (and fails below if it lied).
      const largeEntry = opened.size !== undefined && opened.size >= UINT32_MAX;
      const flags = FLAG_DATA_DESCRIPTOR | FLAG_UTF8;
      const offset = writer.bytes;

      const localExtra = largeEntry ? Buffer.concat([zip64Extra([0n, 0n]), timestamp]) : timestamp;
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(largeEntry ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, 4);
      local.writeUInt16LE(flags, 6);
      local.writeUInt16LE(METHOD_STORED, 8);
      local.writeUInt16LE(time, 10);
      local.writeUInt16LE(date, 12);
      // CRC-32 and sizes (bytes 14 to 25) are in the data descriptor; ZIP64 marks its sizes as in the extra field.
      if (largeEntry) {
        local.writeUInt32LE(UINT32_MAX, 18);
        local.writeUInt32LE(UINT32_MAX, 22);
      }
      local.writeUInt16LE(nameBytes.byteLength, 26);
      local.writeUInt16LE(localExtra.byteLength, 28);
      await writer.write(local);
      await writer.write(nameBytes);
      await writer.write(localExtra);

      let crc = 0;
      let size = 0;
      for await (const chunk of opened.chunks) {
        crc = crc32(chunk, crc);
        size += chunk.byteLength;
        if (!largeEntry && size >= UINT32_MAX) throw new Error(`archive entry ${name} reached 4 GiB without its size declared up front`);
        await writer.write(chunk);
      }
      if (opened.size !== undefined && size !== opened.size) throw new Error(`archive entry ${name} had ${size} bytes, ${opened.size} expected`);

      const descriptor = Buffer.alloc(largeEntry ? 24 : 16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      if (largeEntry) {
        descriptor.writeBigUInt64LE(BigInt(size), 8);
        descriptor.writeBigUInt64LE(BigInt(size), 16);
      } else {
        descriptor.writeUInt32LE(size, 8);
        descriptor.writeUInt32LE(size, 12);
      }
      await writer.write(descriptor);

      // The central directory record: values past 32 bits go to its ZIP64 field, in APPNOTE's order.
      const sizesZip64 = size >= UINT32_MAX;
      const offsetZip64 = offset >= UINT32_MAX;
      const zip64Values = [...(sizesZip64 ? [BigInt(size), BigInt(size)] : []), ...(offsetZip64 ? [BigInt(offset)] : [])];
      const centralExtra = Buffer.concat([...(zip64Values.length > 0 ? [zip64Extra(zip64Values)] : []), timestamp]);
      anyZip64 ||= zip64Values.length > 0 || largeEntry;
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(VERSION_MADE_BY, 4);
      central.writeUInt16LE(zip64Values.length > 0 || largeEntry ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, 6);
      central.writeUInt16LE(flags, 8);
      central.writeUInt16LE(METHOD_STORED, 10);
      central.writeUInt16LE(time, 12);
      central.writeUInt16LE(date, 14);
      central.writeUInt32LE(crc, 16);
      central.writeUInt32LE(sizesZip64 ? UINT32_MAX : size, 20);
      central.writeUInt32LE(sizesZip64 ? UINT32_MAX : size, 24);
      central.writeUInt16LE(nameBytes.byteLength, 28);
      central.writeUInt16LE(centralExtra.byteLength, 30);
      // comment length, disk number start, internal attributes: 0
      central.writeUInt32LE(EXTERNAL_ATTRIBUTES, 38);
      central.writeUInt32LE(offsetZip64 ? UINT32_MAX : offset, 42);
      await spool.append(Buffer.concat([central, nameBytes, centralExtra]));
      count += 1;
    }

    const directoryOffset = writer.bytes;
    for await (const chunk of spool.read()) await writer.write(chunk);
    const directoryBytes = spool.bytes;
    const zip64End = count > UINT16_MAX || directoryOffset >= UINT32_MAX || directoryBytes >= UINT32_MAX;
    if (zip64End) {
      anyZip64 = true;
      const endOffset = writer.bytes;
      const record = Buffer.alloc(56);
      record.writeUInt32LE(0x06064b50, 0);
      record.writeBigUInt64LE(44n, 4);
      record.writeUInt16LE(VERSION_MADE_BY, 12);
      record.writeUInt16LE(VERSION_NEEDED_ZIP64, 14);
      // this disk, the central directory's disk: 0
      record.writeBigUInt64LE(BigInt(count), 24);
      record.writeBigUInt64LE(BigInt(count), 32);
      record.writeBigUInt64LE(BigInt(directoryBytes), 40);
      record.writeBigUInt64LE(BigInt(directoryOffset), 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(0x07064b50, 0);
      locator.writeBigUInt64LE(BigInt(endOffset), 8);
      locator.writeUInt32LE(1, 16);
      await writer.write(Buffer.concat([record, locator]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(Math.min(count, UINT16_MAX), 8);
    end.writeUInt16LE(Math.min(count, UINT16_MAX), 10);
    end.writeUInt32LE(Math.min(directoryBytes, UINT32_MAX), 12);
    end.writeUInt32LE(Math.min(directoryOffset, UINT32_MAX), 16);
    await writer.write(end);
    const written = await writer.end();
    return { ...written, entries: count, missing, zip64: anyZip64 };
  } catch (error) {
    await writer.abort();
    throw error;
  } finally {
    await ahead.close();
    await spool.dispose();
  }
}
