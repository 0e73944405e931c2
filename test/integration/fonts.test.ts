/**
 * Fonts, end to end: real text in every script the service promises (Article 1 of the Universal
 * Declaration of Human Rights, with its language and no font-family) is printed with the bundled
 * fonts only, by the script's own family, reads back exactly as it was sent, no glyph is missing,
 * and the page shows ink where the text is. Also: colour emoji, the regional Han forms, web fonts
 * (data: and public URLs), fonts in headers and footers, Chromium's per-script default fonts,
 * and proof that a font the host machine has is never used.
 */
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BRAND_FONT } from '../support/fixture-server.ts';
import { createKey, generateAndDownload, type TestKey } from '../support/api.ts';
import { regularFace, SCRIPT_SAMPLES, SHIPPED_FONT_NAMES, type ScriptSample } from '../support/font-files.ts';
import { findItem, normalizeText, POINTS_PER_MM, readPdf } from '../support/pdf.ts';
import { embeddedFonts, readPdfText, type GlyphUse, type PageText } from '../support/pdf-text.ts';
import { inkIn, rasterizePage, type Region } from '../support/raster.ts';

/** Where the sample text is placed on the page, in points from the top left (20 mm in, 40 px tall). */
const TEXT_BOX: Region = { x: 20 * POINTS_PER_MM, y: 20 * POINTS_PER_MM, width: 450, height: 30 };

function documentFor(text: string, lang: string, { rtl = false, style = '' } = {}): string {
  return (
    `<!doctype html><html lang="${lang}"${rtl ? ' dir="rtl"' : ''}><meta charset="utf-8">` +
    `<p style="position:absolute;left:20mm;top:20mm;margin:0;font:28px/40px sans-serif;white-space:nowrap;${style}">${text}</p></html>`
  );
}

/**
 * One page per sample, each on one line (A3 landscape, 10 px: the longest, Tamil, is 1,470 px of the
 * 1,510 available), so that each page's glyphs are one language's and its text reads back in order.
 */
function pagePerSample(samples: readonly ScriptSample[], line: (sample: ScriptSample) => string): string {
  return (
    '<!doctype html><html><meta charset="utf-8"><style>@page{size:A3 landscape;margin:10mm}' +
    // Room above each page's first line: a line in a tall script (Tibetan, Myanmar) may have marks
    // above its line box, and Chromium paints what crosses the top of a page at the foot of the
    // page before.
    'body{margin:0}div{break-after:page;padding-top:5mm}p{margin:0;font-size:10px;white-space:nowrap}</style>' +
    samples.map((sample) => `<div>${line(sample)}</div>`).join('') +
    '</html>'
  );
}
const withLanguage = (sample: ScriptSample, style = '') =>
  `<p lang="${sample.lang}"${sample.rtl ? ' dir="rtl"' : ''} style="${style}">${sample.text}</p>`;
const withoutLanguage = (sample: ScriptSample, style: string) => `<p${sample.rtl ? ' dir="rtl"' : ''} style="${style}">${sample.text}</p>`;

/** The line of text at the top of an A3 landscape page (10 mm margin, 5 mm padding), and the rest of the page. */
const A3_LINE: Region = { x: 0, y: 15 * POINTS_PER_MM - 8, width: 420 * POINTS_PER_MM, height: 40 };
const A3_BELOW_LINE: Region = { x: 0, y: 15 * POINTS_PER_MM + 40, width: 420 * POINTS_PER_MM, height: 297 * POINTS_PER_MM };

const NOTO_SANS = regularFace('Noto Sans').name;
const countFonts = (glyphs: readonly GlyphUse[]) => {
  const counts = new Map<string, number>();
  for (const glyph of glyphs) counts.set(glyph.font, (counts.get(glyph.font) ?? 0) + 1);
  return counts;
};

