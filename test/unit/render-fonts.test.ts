/**
 * The bundled fonts and the fontconfig configuration (lib/render/fonts.ts): every font file is
 * where the list says, the configuration admits nothing else, and the bundle list is complete.
 */
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUNDLED_FONTS,
  bundledFontFiles,
  DEFAULT_FAMILIES,
  FONT_BUNDLE_PATHS,
  FONT_PACKAGES,
  fontconfigXml,
  fontEnvironment,
  locateBundledFile,
} from '#lib/render/fonts.ts';
import packageJson from '../../package.json' with { type: 'json' };

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
    for (const family of [
      ...Object.values(DEFAULT_FAMILIES),
      'Noto Sans Arabic', 'Noto Sans Hebrew', 'Noto Sans Devanagari', 'Noto Sans Thai',
      'Noto Sans JP', 'Noto Sans SC', 'Noto Sans TC', 'Noto Sans KR', 'Noto Color Emoji',
    ]) {
      expect(families).toContain(family);
    }
  });

  it('stay within the documented size budget (README "Fonts")', () => {
    // Act
    const bytes = bundledFontFiles().reduce((sum, file) => sum + statSync(file).size, 0);

    // Assess
    expect(bytes / 1024 / 1024).toBeLessThan(65);
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

  it.each([
    ['ja', 'Noto Sans JP'],
    ['zh-cn', 'Noto Sans SC'],
    ['zh-tw', 'Noto Sans TC'],
    ['zh-hk', 'Noto Sans TC'],
    ['ko', 'Noto Sans KR'],
  ])('prefers the regional CJK font for lang %s', (lang, family) => {
    expect(xml).toContain(`<string>${lang}</string></test><test name="family"><string>Noto Sans JP</string></test><edit name="family" mode="prepend" binding="same"><string>${family}</string>`);
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

describe('fontEnvironment', () => {
  it('points fontconfig at a written configuration that lists the bundled font directories', () => {
    // Act
    const environment = fontEnvironment();

    // Assess
    expect(environment.FONTCONFIG_FILE.startsWith(environment.FONTCONFIG_PATH)).toBe(true);
    const xml = readFileSync(environment.FONTCONFIG_FILE, 'utf8');
    for (const file of bundledFontFiles()) expect(xml).toContain(`<dir>${join(file, '..')}</dir>`);
  });

  it('returns the same configuration on every call', () => {
    expect(fontEnvironment()).toBe(fontEnvironment());
  });
});
