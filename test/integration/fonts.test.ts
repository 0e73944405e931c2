/**
 * Fonts, end to end: a document in every script the service promises is printed with the bundled
 * fonts only, its text reads back exactly as it was sent, no glyph is missing, and the page shows ink
 * where the text is. Also: web fonts (data: and public URLs), fonts in header/footer templates, and
 * proof that a font the host machine has is never used.
 */
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BRAND_FONT } from '../support/fixture-server.ts';
import { createKey, generateAndDownload, type TestKey } from '../support/api.ts';
import { SHIPPED_FONT_NAMES } from '../support/font-files.ts';
import { findItem, normalizeText, POINTS_PER_MM, readPdf } from '../support/pdf.ts';
import { embeddedFonts, readPdfText, type GlyphUse } from '../support/pdf-text.ts';
import { inkIn, rasterizePage, type Region } from '../support/raster.ts';

interface Sample {
  readonly script: string;
  readonly lang: string;
  readonly text: string;
  /** The bundled font that must draw the script's letters (any one of them). */
  readonly fonts: readonly string[];
  readonly rtl?: boolean;
}

const SAMPLES: readonly Sample[] = [
  { script: 'Latin', lang: 'pl', text: 'Zażółć gęślą jaźń – Ärger über Öl, façade, naïve', fonts: ['NotoSans-Regular'] },
  { script: 'Greek', lang: 'el', text: 'Τιμολόγιο: Γειά σου Κόσμε', fonts: ['NotoSans-Regular'] },
  { script: 'Cyrillic', lang: 'ru', text: 'Счёт: съешь же ещё этих мягких французских булок', fonts: ['NotoSans-Regular'] },
  { script: 'Japanese', lang: 'ja', text: '請求書：日本語のテキスト、カタカナ', fonts: ['NotoSansJP-Regular'] },
  { script: 'Chinese (Simplified)', lang: 'zh-CN', text: '发票：简体中文的文字', fonts: ['NotoSansSC-Regular'] },
  { script: 'Chinese (Traditional)', lang: 'zh-TW', text: '發票：繁體中文的文字', fonts: ['NotoSansTC-Regular'] },
  { script: 'Korean', lang: 'ko', text: '청구서 한국어 텍스트', fonts: ['NotoSansKR-Regular'] },
  { script: 'Arabic', lang: 'ar', text: 'فاتورة باللغة العربية', fonts: ['NotoSansArabic-Regular'], rtl: true },
  { script: 'Hebrew', lang: 'he', text: 'חשבונית בעברית', fonts: ['NotoSansHebrew-Regular'], rtl: true },
  // Noto Sans itself draws Devanagari; Noto Sans Devanagari is there for serif and monospace text.
  { script: 'Devanagari', lang: 'hi', text: 'हिन्दी में चालान', fonts: ['NotoSans-Regular', 'NotoSansDevanagari-Regular'] },
  { script: 'Thai', lang: 'th', text: 'ใบแจ้งหนี้ภาษาไทย', fonts: ['NotoSansThai-Regular'] },
];

/** Where the sample text is placed on the page, in points from the top left (20 mm in, 40 px tall). */
const TEXT_BOX: Region = { x: 20 * POINTS_PER_MM, y: 20 * POINTS_PER_MM, width: 450, height: 30 };
const BELOW_TEXT: Region = { x: 0, y: 120, width: 595, height: 700 };

function documentFor(text: string, lang: string, { rtl = false, style = '' } = {}): string {
  return (
    `<!doctype html><html lang="${lang}"${rtl ? ' dir="rtl"' : ''}><meta charset="utf-8">` +
    `<p style="position:absolute;left:20mm;top:20mm;margin:0;font:28px/40px sans-serif;white-space:nowrap;${style}">${text}</p></html>`
  );
}

const fontsOf = (glyphs: readonly GlyphUse[]) => new Set(glyphs.map((glyph) => glyph.font));

