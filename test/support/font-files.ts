/**
 * What the shipped font files call themselves, read from their own `name` tables, so tests can
 * tell a bundled font from anything else that might end up in a PDF.
 */
import { readFileSync } from 'node:fs';
import { bundledFontFiles } from '#lib/render/fonts.ts';

/** The PostScript name (name ID 6) of a TrueType/OpenType file, e.g. "NotoSans-Regular". */
export function postscriptName(path: string): string {
  const font = readFileSync(path);
  const tables = font.readUInt16BE(4);
  for (let i = 0; i < tables; i++) {
    const record = 12 + 16 * i;
    if (font.toString('latin1', record, record + 4) !== 'name') continue;
    const table = font.readUInt32BE(record + 8);
    const count = font.readUInt16BE(table + 2);
    const strings = table + font.readUInt16BE(table + 4);
    for (let j = 0; j < count; j++) {
      const entry = table + 6 + 12 * j;
      const [platform, , , nameId, length, offset] = [0, 2, 4, 6, 8, 10].map((at) => font.readUInt16BE(entry + at)) as [
        number, number, number, number, number, number,
      ];
      if (nameId !== 6) continue;
      const raw = font.subarray(strings + offset, strings + offset + length);
      // Windows and Unicode platforms store UTF-16BE, Macintosh a single-byte encoding.
      return platform === 1 ? raw.toString('latin1') : Buffer.from(raw).swap16().toString('utf16le');
    }
  }
  throw new Error(`${path} has no PostScript name`);
}

/** PostScript names of every font the service ships. */
export const SHIPPED_FONT_NAMES: ReadonlySet<string> = new Set(bundledFontFiles().map(postscriptName));