/**
 * What a reader checks on a page: every glyph is a real one (glyph id 0 is .notdef, the empty box a
 * font draws for a character it lacks) of a bundled font, the script's family draws the most of
 * them, and any other font is one of `others` (Noto Sans draws spaces, digits and Latin
 * punctuation unless Chromium starts the text in the script's family).
 */
function expectDrawnBy(page: PageText | undefined, sample: ScriptSample, others: readonly string[]) {
  const glyphs = page?.glyphs ?? [];
  expect(glyphs.length, sample.script).toBeGreaterThan(0);
  for (const glyph of glyphs) {
    expect(glyph, sample.script).toMatchObject({ identity: true });
    expect(glyph.code, `${sample.script}: a glyph of ${glyph.font}`).not.toBe(0);
    expect(SHIPPED_FONT_NAMES).toContain(glyph.font);
  }
  const counts = countFonts(glyphs);
  const own = sample.fonts.map((family) => regularFace(family).name);
  const [mostUsed] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  expect({ script: sample.script, mostUsed }).toEqual({ script: sample.script, mostUsed: expect.toBeOneOf(own) });
  const allowed = [...own, ...others, ...(sample.punctuationFrom ?? []).map((family) => regularFace(family).name)];
  for (const font of counts.keys()) expect({ script: sample.script, font }).toEqual({ script: sample.script, font: expect.toBeOneOf(allowed) });
}

/**
 * Every sample but Chinese: Chromium's renderer remembers the font it found for a character the
 * first font lacks, whatever the language (lib/render/fonts.ts), so in one document the first of
 * Japanese and Chinese would decide the form of every Han character. Chinese is printed apart.
 */
const ONE_DOCUMENT = SCRIPT_SAMPLES.filter((sample) => !sample.lang.startsWith('zh'));
const CHINESE = SCRIPT_SAMPLES.filter((sample) => sample.lang.startsWith('zh'));

