/**
 * A visible signature's appearance as a reader shows it: the widget's normal appearance (a form
 * XObject), the fonts it embeds, and a flattened copy, a PDF whose last page draws nothing but that
 * appearance, for text extraction (pdf.js, or test/support/pdf-text.ts) to read as it reads a page.
 */
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream, PDFRef, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';

export interface SignatureAppearance {
  /** The form's bounding box [x1 y1 x2 y2] through its matrix (where the appearance draws), in points. */
  readonly bbox: readonly number[];
  /** The widget's rectangle on its page. */
  readonly rect: readonly number[];
  /** BaseFont of each font the appearance's resources name (subset tag included). */
  readonly fonts: readonly string[];
  /** The file with one more page, the box's size, drawing the appearance: the flattened copy. */
  readonly flattened: Uint8Array;
}

export async function readSignatureAppearance(pdf: Uint8Array): Promise<SignatureAppearance> {
  const document = await PDFDocument.load(pdf, { updateMetadata: false });
  // pdf-lib's object classes have private constructors: `instanceof` takes them as plain functions.
  const lookup = <T>(object: unknown, type: { readonly prototype: T; readonly name: string }): T => {
    const resolved = object instanceof PDFRef ? document.context.lookup(object) : object;
    if (!(resolved instanceof (type as unknown as new () => T))) throw new Error(`expected a ${type.name}, found ${String(resolved)}`);
    return resolved;
  };
  const form = lookup(document.catalog.get(PDFName.of('AcroForm')), PDFDict);
  const fields = lookup(form.get(PDFName.of('Fields')), PDFArray).asArray().map((field) => lookup(field, PDFDict));
  const widget = fields.find((field) => field.get(PDFName.of('FT')) === PDFName.of('Sig'));
  if (!widget) throw new Error('the file has no signature field');
  const normal = lookup(widget.get(PDFName.of('AP')), PDFDict).get(PDFName.of('N'));
  const appearance = lookup(normal, PDFRawStream);
  const numbers = (array: PDFArray) => array.asArray().map((item) => lookup(item, PDFNumber).asNumber());
  const matrix = appearance.dict.has(PDFName.of('Matrix')) ? numbers(lookup(appearance.dict.get(PDFName.of('Matrix')), PDFArray)) : [1, 0, 0, 1, 0, 0];
  if (matrix.slice(0, 4).join(' ') !== '1 0 0 1') throw new Error(`the appearance's matrix [${matrix.join(' ')}] is more than a translation`);
  const [x1, y1, x2, y2] = numbers(lookup(appearance.dict.get(PDFName.of('BBox')), PDFArray));
  const bbox = [x1! + matrix[4]!, y1! + matrix[5]!, x2! + matrix[4]!, y2! + matrix[5]!];
  const rect = numbers(lookup(widget.get(PDFName.of('Rect')), PDFArray));
  const resources = appearance.dict.get(PDFName.of('Resources'));
  const fontDict = resources ? lookup(resources, PDFDict).get(PDFName.of('Font')) : undefined;
  const fonts = fontDict
    ? lookup(fontDict, PDFDict)
        .values()
        .map((font) => lookup(font, PDFDict).get(PDFName.of('BaseFont'))?.toString().slice(1) ?? '')
    : [];
  // The flattened copy: the appearance drawn on a page of its own, as a viewer draws it in the box.
  const page = document.addPage([bbox[2]! - bbox[0]!, bbox[3]! - bbox[1]!]);
  const name = page.node.newXObject('SigAppearance', normal as PDFRef);
  page.pushOperators(pushGraphicsState(), drawObject(name), popGraphicsState());
  return { bbox, rect, fonts, flattened: await document.save() };
}
