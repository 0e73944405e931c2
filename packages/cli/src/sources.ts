/**
 * Reading the HTML to send: each file decoded as a browser would decode it, by its byte order mark
 * or the charset it declares in its first 1024 bytes (`<meta charset>`, `<meta http-equiv
 * content-type>`), found by html-encoding-sniffer (jsdom's implementation of the HTML standard's
 * prescan) and decoded by Node's TextDecoder (the WHATWG encodings). A file that declares nothing
 * must be UTF-8: one that is not fails, named, instead of being guessed at or silently garbled.
 */
import { open } from 'node:fs/promises';
import sniffHtmlEncoding from 'html-encoding-sniffer';

/** The API refuses a body over 5 MB (413 payload_too_large). */
export const API_BODY_LIMIT = 5 * 1024 * 1024;
/**
 * The largest file worth reading: twice the body limit, since a UTF-16 file halves as UTF-8. A
 * larger one could never be sent; it is refused without being read, however large it is.
 */
export const MAX_SOURCE_BYTES = 2 * API_BODY_LIMIT;

/** A source that cannot be sent, for a reason of its own: `code` as in a batch result, `message` without the file's name. */
export class SourceError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

function tooLarge(bytes: number): SourceError {
  return new SourceError('payload_too_large', `${humanSize(bytes)}, more than one request may carry (${humanSize(API_BODY_LIMIT)}); not sent`);
}

/** The HTML a file's bytes stand for, and the encoding they were read in. */
export function decodeHtml(bytes: Uint8Array): { html: string; encoding: string } {
  // The sniffer answers the default when the bytes say nothing: with two defaults, a declaration
  // (or BOM) is what makes both answers agree.
  const declared = sniffHtmlEncoding(bytes, { defaultEncoding: 'UTF-8' });
  const undeclared = declared !== sniffHtmlEncoding(bytes, { defaultEncoding: 'windows-1252' });
  if (undeclared) {
    try {
      return { html: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'UTF-8' };
    } catch {
      throw new SourceError(
        'encoding_error',
        'not valid UTF-8 and declares no charset: declare its encoding in its first 1024 bytes, for example <meta charset="windows-1252">, or save it as UTF-8',
      );
    }
  }
  if (declared === 'replacement') {
    throw new SourceError('encoding_error', 'declares an encoding browsers refuse to decode (such as ISO-2022-KR or HZ-GB-2312); save it as UTF-8');
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(declared);
  } catch {
    throw new SourceError('encoding_error', `declares the encoding ${declared}, which cannot be decoded here; save it as UTF-8`);
  }
  // A declared encoding is decoded as a browser would: a stray byte becomes U+FFFD.
  return { html: decoder.decode(bytes), encoding: declared };
}

/** A file's HTML; a SourceError when it is too large to send (not read) or cannot be decoded. */
export async function readHtmlFile(path: string): Promise<{ html: string; encoding: string }> {
  // One open file, so the size checked is the size of what is read.
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_SOURCE_BYTES) throw tooLarge(size);
    const bytes = await handle.readFile();
    if (bytes.byteLength > MAX_SOURCE_BYTES) throw tooLarge(bytes.byteLength);
    return decodeHtml(bytes);
  } finally {
    await handle.close();
  }
}

/** Standard input's HTML, read no further than what could be sent. */
export async function readHtmlStdin(): Promise<{ html: string; encoding: string }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    bytes += (chunk as Buffer).byteLength;
    if (bytes > MAX_SOURCE_BYTES) throw tooLarge(bytes);
    chunks.push(chunk as Buffer);
  }
  return decodeHtml(Buffer.concat(chunks));
}

/** What an entry that is not a regular file is, for the line that says it was skipped. */
export function entryKind(entry: { isDirectory(): boolean; isSymbolicLink(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (entry.isSymbolicLink()) return 'a symbolic link (links are not followed: copy the file into the directory to print it)';
  if (entry.isDirectory()) return 'a directory';
  if (entry.isFIFO()) return 'a named pipe';
  if (entry.isSocket()) return 'a socket';
  return 'not a regular file';
}