describe('fonts for every script', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  describe.each(SAMPLES)('$script', (sample) => {
    let bytes: Uint8Array;
    beforeAll(async () => {
      ({ bytes } = await generateAndDownload(key.apiKey, { html: documentFor(sample.text, sample.lang, sample) }));
    });

    it('reads back exactly the text that was sent', async () => {
      // Act
      const [page] = await readPdfText(bytes);

      // Assess
      expect(normalizeText(page!.text)).toBe(sample.text);
    });

    it('draws every character with a glyph of a bundled font (no missing-glyph boxes)', async () => {
      // Act
      const [page] = await readPdfText(bytes);
      const glyphs = page!.glyphs;

      // Assess: glyph id 0 is .notdef, the empty box a font draws for a character it lacks
      expect(glyphs.length).toBeGreaterThan(0);
      for (const glyph of glyphs) {
        expect(glyph).toMatchObject({ identity: true });
        expect(glyph.code, `a glyph of ${glyph.font}`).not.toBe(0);
        expect(SHIPPED_FONT_NAMES).toContain(glyph.font);
      }
      expect(glyphs.some((glyph) => sample.fonts.includes(glyph.font))).toBe(true);
    });

    it('embeds only bundled fonts, each with its font program', async () => {
      // Act
      const fonts = await embeddedFonts(bytes);

      // Assess
      expect(fonts.length).toBeGreaterThan(0);
      for (const font of fonts) {
        expect(SHIPPED_FONT_NAMES).toContain(font.name);
        expect(font.embedded).toBe(true);
      }
    });

    it('has text a PDF reader can extract without replacement characters', async () => {
      // Act: pdf.js, which reads glyph by glyph
      const pdf = await readPdf(bytes);

      // Assess
      expect(pdf.text).not.toContain('\uFFFD');
      expect(pdf.text.trim()).not.toBe('');
    });

    it('shows ink where the text is, and nowhere else', async () => {
      // Act
      const raster = await rasterizePage(bytes);

      // Assess
      expect(inkIn(raster, TEXT_BOX).coverage).toBeGreaterThan(0.03);
      expect(inkIn(raster, BELOW_TEXT).coverage).toBe(0);
    });
  });

  describe('colour emoji', () => {
    const text = 'Receipt 🧾✅🎉👍';
    let bytes: Uint8Array;
    beforeAll(async () => {
      ({ bytes } = await generateAndDownload(key.apiKey, { html: documentFor(text, 'en') }));
    });

    it('reads back the emoji', async () => {
      // Act
      const [page] = await readPdfText(bytes);

      // Assess
      expect(normalizeText(page!.text)).toBe(text);
    });

    it('draws them in colour, from the bundled Noto Color Emoji', async () => {
      // Act
      const raster = await rasterizePage(bytes);
      const fonts = await embeddedFonts(bytes);

      // Assess: colour glyphs become Type 3 fonts; no other bundled font has colour
      expect(fonts.map((font) => font.type)).toContain('Type3');
      expect(inkIn(raster, { ...TEXT_BOX, x: TEXT_BOX.x + 100, width: 150 }).colored).toBeGreaterThan(0.05);
      expect(inkIn(raster, { ...TEXT_BOX, width: 60 }).colored).toBe(0);
    });
  });

  it('picks the Chinese, Japanese or Korean form of a Han character by the document language', async () => {
    // Prepare: the same two characters, drawn differently in each tradition
    const expectations = [
      ['ja', 'NotoSansJP-Regular'],
      ['zh-CN', 'NotoSansSC-Regular'],
      ['zh-TW', 'NotoSansTC-Regular'],
      ['zh-HK', 'NotoSansTC-Regular'],
      ['ko', 'NotoSansKR-Regular'],
    ] as const;

    for (const [lang, font] of expectations) {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: documentFor('直角', lang) });
      const [page] = await readPdfText(bytes);

      // Assess
      expect({ lang, fonts: [...new Set(page!.glyphs.map((glyph) => glyph.font))] }).toEqual({ lang, fonts: [font] });
      expect(normalizeText(page!.text)).toBe('直角');
    }
  });
});

describe('default families', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it.each([
    ['text without any font-family', '', 'NotoSans-Regular'],
    ['sans-serif', 'font-family:sans-serif', 'NotoSans-Regular'],
    ['serif', 'font-family:serif', 'NotoSerif-Regular'],
    ['monospace', 'font-family:monospace', 'NotoSansMono-Regular'],
    ['system-ui', 'font-family:system-ui', 'NotoSans-Regular'],
    ['bold sans-serif', 'font-family:sans-serif;font-weight:bold', 'NotoSans-Bold'],
    ['italic serif', 'font-family:serif;font-style:italic', 'NotoSerif-Italic'],
    ['bold italic serif', 'font-family:serif;font-weight:700;font-style:italic', 'NotoSerif-BoldItalic'],
    ['bold monospace', 'font-family:monospace;font-weight:bold', 'NotoSansMono-Bold'],
    ['a font nobody has, falling back to its generic family', "font-family:'No Such Font',serif", 'NotoSerif-Regular'],
    ['Naskh Arabic, by name', "font-family:'Noto Naskh Arabic'", 'NotoNaskhArabic-Regular'],
  ])('prints %s in the bundled family', async (_name, style, font) => {
    // Prepare
    const html = `<!doctype html><p style="${style}">Invoice total</p>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });
    const [page] = await readPdfText(bytes);

    // Assess
    expect([...new Set(page!.glyphs.map((glyph) => glyph.font))]).toEqual([font]);
  });
});

describe('hermetic: only bundled fonts, wherever it runs', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it.each([
    // Installed on this Debian machine (and most Linux hosts); if it is missing the test still shows it is not used.
    ['DejaVu Sans', existsSync('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf') ? 'installed on this host' : 'absent from this host'],
    // What @sparticuz/chromium unpacks into /tmp/fonts and configures on Lambda.
    ['Open Sans', existsSync('/tmp/fonts/fonts/Open_Sans/OpenSans-Regular.ttf') ? 'unpacked by @sparticuz/chromium' : 'not unpacked'],
    ['Liberation Sans', 'a common metric-compatible Arial'],
  ])('does not use "%s" (%s), even when a document asks for it by name', async (family) => {
    // Prepare
    const html = `<!doctype html><p style="font-family:'${family}'">Asked for ${family}</p>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });
    const fonts = await embeddedFonts(bytes);

    // Assess
    expect(new Set(fonts.map((font) => font.name))).toEqual(new Set(['NotoSans-Regular']));
  });
});

