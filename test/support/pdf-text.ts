/**
 * Reading a PDF's text the way a PDF reader that honours the standard does (Acrobat, poppler), and
 * which glyphs of which embedded fonts draw it.
 *
 * pdf.js (test/support/pdf.ts) maps each glyph through its font's ToUnicode table only. For
 * complex scripts that is not the text: an Arabic letter's contextual form, a Devanagari vowel
 * drawn before its consonant, or a Han character whose glyph the font shares with a Kangxi radical
 * has no one-to-one mapping. Chromium marks such glyphs with `/Span <</ActualText (...)>> BDC` and
 * right-to-left runs with `/ReversedChars BMC` (PDF 32000-1, 14.8.2.3 and 14.9.4), which this reader
 * applies. It knows exactly the content-stream syntax Chromium writes, which is plain PDF.
 */
import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFRawStream,
  PDFRef,
  PDFStream,
  type PDFObject,
} from 'pdf-lib';

/** One glyph drawn on a page: the font (its PostScript name, subset tag removed) and its code. */
export interface GlyphUse {
  readonly font: string;
  readonly fontType: string;
  /** The character code shown; for the Identity-encoded fonts Chromium writes, the glyph id (0 is .notdef, the "tofu" box). */
  readonly code: number;
  /** Whether the code maps to a glyph id through an Identity CIDToGIDMap (so `code` is the glyph id). */
  readonly identity: boolean;
}

export interface PageText {
  /** The page's text in logical order, lines separated by "\n". */
  readonly text: string;
  readonly glyphs: readonly GlyphUse[];
}

/** Every font dictionary of the document: PostScript name (subset tag removed), type, and whether its program is embedded. */
export interface EmbeddedFont {
  readonly name: string;
  readonly type: string;
  readonly embedded: boolean;
}

interface FontInfo {
  readonly name: string;
  readonly type: string;
  readonly bytesPerCode: 1 | 2;
  readonly identity: boolean;
  readonly toUnicode: Map<number, string>;
}

export async function readPdfText(bytes: Uint8Array): Promise<PageText[]> {
  const document = await PDFDocument.load(bytes);
  return document.getPages().map((page) => {
    const reader = new ContentReader(document);
    const resources = page.node.Resources();
    reader.run(contentOf(document, page.node.get(PDFName.of('Contents'))), resources);
    return reader.result();
  });
}

export async function embeddedFonts(bytes: Uint8Array): Promise<EmbeddedFont[]> {
  const document = await PDFDocument.load(bytes);
  const fonts: EmbeddedFont[] = [];
  for (const [, object] of document.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || object.get(PDFName.of('Type')) !== PDFName.of('Font')) continue;
    const type = nameOf(object.get(PDFName.of('Subtype')));
    if (type === 'CIDFontType2' || type === 'CIDFontType0') continue; // described by their Type0 parent
    const info = fontInfo(document, object);
    fonts.push({ name: info.name, type, embedded: type === 'Type3' || hasFontProgram(document, object) });
  }
  return fonts;
}

function hasFontProgram(document: PDFDocument, font: PDFDict): boolean {
  const descendant = lookup(document, font.get(PDFName.of('DescendantFonts')));
  const target = descendant instanceof PDFArray ? lookup(document, descendant.get(0)) : font;
  const descriptor = target instanceof PDFDict ? lookup(document, target.get(PDFName.of('FontDescriptor'))) : undefined;
  if (!(descriptor instanceof PDFDict)) return false;
  return ['FontFile', 'FontFile2', 'FontFile3'].some((key) => descriptor.has(PDFName.of(key)));
}

// ---------------------------------------------------------------------------------------------

function lookup(document: PDFDocument, object: PDFObject | undefined): PDFObject | undefined {
  return object instanceof PDFRef ? document.context.lookup(object) : object;
}

function nameOf(object: PDFObject | undefined): string {
  return object instanceof PDFName ? object.decodeText() : '';
}

function streamBytes(stream: PDFObject | undefined): Uint8Array {
  if (stream instanceof PDFRawStream) return decodePDFRawStream(stream).decode();
  if (stream instanceof PDFStream) return stream.getContents();
  return new Uint8Array();
}

function contentOf(document: PDFDocument, contents: PDFObject | undefined): string {
  const resolved = lookup(document, contents);
  const parts = resolved instanceof PDFArray ? resolved.asArray().map((item) => lookup(document, item)) : [resolved];
  return parts.map((part) => Buffer.from(streamBytes(part)).toString('latin1')).join('\n');
}

