/**
 * The bundled fonts and the fontconfig configuration (lib/render/fonts.ts): every font file is
 * where the list says, draws the text of the scripts it is there for, the configuration admits
 * nothing else and ranks the fonts as documented, and the bundle list is complete.
 */
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUNDLED_FONTS,
  bundledFontFiles,
  DEFAULT_FAMILIES,
  FONT_BUNDLE_PATHS,
  FONT_PACKAGES,
  fontconfigXml,
  fontEnvironment,
  linkFontDirectory,
  locateBundledFile,
  SCRIPT_FAMILIES,
} from '#lib/render/fonts.ts';
import { regularFace, SCRIPT_SAMPLES } from '../support/font-files.ts';
import packageJson from '../../package.json' with { type: 'json' };

/** fontkit (CommonJS) reads a font's character map: which characters it really draws. */
const fontkit = createRequire(import.meta.url)('fontkit') as {
  openSync(path: string): { hasGlyphForCodePoint(codePoint: number): boolean };
};
const coverage = new Map<string, (character: string) => boolean>();
/** Whether the regular face of a bundled family has a glyph for a character. */
function draws(family: string, character: string): boolean {
  let has = coverage.get(family);
  if (!has) {
    const font = fontkit.openSync(regularFace(family).path);
    has = (character) => font.hasGlyphForCodePoint(character.codePointAt(0)!);
    coverage.set(family, has);
  }
  return has(character);
}
/** The families sans-serif resolves to, in the order fontconfig is told to try them. */
function sansSerifOrder(xml: string): string[] {
  const prefer = /<alias binding="same"><family>sans-serif<\/family><prefer>(.*?)<\/prefer>/.exec(xml)![1]!;
  return [...prefer.matchAll(/<family>([^<]*)<\/family>/g)].map((match) => match[1]!);
}

