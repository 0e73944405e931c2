/**
 * A PAdES signature's place in the PDF, pure: an incremental update (ISO 32000-1 7.5.6) appended
 * to the file as it is, so every byte before it stays as printed and finished, holding
 *   - the signature dictionary (/Type /Sig, /Filter /Adobe.PPKLite, /SubFilter /ETSI.CAdES.detached,
 *     /ByteRange, /Contents: a hole of zeros the CMS is written into, /M, /Reason, /Location, ...),
 *   - its field and widget (/FT /Sig), invisible (a zero rectangle) or drawn on a page: the box's
 *     appearance is a one-page PDF printed by Chromium (lib/render/box-stamp.ts, any script, its
 *     fonts embedded), made a form XObject with its fonts and written into the update as new objects,
 *     numbered past every number any revision of the file uses,
 *   - the page, with the widget added to its /Annots, and the catalog, with /AcroForm /SigFlags 3,
 *   - a cross-reference section of the same kind as the file's last one (a table, or a stream),
 *     whose trailer names the previous one with /Prev.
 * The byte range covers the whole file but the hole: [0, before <, after >, to the end].
 */
import { createHash } from 'node:crypto';
import { PDFArray, PDFContext, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRef, PDFStream, PDFString, type PDFObject } from 'pdf-lib';

export interface Appearance {
  /** 0-based page index. */
  readonly pageIndex: number;
  /** From the page's top-left corner, in PDF points (1/72 in). */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  /** What the box shows: a one-page PDF of the box's size (lib/render/box-stamp.ts), whose page becomes the widget's appearance. */
  readonly stamp: Uint8Array;
}

export interface PlaceholderInput {
  readonly signingTime: Date;
  /** The signer's name (the certificate's common name), as /Name. */
  readonly name?: string | undefined;
  readonly reason?: string | undefined;
  readonly location?: string | undefined;
  readonly contactInfo?: string | undefined;
  readonly appearance?: Appearance | undefined;
  /** Bytes reserved for the CMS (the hole holds twice as many hex digits). */
  readonly contentsBytes: number;
}

export interface PreparedSignature {
  /** The whole file with the update appended, the hole still zeros. */
  readonly bytes: Uint8Array;
  readonly byteRange: readonly [number, number, number, number];
}

const encoder = new TextEncoder();
const latin1 = (text: string) => Buffer.from(text, 'latin1');
/** A PDF text string: PDFDocEncoding where ASCII suffices, UTF-16BE (hex) otherwise. */
const textString = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? PDFString.of(text.replace(/[\\()]/g, (c) => '\\' + c)) : PDFHexString.fromText(text));

/** Where the last cross-reference section starts, and whether it is a stream. */
function lastCrossReference(bytes: Uint8Array): { offset: number; isStream: boolean } {
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 2048))).toString('latin1');
  const match = /startxref\s+(\d+)\s*%%EOF\s*$/.exec(tail) ?? [...tail.matchAll(/startxref\s+(\d+)/g)].at(-1);
  if (!match) throw new Error('the PDF has no startxref');
  const offset = Number(match[1]);
  const head = Buffer.from(bytes.subarray(offset, offset + 32)).toString('latin1');
  return { offset, isStream: !/^\s*xref/.test(head) };
}

/**
 * The first object number no revision of the file uses. pdf-lib forgets the object streams and
 * cross-reference streams it read (their numbers are not in its context), and a trailer's /Size may
 * count free entries past the last object: the largest of all three, so no new object takes the
 * number of one a reader still resolves through the older sections.
 */
function nextObjectNumber(pdf: Uint8Array, largestParsed: number): number {
  const text = Buffer.from(pdf).toString('latin1');
  let next = largestParsed + 1;
  for (const match of text.matchAll(/(?:^|[\r\n\s])(\d+)\s+\d+\s+obj\b/g)) next = Math.max(next, Number(match[1]) + 1);
  for (const match of text.matchAll(/\/Size\s+(\d+)/g)) next = Math.max(next, Number(match[1]));
  return next;
}