function fontInfo(document: PDFDocument, font: PDFDict): FontInfo {
  const type = nameOf(font.get(PDFName.of('Subtype')));
  const rawName = nameOf(font.get(PDFName.of('BaseFont'))) || nameOf(font.get(PDFName.of('Name'))) || type;
  const name = rawName.replace(/^[A-Z]{6}\+/, '');
  let identity = false;
  if (type === 'Type0') {
    const descendants = lookup(document, font.get(PDFName.of('DescendantFonts')));
    const cidFont = descendants instanceof PDFArray ? lookup(document, descendants.get(0)) : undefined;
    const map = cidFont instanceof PDFDict ? cidFont.get(PDFName.of('CIDToGIDMap')) : undefined;
    identity = nameOf(font.get(PDFName.of('Encoding'))) === 'Identity-H' && (map === undefined || nameOf(map) === 'Identity');
  }
  const toUnicode = parseToUnicode(Buffer.from(streamBytes(lookup(document, font.get(PDFName.of('ToUnicode'))))).toString('latin1'));
  return { name, type, bytesPerCode: type === 'Type0' ? 2 : 1, identity, toUnicode };
}

function utf16(hex: string): string {
  const units: number[] = [];
  for (let i = 0; i + 4 <= hex.length; i += 4) units.push(parseInt(hex.slice(i, i + 4), 16));
  return String.fromCharCode(...units);
}

/** A ToUnicode CMap's bfchar and bfrange entries. */
export function parseToUnicode(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const entry of block[1]!.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g)) {
      map.set(parseInt(entry[1]!, 16), utf16(entry[2]!));
    }
  }
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const entry of block[1]!.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(<[0-9a-fA-F]*>|\[[^\]]*\])/g)) {
      const low = parseInt(entry[1]!, 16);
      const high = parseInt(entry[2]!, 16);
      const target = entry[3]!;
      if (target.startsWith('[')) {
        [...target.matchAll(/<([0-9a-fA-F]*)>/g)].forEach((item, offset) => map.set(low + offset, utf16(item[1]!)));
      } else {
        const start = utf16(target.slice(1, -1));
        for (let code = low; code <= high; code++) {
          // The last UTF-16 unit counts up with the code.
          map.set(code, start.slice(0, -1) + String.fromCharCode(start.charCodeAt(start.length - 1) + (code - low)));
        }
      }
    }
  }
  return map;
}

// ---------------------------------------------------------------------------------------------
// Content streams

type Operand = number | string | Uint8Array | Operand[] | { readonly dict: Map<string, Operand> } | { readonly name: string };

/** A run of text in the order it is drawn; `rtl` when it comes from a right-to-left (ReversedChars) run. */
interface Piece {
  readonly text: string;
  readonly rtl: boolean;
}

interface Frame {
  readonly actualText?: string;
  readonly reversed: boolean;
  readonly units: Piece[];
}

const RTL_CHARACTER = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
const STRONG_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * Puts the runs of one line into logical order: a line without left-to-right text is read right to
 * left as a whole; in other lines each stretch of right-to-left runs (with the spaces between them)
 * is read right to left. Enough for lines in one direction and right-to-left phrases inside
 * left-to-right lines; not the full Unicode bidirectional algorithm.
 */
function logicalOrder(pieces: readonly Piece[]): string {
  const kind = (piece: Piece) =>
    piece.rtl || RTL_CHARACTER.test(piece.text) ? 'R' : STRONG_CHARACTER.test(piece.text) ? 'L' : 'N';
  const kinds = pieces.map(kind);
  if (!kinds.includes('L')) return [...pieces].reverse().map((piece) => piece.text).join('');
  const ordered: Piece[] = [];
  for (let index = 0; index < pieces.length; ) {
    if (kinds[index] !== 'R') {
      ordered.push(pieces[index++]!);
      continue;
    }
    let end = index; // last R of the stretch
    for (let next = index + 1; next < pieces.length && kinds[next] !== 'L'; next++) if (kinds[next] === 'R') end = next;
    ordered.push(...pieces.slice(index, end + 1).reverse());
    index = end + 1;
  }
  return ordered.map((piece) => piece.text).join('');
}

class ContentReader {
  private readonly frames: Frame[] = [{ reversed: false, units: [] }];
  private readonly glyphs: GlyphUse[] = [];
  private readonly fonts = new Map<PDFDict, FontInfo>();
  private font: FontInfo | undefined;
  private fontSize = 0;
  private line = [1, 0, 0, 1, 0, 0];
  private lastY: number | undefined;

  private readonly document: PDFDocument;

  constructor(document: PDFDocument) {
    this.document = document;
  }

