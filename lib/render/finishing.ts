/**
 * Finishing a printed PDF (shared/spec/beyond.md, "Page and document"): metadata, a watermark and
 * encryption, applied to the file Chromium printed, never by printing it again. Its pages, text,
 * tags and links stay as printed: the file is loaded and saved whole (every object is kept, the
 * structure tree and the outline included), and only what is asked for is added.
 */
import { PDFDocument, PDFName, beginMarkedContent, degrees, endMarkedContent, type PDFPage, type PDFEmbeddedPage } from 'pdf-lib';
import type { Finishing, Watermark } from './finishing-options.ts';
import { encryptPdf } from './encryption.ts';

/** Whether anything is to be done to the printed file. */
export function needsFinishing(finishing: Finishing): boolean {
  return finishing.metadata !== undefined || finishing.watermark !== undefined || finishing.encryption !== undefined;
}

/**
 * The finishing step as renderPdf takes it (lib/render/render.ts): finishPdf itself, or the same run
 * in a worker thread (lib/documents/pdf-workers.ts), which this layer knows nothing of.
 */
export type FinishPdf = typeof finishPdf;

/**
 * The finished file and its page count. `stamp` is the watermark's text printed by Chromium
 * (lib/render/watermark-stamp.ts), present when a watermark is asked for. The pages are counted
 * before encryption, which changes no page but hides the page tree in encrypted object streams.
 */
export async function finishPdf(
  printed: { readonly bytes: Uint8Array; readonly pages: number },
  finishing: Finishing,
  stamp?: Uint8Array,
): Promise<{ bytes: Uint8Array; pages: number }> {
  let { bytes, pages } = printed;
  if (finishing.metadata || finishing.watermark) {
    // updateMetadata false: the file keeps its producer and dates rather than getting pdf-lib's.
    const document = await PDFDocument.load(bytes, { updateMetadata: false });
    if (finishing.metadata) writeMetadata(document, finishing.metadata);
    if (finishing.watermark) {
      if (!stamp) throw new Error('a watermark needs its printed stamp');
      const [embedded] = await document.embedPdf(stamp, [0]);
      for (const page of document.getPages()) drawWatermark(page, embedded as PDFEmbeddedPage, finishing.watermark);
    }
    bytes = await document.save();
    pages = document.getPageCount();
  }
  return { bytes: finishing.encryption ? await encryptPdf(bytes, finishing.encryption) : bytes, pages };
}

/** The share of the page's width and height the turned watermark spans at most. */
const WATERMARK_SPAN = 0.8;

/**
 * The stamp centred on the page, turned by the angle and scaled so that its turned outline spans at
 * most 80 % of the page either way. Marked as an artifact: in a tagged PDF, screen readers skip it
 * rather than read it into the document.
 */
function drawWatermark(page: PDFPage, stamp: PDFEmbeddedPage, watermark: Watermark): void {
  const { width, height } = page.getSize();
  const { x: left, y: bottom } = page.getMediaBox();
  const radians = (watermark.angle * Math.PI) / 180;
  const cos = Math.cos(radians);
  const sin = Math.sin(radians);
  const outlineWidth = stamp.width * Math.abs(cos) + stamp.height * Math.abs(sin);
  const outlineHeight = stamp.width * Math.abs(sin) + stamp.height * Math.abs(cos);
  const scale = WATERMARK_SPAN * Math.min(width / outlineWidth, height / outlineHeight);
  const w = stamp.width * scale;
  const h = stamp.height * scale;
  // drawPage turns about its (x, y) corner: place that corner so the stamp's centre is the page's.
  const x = left + width / 2 - (cos * w - sin * h) / 2;
  const y = bottom + height / 2 - (sin * w + cos * h) / 2;
  page.pushOperators(beginMarkedContent('Artifact'));
  // Its opacity is the stamp's own (lib/render/watermark-stamp.ts).
  page.drawPage(stamp, { x, y, width: w, height: h, rotate: degrees(watermark.angle) });
  page.pushOperators(endMarkedContent());
}

type Metadata = NonNullable<Finishing['metadata']>;

/** The info dictionary, and the same facts as XMP (which PDF 2.0 and PDF/UA readers look at first). */
function writeMetadata(document: PDFDocument, metadata: Metadata): void {
  const keywords = metadata.keywords?.join(', ');
  if (metadata.title !== undefined) document.setTitle(metadata.title, { showInWindowTitleBar: true });
  if (metadata.author !== undefined) document.setAuthor(metadata.author);
  if (metadata.subject !== undefined) document.setSubject(metadata.subject);
  if (keywords !== undefined) document.setKeywords([keywords]);
  if (metadata.creator !== undefined) document.setCreator(metadata.creator);
  const xmp = xmpPacket(metadata.keywords ?? [], {
    title: document.getTitle(),
    author: document.getAuthor(),
    subject: document.getSubject(),
    keywords: document.getKeywords(),
    creator: document.getCreator(),
    producer: document.getProducer(),
    created: document.getCreationDate(),
  });
  // XMP is UTF-8 (pdf-lib would write a string's characters as single bytes).
  const stream = document.context.stream(new TextEncoder().encode(xmp), { Type: 'Metadata', Subtype: 'XML' });
  document.catalog.set(PDFName.of('Metadata'), document.context.register(stream));
}

const escapeXml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[character] as string);

/** An XMP packet (ISO 16684-1) with the Dublin Core, XMP and PDF properties of the info dictionary. */
function xmpPacket(keywords: readonly string[], facts: {
  title?: string | undefined;
  author?: string | undefined;
  subject?: string | undefined;
  keywords?: string | undefined;
  creator?: string | undefined;
  producer?: string | undefined;
  created?: Date | undefined;
}): string {
  const alt = (name: string, value: string | undefined) =>
    value === undefined ? '' : `<${name}><rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(value)}</rdf:li></rdf:Alt></${name}>`;
  const simple = (name: string, value: string | undefined) => (value === undefined ? '' : `<${name}>${escapeXml(value)}</${name}>`);
  return [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">',
    '<dc:format>application/pdf</dc:format>',
    alt('dc:title', facts.title),
    facts.author === undefined ? '' : `<dc:creator><rdf:Seq><rdf:li>${escapeXml(facts.author)}</rdf:li></rdf:Seq></dc:creator>`,
    alt('dc:description', facts.subject),
    simple('pdf:Keywords', facts.keywords),
    keywords.length === 0 ? '' : `<dc:subject><rdf:Bag>${keywords.map((keyword) => `<rdf:li>${escapeXml(keyword)}</rdf:li>`).join('')}</rdf:Bag></dc:subject>`,
    simple('xmp:CreatorTool', facts.creator),
    simple('pdf:Producer', facts.producer),
    simple('xmp:CreateDate', facts.created?.toISOString()),
    '</rdf:Description></rdf:RDF></x:xmpmeta>',
    '<?xpacket end="w"?>',
  ].join('');
}