/** The PDF date of /M: D:YYYYMMDDHHmmSSZ. */
function pdfDate(date: Date): string {
  const iso = date.toISOString();
  return `D:${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/**
 * The objects a form XObject made by pdf-lib in `context` needs (itself, its resources, fonts and
 * font programs), by number: those reachable from `root` numbered from `firstNew` on. pdf-lib also
 * registers what it copied but left unused (the stamp's own page contents): never written.
 */
function newObjectsFrom(context: PDFContext, root: PDFRef, firstNew: number): Map<number, PDFObject> {
  const found = new Map<number, PDFObject>();
  const pending: PDFObject[] = [root];
  while (pending.length > 0) {
    const object = pending.pop()!;
    if (object instanceof PDFRef) {
      if (object.objectNumber < firstNew || found.has(object.objectNumber)) continue;
      const target = context.lookup(object);
      if (!target) throw new Error(`the appearance names object ${object.toString()}, which does not exist`);
      found.set(object.objectNumber, target);
      pending.push(target);
    } else if (object instanceof PDFDict) pending.push(...object.values());
    else if (object instanceof PDFArray) pending.push(...object.asArray());
    else if (object instanceof PDFStream) pending.push(object.dict);
  }
  return found;
}

/** An object as the file holds it (a stream's bytes included), by pdf-lib's own writer. */
function objectBytes(object: PDFObject): Buffer {
  const bytes = Buffer.alloc(object.sizeInBytes());
  object.copyBytesInto(bytes, 0);
  return bytes;
}

/**
 * The file with a signature's incremental update appended and its byte range written; the CMS
 * goes into the hole with {@link fillSignature}. The file must not be encrypted.
 */
export async function prepareSignature(pdf: Uint8Array, input: PlaceholderInput): Promise<PreparedSignature> {
  const document = await PDFDocument.load(pdf, { updateMetadata: false });
  if (document.isEncrypted) throw new Error('an encrypted PDF cannot be signed here');
  const context = document.context;
  const previous = lastCrossReference(pdf);
  let next = nextObjectNumber(pdf, context.largestObjectNumber);
  const objects = new Map<number, { generation: number; text: string | Buffer }>();
  const newRef = () => PDFRef.of(next++);

  const signatureRef = newRef();
  const widgetRef = newRef();
  const pages = document.getPages();
  const appearance = input.appearance;
  const page = pages[appearance?.pageIndex ?? 0]!;

  // The signature dictionary, written by hand: /ByteRange and /Contents at known places.
  const hole = '0'.repeat(input.contentsBytes * 2);
  const byteRangeSlot = '/ByteRange [0 0000000000 0000000000 0000000000]';
  const signatureEntries = [
    '/Type /Sig',
    '/Filter /Adobe.PPKLite',
    '/SubFilter /ETSI.CAdES.detached',
    byteRangeSlot,
    `/Contents <${hole}>`,
    `/M (${pdfDate(input.signingTime)})`,
    ...(input.name !== undefined ? [`/Name ${textString(input.name).toString()}`] : []),
    ...(input.reason !== undefined ? [`/Reason ${textString(input.reason).toString()}`] : []),
    ...(input.location !== undefined ? [`/Location ${textString(input.location).toString()}`] : []),
    ...(input.contactInfo !== undefined ? [`/ContactInfo ${textString(input.contactInfo).toString()}`] : []),
  ];
  objects.set(signatureRef.objectNumber, { generation: 0, text: `<<\n${signatureEntries.join('\n')}\n>>` });

  // The appearance: the printed box as a form XObject, or an empty one for an invisible signature.
  const { width: pageWidth, height: pageHeight } = page.getSize();
  const { x: left, y: bottom } = page.getMediaBox();
  const rect = appearance
    ? [left + appearance.x, bottom + pageHeight - appearance.y - appearance.height, left + appearance.x + appearance.width, bottom + pageHeight - appearance.y]
    : [0, 0, 0, 0];
  let appearanceRef: PDFRef;
  if (appearance) {
    // pdf-lib numbers what it adds from its context's largest number, which does not count the
    // numbers of object streams it read: start it past every number the file uses.
    context.largestObjectNumber = next - 1;
    // The box's part of the printed page, from its top-left corner: Chromium sizes a page to whole
    // device units, a point or so larger than the box; the form's /BBox is then the box itself.
    const stampPage = (await PDFDocument.load(appearance.stamp, { updateMetadata: false })).getPage(0);
    const { height: stampHeight } = stampPage.getSize();
    const region = { left: 0, bottom: stampHeight - appearance.height, right: appearance.width, top: stampHeight };
    const [embedded] = await document.embedPages([stampPage], [region]);
    await embedded!.embed();
    appearanceRef = embedded!.ref;
    for (const [number, object] of newObjectsFrom(context, appearanceRef, next)) objects.set(number, { generation: 0, text: objectBytes(object) });
    next = context.largestObjectNumber + 1;
  } else {
    // An empty form XObject, as PDF/A asks of an invisible signature.
    appearanceRef = newRef();
    objects.set(appearanceRef.objectNumber, { generation: 0, text: '<< /Type /XObject /Subtype /Form /BBox [0 0 0.00 0.00] /Length 0 >>\nstream\n\nendstream' });
  }

  // The field and its widget in one dictionary; Print and Locked.
  const pageRef = page.ref;
  objects.set(widgetRef.objectNumber, {
    generation: 0,
    text: `<< /Type /Annot /Subtype /Widget /FT /Sig /F 132 /T (Signature${widgetRef.objectNumber}) /V ${signatureRef.toString()} /P ${pageRef.toString()} /Rect [${rect.map((n) => n.toFixed(2)).join(' ')}] /AP << /N ${appearanceRef.toString()} >> >>`,
  });

  // The page, its annotations with the widget.
  const pageDict = page.node.clone(context) as PDFDict;
  const annots = page.node.lookup(PDFName.of('Annots'));
  const annotations = PDFArray.withContext(context);
  if (annots instanceof PDFArray) for (let i = 0; i < annots.size(); i++) annotations.push(annots.get(i));
  annotations.push(widgetRef);
  pageDict.set(PDFName.of('Annots'), annotations);
  objects.set(pageRef.objectNumber, { generation: pageRef.generationNumber, text: pageDict.toString() });

  // The catalog, with a form holding the field (an existing form keeps its fields).
  const catalogRef = context.trailerInfo.Root as PDFRef;
  const catalog = document.catalog.clone(context) as PDFDict;
  const existingForm = document.catalog.lookup(PDFName.of('AcroForm'));
  const form = existingForm instanceof PDFDict ? (existingForm.clone(context) as PDFDict) : context.obj({});
  const fields = PDFArray.withContext(context);
  const existingFields = form.lookup(PDFName.of('Fields'));
  if (existingFields instanceof PDFArray) for (let i = 0; i < existingFields.size(); i++) fields.push(existingFields.get(i));
  fields.push(widgetRef);
  form.set(PDFName.of('Fields'), fields);
  form.set(PDFName.of('SigFlags'), PDFNumber.of(3));
  const formRef = document.catalog.get(PDFName.of('AcroForm'));
  if (formRef instanceof PDFRef) objects.set(formRef.objectNumber, { generation: formRef.generationNumber, text: form.toString() });
  else catalog.set(PDFName.of('AcroForm'), form);
  objects.set(catalogRef.objectNumber, { generation: catalogRef.generationNumber, text: catalog.toString() });

  // Write the update.
  const parts: Buffer[] = [];
  let offset = pdf.length;
  const push = (chunk: Buffer) => {
    parts.push(chunk);
    offset += chunk.length;
  };
  if (pdf[pdf.length - 1] !== 0x0a) push(latin1('\n'));
  const offsets = new Map<number, { offset: number; generation: number }>();
  for (const [number, object] of [...objects].sort(([a], [b]) => a - b)) {
    offsets.set(number, { offset, generation: object.generation });
    push(Buffer.concat([latin1(`${number} ${object.generation} obj\n`), typeof object.text === 'string' ? Buffer.from(object.text, 'latin1') : object.text, latin1('\nendobj\n')]));
  }
  const trailerEntries = (size: number) => {
    const entries: [string, PDFObject | string][] = [
      ['Size', String(size)],
      ['Root', catalogRef],
      ['Prev', String(previous.offset)],
    ];
    const info = context.trailerInfo.Info;
    if (info) entries.push(['Info', info]);
    const id = context.trailerInfo.ID;
    if (id) entries.push(['ID', id]);
    return entries.map(([name, value]) => `/${name} ${typeof value === 'string' ? value : value.toString()}`).join(' ');
  };
  const xrefOffset = offset;
  if (previous.isStream) {
    // A cross-reference stream: type 1 entries (offset, generation), W [1 4 2], itself included.
    const streamNumber = next++;
    offsets.set(streamNumber, { offset: xrefOffset, generation: 0 });
    const numbers = [...offsets.keys()].sort((a, b) => a - b);
    const rows = Buffer.alloc(numbers.length * 7);
    numbers.forEach((number, index) => {
      const entry = offsets.get(number)!;
      rows.writeUInt8(1, index * 7);
      rows.writeUInt32BE(entry.offset, index * 7 + 1);
      rows.writeUInt16BE(entry.generation, index * 7 + 5);
    });
    const index = subsections(numbers).map(([start, count]) => `${start} ${count}`).join(' ');
    push(latin1(`${streamNumber} 0 obj\n<< /Type /XRef ${trailerEntries(next)} /W [1 4 2] /Index [${index}] /Length ${rows.length} >>\nstream\n`));
    push(rows);
    push(latin1(`\nendstream\nendobj\n`));
  } else {
    const numbers = [...offsets.keys()].sort((a, b) => a - b);
    let table = 'xref\n';
    for (const [start, count] of subsections(numbers)) {
      table += `${start} ${count}\n`;
      for (let number = start; number < start + count; number++) {
        const entry = offsets.get(number)!;
        table += `${String(entry.offset).padStart(10, '0')} ${String(entry.generation).padStart(5, '0')} n \n`;
      }
    }
    push(latin1(`${table}trailer\n<< ${trailerEntries(next)} >>\n`));
  }
  push(latin1(`startxref\n${xrefOffset}\n%%EOF\n`));

  const bytes = new Uint8Array(Buffer.concat([Buffer.from(pdf), ...parts]));
  // The hole, found in the signature object we wrote (its offset is known).
  const signatureAt = offsets.get(signatureRef.objectNumber)!.offset;
  const objectText = Buffer.from(bytes.subarray(signatureAt, signatureAt + 400)).toString('latin1');
  const holeStart = signatureAt + objectText.indexOf('/Contents <') + '/Contents '.length;
  const holeEnd = holeStart + hole.length + 2;
  const byteRange = [0, holeStart, holeEnd, bytes.length - holeEnd] as const;
  const written = `/ByteRange [${byteRange.join(' ')}]`;
  if (written.length > byteRangeSlot.length) throw new Error('the PDF is too large for its byte range');
  const slotAt = signatureAt + objectText.indexOf(byteRangeSlot);
  bytes.set(encoder.encode(written.padEnd(byteRangeSlot.length, ' ')), slotAt);
  return { bytes, byteRange };
}

/** Consecutive runs of sorted object numbers: [first, count]. */
function subsections(numbers: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const number of numbers) {
    const last = runs.at(-1);
    if (last && last[0] + last[1] === number) last[1]++;
    else runs.push([number, 1]);
  }
  return runs;
}

/** The SHA-256 of what the signature covers: the file but the hole. */
export function byteRangeDigest(prepared: PreparedSignature): Uint8Array {
  const [a, b, c, d] = prepared.byteRange;
  return new Uint8Array(createHash('sha256').update(prepared.bytes.subarray(a, a + b)).update(prepared.bytes.subarray(c, c + d)).digest());
}

/** The signed file: the CMS (DER) written into the hole, hex, the rest of the hole zeros. */
export function fillSignature(prepared: PreparedSignature, cms: Uint8Array): Uint8Array {
  const [, holeStart, holeEnd] = prepared.byteRange;
  const room = holeEnd - holeStart - 2;
  const hex = Buffer.from(cms).toString('hex');
  if (hex.length > room) throw new Error(`the signature (${cms.length} bytes) is larger than the room kept for it (${room / 2} bytes)`);
  const bytes = prepared.bytes.slice();
  bytes.set(encoder.encode(hex), holeStart + 1);
  return bytes;
}