describe('fonts for every script', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  describe(`real text in ${ONE_DOCUMENT.length} languages, one page each, with its lang and no font-family`, () => {
    let bytes: Uint8Array;
    let pages: PageText[];
    beforeAll(async () => {
      ({ bytes } = await generateAndDownload(key.apiKey, { html: pagePerSample(ONE_DOCUMENT, (sample) => withLanguage(sample)) }));
      pages = await readPdfText(bytes);
    });

    it('prints one page per language', () => {
      expect(pages).toHaveLength(ONE_DOCUMENT.length);
    });

    it.each(ONE_DOCUMENT.map((sample, index) => ({ ...sample, index })))(
      '$script ($lang): drawn by $fonts.0, every glyph a real one of a bundled font',
      (sample) => {
        expectDrawnBy(pages[sample.index], sample, [NOTO_SANS]);
      },
    );

    it.each(ONE_DOCUMENT.map((sample, index) => ({ ...sample, index })))('$script ($lang): reads back exactly as sent', (sample) => {
      // Act
      const text = normalizeText(pages[sample.index]!.text);

      // Assess
      if (sample.readBackUnordered) expect([...text].sort()).toEqual([...normalizeText(sample.text)].sort());
      else expect(text).toBe(normalizeText(sample.text));
    });

    it('embeds only bundled fonts, each with its font program', async () => {
      // Act
      const fonts = await embeddedFonts(bytes);

      // Assess
      const names = fonts.map((font) => font.name);
      for (const sample of ONE_DOCUMENT) expect(names, sample.script).toEqual(expect.arrayContaining([expect.toBeOneOf(sample.fonts.map((family) => regularFace(family).name))]));
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
      for (const page of pdf.pages) expect(page.text.trim()).not.toBe('');
    });

    it('shows ink on every page where its line is, and nowhere else', async () => {
      for (const [index, sample] of ONE_DOCUMENT.entries()) {
        // Act
        const raster = await rasterizePage(bytes, index + 1, 1);

        // Assess
        expect({ script: sample.script, ink: inkIn(raster, A3_LINE).coverage > 0.003 }).toEqual({ script: sample.script, ink: true });
        expect({ script: sample.script, below: inkIn(raster, A3_BELOW_LINE).coverage }).toEqual({ script: sample.script, below: 0 });
      }
    });
  });

  describe.each(CHINESE)('$script ($lang), in a document of its own', (sample) => {
    it(`is drawn by ${sample.fonts[0]} and reads back exactly`, async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagePerSample([sample], (entry) => withLanguage(entry)) });
      const [page] = await readPdfText(bytes);

      // Assess
      expectDrawnBy(page, sample, [NOTO_SANS]);
      expect(normalizeText(page!.text)).toBe(normalizeText(sample.text));
    });
  });

  describe('the same text with no language, in sans-serif, serif and monospace: the characters alone find the fonts', () => {
    let pages: PageText[];
    const GENERIC = ['font-family:sans-serif', 'font-family:serif', 'font-family:monospace'];
    beforeAll(async () => {
      const html = pagePerSample(ONE_DOCUMENT, (sample) => GENERIC.map((style) => withoutLanguage(sample, style)).join(''));
      pages = await readPdfText((await generateAndDownload(key.apiKey, { html })).bytes);
    });

    it.each(ONE_DOCUMENT.map((sample, index) => ({ ...sample, index })))('$script: drawn by $fonts.0, every glyph a real one', (sample) => {
      // Assess: the three lines start in Noto Sans, Noto Serif and Noto Sans Mono, which draw
      // spaces, digits and punctuation (and Latin, Greek, Cyrillic)
      const generic = ['Noto Sans', 'Noto Serif', 'Noto Sans Mono'].map((family) => regularFace(family).name);
      const own = sample.fonts.map((family) => regularFace(family).name);
      expectDrawnBy(pages[sample.index], { ...sample, fonts: [...sample.fonts, 'Noto Serif', 'Noto Sans Mono'] }, generic);
      expect([...countFonts(pages[sample.index]!.glyphs).keys()].some((font) => own.includes(font)), sample.script).toBe(true);
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

describe('fonts in headers and footers', () => {
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

  it('prints a header in the body\'s font family when the header sets none', async () => {
    // Act
    const { pdf, page } = await headerOf('<!doctype html><body style="font-family:serif"><p>Body</p>', 'Header in the body font');

    // Assess
    const header = findItem(pdf.pages[0], 'Header in the body font');
    expect(header.fontSize).toBeCloseTo(7.5, 1); // the 10px default
    expect(new Set(page.glyphs.map((glyph) => glyph.font))).toEqual(new Set(['NotoSerif-Regular']));
  });

  it('prints a header in the family it sets', async () => {
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
    const header = '日本語 한국어 עברית العربية ไทย हिन्दी বাংলা தமிழ் ქართული አማርኛ ខ្មែរ Ελληνικά Кириллица ✅';

    // Act
    const { page } = await headerOf('<!doctype html><p>Body</p>', header);

    // Assess
    expect(normalizeText(page.text)).toContain(header);
    for (const glyph of page.glyphs.filter((glyph) => glyph.identity)) expect(glyph.code).not.toBe(0);
    for (const glyph of page.glyphs.filter((glyph) => glyph.fontType !== 'Type3')) expect(SHIPPED_FONT_NAMES).toContain(glyph.font);
  });

  it('uses a font the header declares with @font-face and a data: URL', async () => {
    // Prepare
    const header = `<style>@font-face{font-family:Brand;src:url(data:font/ttf;base64,${brandFont}) format("truetype")}</style>
      <span style="font-family:Brand">Branded header</span>`;

    // Act
    const { page } = await headerOf('<!doctype html><p>Body</p>', header);

    // Assess: the body is in Noto Sans, only the header in its own font
    expect(new Set(page.glyphs.map((glyph) => glyph.font))).toEqual(new Set(['NotoSans-Regular', 'NotoSansHebrew-Regular']));
    expect(normalizeText(page.text)).toContain('Branded header');
  });
});