  result(): PageText {
    while (this.frames.length > 1) this.endMarkedContent();
    const lines: Piece[][] = [[]];
    for (const piece of this.frames[0]!.units) {
      if (piece.text === '\n') lines.push([]);
      else lines[lines.length - 1]!.push(piece);
    }
    return { text: lines.map(logicalOrder).join('\n'), glyphs: this.glyphs };
  }

  run(content: string, resources: PDFDict | undefined): void {
    const operands: Operand[] = [];
    for (const token of tokenize(content)) {
      if (!('operator' in token)) {
        operands.push(token.value);
        continue;
      }
      this.operate(token.operator, operands, resources);
      operands.length = 0;
    }
  }

  private operate(operator: string, operands: Operand[], resources: PDFDict | undefined): void {
    switch (operator) {
      case 'BT':
        this.line = [1, 0, 0, 1, 0, 0];
        break;
      case 'Tf': {
        const name = operands[0] as { name: string };
        this.fontSize = Number(operands[1]);
        this.font = this.fontNamed(resources, name.name);
        break;
      }
      case 'Tm':
        this.line = operands.map(Number);
        break;
      case 'Td':
      case 'TD': {
        const [a, b, c, d, e, f] = this.line as [number, number, number, number, number, number];
        const tx = Number(operands[0]);
        const ty = Number(operands[1]);
        this.line = [a, b, c, d, e + tx * a + ty * c, f + tx * b + ty * d];
        break;
      }
      case 'T*':
      case "'":
      case '"':
        this.pushLineBreak();
        if (operator !== 'T*') this.show(operands[operands.length - 1] as Uint8Array);
        break;
      case 'Tj':
        this.show(operands[0] as Uint8Array);
        break;
      case 'TJ':
        for (const item of operands[0] as Operand[]) if (item instanceof Uint8Array) this.show(item);
        break;
      case 'BDC':
      case 'BMC': {
        const tag = (operands[0] as { name: string }).name;
        const properties = operands[1];
        const actual = properties && typeof properties === 'object' && 'dict' in properties ? properties.dict.get('ActualText') : undefined;
        this.frames.push({
          ...(actual instanceof Uint8Array && { actualText: decodeTextString(actual) }),
          reversed: tag === 'ReversedChars',
          units: [],
        });
        break;
      }
      case 'EMC':
        if (this.frames.length > 1) this.endMarkedContent();
        break;
      case 'Do': {
        const xobjects = lookup(this.document, resources?.get(PDFName.of('XObject')));
        const form = xobjects instanceof PDFDict ? lookup(this.document, xobjects.get(PDFName.of((operands[0] as { name: string }).name))) : undefined;
        if (form instanceof PDFRawStream && nameOf(form.dict.get(PDFName.of('Subtype'))) === 'Form') {
          const formResources = lookup(this.document, form.dict.get(PDFName.of('Resources')));
          this.run(Buffer.from(streamBytes(form)).toString('latin1'), formResources instanceof PDFDict ? formResources : resources);
        }
        break;
      }
      default:
        break;
    }
  }

  private fontNamed(resources: PDFDict | undefined, name: string): FontInfo | undefined {
    const fonts = lookup(this.document, resources?.get(PDFName.of('Font')));
    const font = fonts instanceof PDFDict ? lookup(this.document, fonts.get(PDFName.of(name))) : undefined;
    if (!(font instanceof PDFDict)) return undefined;
    let info = this.fonts.get(font);
    if (!info) this.fonts.set(font, (info = fontInfo(this.document, font)));
    return info;
  }

  private show(bytes: Uint8Array | undefined): void {
    if (!bytes || !this.font) return;
    const y = this.line[5]!;
    // A jump of more than half the font size is a new line; smaller shifts place combining marks.
    if (this.lastY !== undefined && Math.abs(y - this.lastY) > this.fontSize * 0.5) this.pushLineBreak();
    this.lastY = y;
    const size = this.font.bytesPerCode;
    for (let i = 0; i + size <= bytes.length; i += size) {
      const code = size === 2 ? (bytes[i]! << 8) | bytes[i + 1]! : bytes[i]!;
      this.glyphs.push({ font: this.font.name, fontType: this.font.type, code, identity: this.font.identity });
      this.push(this.font.toUnicode.get(code) ?? '\uFFFD');
    }
  }

  /** A line break belongs outside any ActualText span (which replaces everything inside it). */
  private pushLineBreak(): void {
    const outermostSpan = this.frames.findIndex((frame) => frame.actualText !== undefined);
    const target = outermostSpan > 0 ? this.frames[outermostSpan - 1]! : this.frames[this.frames.length - 1]!;
    target.units.push({ text: '\n', rtl: false });
  }