describe('bundled fonts', () => {
  it('come from packages that are exact-version dependencies', () => {
    // Prepare
    const dependencies: Record<string, string> = packageJson.dependencies;

    // Assess: runtime dependencies, pinned, so a deployment ships exactly the tested fonts
    for (const name of FONT_PACKAGES) expect(dependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('are all installed, as TrueType files', () => {
    // Act
    const files = bundledFontFiles();

    // Assess
    expect(files).toHaveLength(BUNDLED_FONTS.length);
    for (const file of files) {
      const magic = readFileSync(file).subarray(0, 4).toString('hex');
      expect(['00010000', '4f54544f'], file).toContain(magic); // TrueType or CFF OpenType, not WOFF
    }
  });

  it('list every file a deployment must ship, licences included, all present', () => {
    // Assess
    for (const path of FONT_BUNDLE_PATHS) expect(existsSync(join('node_modules', path)), path).toBe(true);
    for (const name of FONT_PACKAGES) expect(FONT_BUNDLE_PATHS).toContain(`${name}/LICENSE_FONT`);
  });

  it('cover every script the service promises with a family of its own or Noto Sans', () => {
    // Assess
    const families = new Set(BUNDLED_FONTS.map((font) => font.family));
    for (const family of [...Object.values(DEFAULT_FAMILIES), ...SCRIPT_FAMILIES.flatMap((script) => [script.family, script.serif ?? script.family]), 'Noto Color Emoji']) {
      expect(families).toContain(family);
    }
  });

  it('come in bold wherever the package has a bold (CJK and emoji in their regular weight only)', () => {
    // Prepare: the faces each package really holds
    const shipped = new Set(BUNDLED_FONTS.map((font) => `${font.package}/${font.file.split('/')[0]}`));

    // Assess
    for (const name of FONT_PACKAGES) {
      const faces = readdirSync(join('node_modules', name));
      expect(shipped, name).toContain(`${name}/400Regular`);
      if (faces.includes('700Bold') && !/noto-sans-(jp|sc|tc|kr)$/.test(name)) expect(shipped, name).toContain(`${name}/700Bold`);
    }
  });

  it.each(SCRIPT_SAMPLES)('draw every letter of $script ($lang) with the script\'s own family', ({ text, fonts }) => {
    // Prepare: letters and marks must come from the script's family; spaces, digits and punctuation
    // may come from the first font (Noto Sans) or the fallback order
    const characters = [...new Set(text)].filter((character) => !/\s/u.test(character));
    const order = sansSerifOrder(fontconfigXml({ fontDirs: [], cacheDir: '/tmp' }));

    // Act
    const lettersMissing = characters.filter((character) => /[\p{L}\p{M}]/u.test(character) && !fonts.some((family) => draws(family, character)));
    const othersMissing = characters.filter((character) => ![...fonts, ...order].some((family) => draws(family, character)));

    // Assess
    expect(lettersMissing.map((character) => `U+${character.codePointAt(0)!.toString(16).toUpperCase()}`)).toEqual([]);
    expect(othersMissing).toEqual([]);
  });

  it('stay within the documented size budget (docs/api.md, "Bundled fonts")', () => {
    // Act
    const bytes = bundledFontFiles().reduce((sum, file) => sum + statSync(file).size, 0);

    // Assess: 66.3 MiB of font files
    expect(bytes / 1024 / 1024).toBeLessThan(70);
  });
});

describe('SCRIPT_FAMILIES', () => {
  it('names each script and each language once', () => {
    // Assess
    const langs = SCRIPT_FAMILIES.flatMap((script) => script.langs);
    expect(new Set(SCRIPT_FAMILIES.map((script) => script.name)).size).toBe(SCRIPT_FAMILIES.length);
    expect(new Set(langs).size).toBe(langs.length);
    for (const lang of langs) expect(lang).toMatch(/^[a-z]{2,3}(-[a-z0-9]+)*$/);
  });

  it('has real text for every script it promises', () => {
    // Assess
    for (const { family } of SCRIPT_FAMILIES) expect(SCRIPT_SAMPLES.some((sample) => sample.fonts[0] === family), family).toBe(true);
  });
});

describe('fontconfigXml', () => {
  const xml = fontconfigXml({ fontDirs: ['/fonts/a', '/fonts/b&c'], cacheDir: '/tmp/cache' });

  it('lists only the given directories and includes no other configuration', () => {
    // Assess
    expect([...xml.matchAll(/<dir>([^<]*)<\/dir>/g)].map((match) => match[1])).toEqual(['/fonts/a', '/fonts/b&amp;c']);
    expect(xml).not.toMatch(/<include|\/usr\/share\/fonts|\/etc\/fonts|~\/\.fonts|prefix="xdg"/);
  });

  it('keeps the cache where the process may write', () => {
    expect(xml).toContain('<cachedir>/tmp/cache</cachedir>');
  });

  it('resolves the generic families to the bundled ones, each followed by the script fallbacks', () => {
    // Assess
    for (const [generic, family] of Object.entries(DEFAULT_FAMILIES)) {
      const alias = new RegExp(`<alias binding="same"><family>${generic}</family><prefer><family>${family}</family>(.*?)</prefer>`).exec(xml);
      expect(alias, generic).not.toBeNull();
      expect(alias![1]).toContain('<family>Noto Sans JP</family>');
      expect(alias![1]).toContain('<family>Noto Color Emoji</family>');
    }
  });

  it('gives a request without a family the sans-serif list', () => {
    expect(xml).toMatch(/<edit name="family" mode="append_last"><string>sans-serif<\/string><\/edit>/);
  });

  it('tries every script family after the generic one, in SCRIPT_FAMILIES order, then emoji', () => {
    // Assess
    expect(sansSerifOrder(xml)).toEqual(['Noto Sans', ...SCRIPT_FAMILIES.map((script) => script.family), 'Noto Color Emoji']);
    const serif = /<alias binding="same"><family>serif<\/family><prefer>(.*?)<\/prefer>/.exec(xml)![1]!;
    expect(serif).toMatch(/^<family>Noto Serif<\/family><family>Noto Naskh Arabic<\/family>/);
  });

  it.each([
    // [character, why several fonts have it, the family the order gives it when the text has no language]
    ['\u3002', 'the ideographic full stop, also in the Mongolian and Yi fonts', 'Noto Sans JP'],
    ['\uFF0C', 'the full-width comma, also in the Mongolian and Yi fonts', 'Noto Sans JP'],
    ['\u060C', 'the Arabic comma, also in the Syriac, Thaana and N\'Ko fonts', 'Noto Sans Arabic'],
    ['\u0965', 'the double danda, in every Indic font', 'Noto Sans'],
    ['\u25CC', 'the dotted circle shown for a lone combining mark, in nearly every font', 'Noto Sans'],
  ])('gives %s (%s) to %s when nothing else decides', (character, _why, family) => {
    // Act: the first family in the order that really has the character
    const first = sansSerifOrder(xml).find((candidate) => candidate !== 'Noto Color Emoji' && draws(candidate, character));

    // Assess
    expect(first).toBe(family);
  });

  it.each([
    ['ja', 'Noto Sans JP'],
    ['zh-cn', 'Noto Sans SC'],
    ['zh', 'Noto Sans SC'],
    ['zh-tw', 'Noto Sans TC'],
    ['zh-hk', 'Noto Sans TC'],
    ['ko', 'Noto Sans KR'],
    ['ur', 'Noto Sans Arabic'],
    ['fa', 'Noto Sans Arabic'],
    ['bn', 'Noto Sans Bengali'],
    ['pa', 'Noto Sans Gurmukhi'],
    ['or', 'Noto Sans Oriya'],
    ['ta', 'Noto Sans Tamil'],
    ['si', 'Noto Sans Sinhala'],
    ['bo', 'Noto Serif Tibetan'],
    ['am', 'Noto Sans Ethiopic'],
    ['ti', 'Noto Sans Ethiopic'],
    ['aii', 'Noto Sans Syriac'],
    ['dv', 'Noto Sans Thaana'],
    ['mn-mong', 'Noto Sans Mongolian'],
    ['ii', 'Noto Sans Yi'],
  ])('puts the family of lang %s (%s) first among the fallbacks', (lang, family) => {
    expect(xml).toContain(
      `<test name="lang" compare="eq"><string>${lang}</string></test><test name="family"><string>Noto Sans</string></test>` +
        `<edit name="family" mode="append" binding="same"><string>${family}</string></edit>`,
    );
  });

  it('has one language rule per language of SCRIPT_FAMILIES, after the generic families are expanded', () => {
    // Assess
    const rules = [...xml.matchAll(/<test name="lang" compare="eq"><string>([^<]*)<\/string>/g)].map((match) => match[1]);
    expect(rules).toEqual(SCRIPT_FAMILIES.flatMap((script) => script.langs));
    expect(xml.indexOf('<test name="lang"')).toBeGreaterThan(xml.indexOf('<family>monospace</family><prefer>'));
  });
});


describe('locateBundledFile', () => {
  it('finds a file in node_modules of the start directory or any parent, as Node resolves packages', () => {
    // Prepare
    const root = mkdtempSync(join(tmpdir(), 'fonts-test-'));
    mkdirSync(join(root, 'node_modules', '@scope', 'pkg'), { recursive: true });
    writeFileSync(join(root, 'node_modules', '@scope', 'pkg', 'a.ttf'), '');
    mkdirSync(join(root, 'app', 'deep'), { recursive: true });

    try {
      // Act + Assess
      expect(locateBundledFile('@scope/pkg/a.ttf', [join(root, 'app', 'deep')])).toBe(join(root, 'node_modules', '@scope', 'pkg', 'a.ttf'));
      expect(locateBundledFile('@scope/pkg/missing.ttf', [join(root, 'app')])).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('names every missing file when fonts are not installed', () => {
    // Act + Assess
    expect(() => bundledFontFiles(['/nonexistent'])).toThrow(/Bundled fonts are missing.*noto-sans\/400Regular/);
  });
});

describe('linkFontDirectory', () => {
  it('links exactly the given files into one directory, once, named by their paths', () => {
    // Prepare
    const root = mkdtempSync(join(tmpdir(), 'fonts-test-'));
    const files = ['a/One_400Regular.ttf', 'b/Two_700Bold.ttf'].map((name) => join(root, 'packages', name));
    for (const file of files) {
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, file);
    }

    try {
      // Act
      const dir = linkFontDirectory(root, files);
      const again = linkFontDirectory(root, files);
      const other = linkFontDirectory(root, files.slice(0, 1));

      // Assess
      expect(again).toBe(dir);
      expect(other).not.toBe(dir);
      expect(readdirSync(dir).sort()).toEqual(['One_400Regular.ttf', 'Two_700Bold.ttf']);
      for (const file of files) expect(readlinkSync(join(dir, basename(file)))).toBe(file);
      expect(readdirSync(root).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses two files of the same name', () => {
    expect(() => linkFontDirectory(tmpdir(), ['/a/Same.ttf', '/b/Same.ttf'])).toThrow(/unique/);
  });
});

describe('fontEnvironment', () => {
  it('points fontconfig at a written configuration that lists one directory of links to exactly the bundled fonts', () => {
    // Act
    const environment = fontEnvironment();

    // Assess
    expect(environment.FONTCONFIG_FILE.startsWith(environment.FONTCONFIG_PATH)).toBe(true);
    const xml = readFileSync(environment.FONTCONFIG_FILE, 'utf8');
    const dirs = [...xml.matchAll(/<dir>([^<]*)<\/dir>/g)].map((match) => match[1]!);
    expect(dirs).toHaveLength(1);
    const linked = readdirSync(dirs[0]!).map((name) => realpathSync(join(dirs[0]!, name)));
    expect(linked.sort()).toEqual(bundledFontFiles().map((file) => realpathSync(file)).sort());
  });

  it('returns the same configuration on every call', () => {
    expect(fontEnvironment()).toBe(fontEnvironment());
  });
});
