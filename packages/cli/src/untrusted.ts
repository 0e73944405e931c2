/**
 * What the server sends is text from the network: before it reaches the terminal or names a file it
 * is made harmless here. A compromised or impersonated server (a wrong PDFAPI_URL, a proxy) must not
 * be able to move the cursor, retitle the window or forge lines of output, nor write a dotfile, a
 * path, standard output or a name the filesystem refuses.
 */
import { stripVTControlCharacters } from 'node:util';

/** C0 and C1 controls (DEL included), bidi, zero-width and other invisible formatting characters, line and paragraph separators. */
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** Server text for the terminal: escape sequences removed, line breaks and tabs made spaces, other unsafe characters shown as U+FFFD. */
export function terminalText(text: string): string {
  return stripVTControlCharacters(String(text))
    .replace(/[\t\n\v\f\r\u0085\u2028\u2029]+/g, ' ')
    .replace(UNSAFE_CHARACTER, '\uFFFD');
}

/**
 * JSON for the terminal: as JSON.stringify writes it, with every character it leaves raw that a
 * terminal could act on (DEL, C1 controls, bidi and invisible formatting) written as a \u escape.
 * It parses back to the same value.
 */
export function terminalJson(value: unknown): string {
  // JSON.stringify escapes C0 controls in strings; the raw line breaks left are its indentation's.
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\p{Cf}\u2028\u2029]/gu, (character) =>
    Array.from({ length: character.length }, (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`).join(''),
  );
}

/** A file name's longest, in UTF-8 bytes: under every common filesystem's 255 with room for a copy's suffix. */
export const MAX_NAME_BYTES = 200;

/** Slashes and backslashes, and the characters that look like them. */
const SEPARATOR = /[/\\\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c]/gu;
/** What Windows refuses in a name. */
const WINDOWS_FORBIDDEN = /[<>:"|?*]/g;
/** Device names Windows reserves, whatever the extension. */
const WINDOWS_RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])$/i;

/** The extension a downloaded file is saved with, by the media type its record gives (`content_type`). */
export function extensionOf(contentType: string | undefined): string {
  const extensions: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };
  return extensions[contentType ?? ''] ?? 'pdf';
}

/**
 * A name the server gave a PDF, made safe to create in the current directory: one path component,
 * no controls, bidi or invisible characters (each becomes `_`), no look-alike slashes, nothing
 * Windows refuses or reserves, no leading dot, dash or space, at most MAX_NAME_BYTES bytes of UTF-8,
 * and always ending `.pdf` (or `extension`: a picture's `.png`, `.jpg`, `.webp`). A name with nothing
 * left becomes `<id>.<extension>`.
 */
export function safePdfFilename(name: string, pdfId: string, extension = 'pdf'): string {
  let stem = String(name)
    .normalize('NFC')
    .replace(SEPARATOR, '_')
    .replace(UNSAFE_CHARACTER, '_')
    .replace(WINDOWS_FORBIDDEN, '_')
    // A jpeg may end .jpeg or .jpg: either is taken for the extension, written .jpg.
    .replace(extension === 'jpg' ? /\.jpe?g$/i : new RegExp(`\\.${extension}$`, 'i'), '');
  const trim = (text: string) => text.replace(/^[\s.\-]+/u, '').replace(/[\s.]+$/u, '');
  stem = trim(stem);
  const budget = MAX_NAME_BYTES - `.${extension}`.length;
  if (Buffer.byteLength(stem) > budget) {
    const kept: string[] = [];
    let bytes = 0;
    for (const character of stem) {
      bytes += Buffer.byteLength(character);
      if (bytes > budget) break;
      kept.push(character);
    }
    stem = trim(kept.join(''));
  }
  if (stem === '') stem = /^[A-Za-z0-9][\w-]{0,99}$/.test(pdfId) ? pdfId : 'download';
  if (WINDOWS_RESERVED.test(stem.split('.')[0]!.trim())) stem = `_${stem}`;
  return `${stem}.${extension}`;
}