  private push(unit: string): void {
    this.frames[this.frames.length - 1]!.units.push({ text: unit, rtl: false });
  }

  private endMarkedContent(): void {
    const frame = this.frames.pop()!;
    const units: Piece[] =
      frame.actualText !== undefined
        ? [{ text: frame.actualText, rtl: false }]
        : frame.reversed
          ? [{ text: [...frame.units].reverse().map((piece) => piece.text).join(''), rtl: true }]
          : frame.units;
    this.frames[this.frames.length - 1]!.units.push(...units);
  }
}

function decodeTextString(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    let text = '';
    for (let i = 2; i + 1 < bytes.length; i += 2) text += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
    return text;
  }
  return Buffer.from(bytes).toString('latin1');
}

type Token = { readonly value: Operand } | { readonly operator: string };

const WHITESPACE = /[\0\t\n\f\r ]/;
const DELIMITER = /[()<>[\]{}/%\0\t\n\f\r ]/;

/** The tokens of a content stream: operands (numbers, names, strings, arrays, dictionaries) and operators. */
function* tokenize(content: string): Generator<Token> {
  let index = 0;
  const stack: Operand[][] = [];
  const dictStack: Operand[][] = [];
  const emit = function* (value: Operand): Generator<Token> {
    if (dictStack.length) dictStack[dictStack.length - 1]!.push(value);
    else if (stack.length) stack[stack.length - 1]!.push(value);
    else yield { value };
  };
  while (index < content.length) {
    const char = content[index]!;
    if (WHITESPACE.test(char)) {
      index++;
    } else if (char === '%') {
      while (index < content.length && content[index] !== '\n' && content[index] !== '\r') index++;
    } else if (char === '(') {
      const [bytes, end] = literalString(content, index);
      index = end;
      yield* emit(bytes);
    } else if (content.startsWith('<<', index)) {
      dictStack.push([]);
      index += 2;
    } else if (content.startsWith('>>', index)) {
      const items = dictStack.pop() ?? [];
      const dict = new Map<string, Operand>();
      for (let i = 0; i + 1 < items.length; i += 2) dict.set((items[i] as { name: string }).name, items[i + 1]!);
      index += 2;
      yield* emit({ dict });
    } else if (char === '<') {
      const end = content.indexOf('>', index);
      const hex = content.slice(index + 1, end).replace(/\s+/g, '');
      const padded = hex.length % 2 ? hex + '0' : hex;
      index = end + 1;
      yield* emit(Uint8Array.from(Buffer.from(padded, 'hex')));
    } else if (char === '[') {
      stack.push([]);
      index++;
    } else if (char === ']') {
      const items = stack.pop() ?? [];
      index++;
      yield* emit(items);
    } else if (char === '/') {
      let end = index + 1;
      while (end < content.length && !DELIMITER.test(content[end]!)) end++;
      const name = content.slice(index + 1, end).replace(/#([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      index = end;
      yield* emit({ name });
    } else {
      let end = index;
      while (end < content.length && !DELIMITER.test(content[end]!)) end++;
      if (end === index) end++;
      const word = content.slice(index, end);
      index = end;
      if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) yield* emit(Number(word));
      else if (word === 'true' || word === 'false' || word === 'null') yield* emit(word);
      else if (stack.length === 0 && dictStack.length === 0) yield { operator: word };
    }
  }
}

/** A literal string starting at `start` ("(") and the index just past it. */
function literalString(content: string, start: number): [Uint8Array, number] {
  const bytes: number[] = [];
  let depth = 1;
  let index = start + 1;
  const escapes: Record<string, number> = { n: 10, r: 13, t: 9, b: 8, f: 12, '(': 40, ')': 41, '\\': 92 };
  while (index < content.length && depth > 0) {
    const char = content[index]!;
    if (char === '\\') {
      const next = content[index + 1]!;
      if (next in escapes) {
        bytes.push(escapes[next]!);
        index += 2;
      } else if (/[0-7]/.test(next)) {
        const octal = /^[0-7]{1,3}/.exec(content.slice(index + 1))![0];
        bytes.push(parseInt(octal, 8) & 0xff);
        index += 1 + octal.length;
      } else {
        index += 2; // a line continuation or an unknown escape: the backslash is dropped
      }
      continue;
    }
    if (char === '(') depth++;
    if (char === ')' && --depth === 0) break;
    bytes.push(char.charCodeAt(0) & 0xff);
    index++;
  }
  return [Uint8Array.from(bytes), index + 1];
}