describe('web fonts', () => {
  let key: TestKey;
  const brandFont = readFileSync(BRAND_FONT).toString('base64');
  // The "brand" font is Noto Sans Hebrew, which also draws Latin: Latin text in it proves the web font was used.
  const BRAND = 'NotoSansHebrew-Regular';
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it('uses an @font-face font from a data: URL', async () => {
    // Prepare
    const html = `<!doctype html><style>@font-face{font-family:Brand;src:url(data:font/ttf;base64,${brandFont}) format("truetype")}</style>
      <p style="font-family:Brand,serif">Branded invoice</p>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });
    const [page] = await readPdfText(bytes);

    // Assess
    expect([...new Set(page!.glyphs.map((glyph) => glyph.font))]).toEqual([BRAND]);
    expect(normalizeText(page!.text)).toBe('Branded invoice');
  });

  it('uses an @font-face font from an allowed public URL', async () => {
    // Prepare
    const html = `<!doctype html><style>@font-face{font-family:Brand;src:url(${inject('publicSite')}/brand-font.ttf)}</style>
      <p style="font-family:Brand,serif">Branded invoice</p>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });
    const [page] = await readPdfText(bytes);

    // Assess
    expect([...new Set(page!.glyphs.map((glyph) => glyph.font))]).toEqual([BRAND]);
  });
});

describe('fonts in header and footer templates', () => {
  let key: TestKey;
  const brandFont = readFileSync(BRAND_FONT).toString('base64');
  beforeAll(async () => {
    key = await createKey('pro');
  });

  async function headerOf(html: string, header: string) {
    const { bytes } = await generateAndDownload(key.apiKey, { html, header_html: header, margin: '25mm' });
    const pdf = await readPdf(bytes);
    const [page] = await readPdfText(bytes);
    return { pdf, page: page!, bytes };
  }

  it('prints a header in the body\'s font family when the template sets none', async () => {
    // Act
    const { pdf, page } = await headerOf('<!doctype html><body style="font-family:serif"><p>Body</p>', 'Header in the body font');

    // Assess
    const header = findItem(pdf.pages[0], 'Header in the body font');
    expect(header.fontSize).toBeCloseTo(7.5, 1); // the 10px default
    expect(new Set(page.glyphs.map((glyph) => glyph.font))).toEqual(new Set(['NotoSerif-Regular']));
  });

  it('prints a header in the family the template sets', async () => {
    // Act
    const { page } = await headerOf(
      '<!doctype html><body style="font-family:serif"><p>Body</p>',
      '<span style="font-family:monospace">MONO HEADER</span>',
    );

    // Assess
    expect(new Set(page.glyphs.map((glyph) => glyph.font))).toEqual(new Set(['NotoSerif-Regular', 'NotoSansMono-Regular']));
  });

  it('prints every script and emoji in a header with the bundled fonts', async () => {
    // Prepare
    const header = '日本語 한국어 עברית العربية ไทย हिन्दी Ελληνικά Кириллица ✅';

    // Act
    const { page } = await headerOf('<!doctype html><p>Body</p>', header);

    // Assess
    expect(normalizeText(page.text)).toContain(header);
    for (const glyph of page.glyphs.filter((glyph) => glyph.identity)) expect(glyph.code).not.toBe(0);
    for (const glyph of page.glyphs.filter((glyph) => glyph.fontType !== 'Type3')) expect(SHIPPED_FONT_NAMES).toContain(glyph.font);
  });

  it('uses a font the template declares with @font-face and a data: URL', async () => {
    // Prepare
    const header = `<style>@font-face{font-family:Brand;src:url(data:font/ttf;base64,${brandFont}) format("truetype")}</style>
      <span style="font-family:Brand">Branded header</span>`;

    // Act
    const { page } = await headerOf('<!doctype html><p>Body</p>', header);

    // Assess: the body is in Noto Sans, only the header in the template's font
    expect(new Set(page.glyphs.map((glyph) => glyph.font))).toEqual(new Set(['NotoSans-Regular', 'NotoSansHebrew-Regular']));
    expect(normalizeText(page.text)).toContain('Branded header');
  });
});
