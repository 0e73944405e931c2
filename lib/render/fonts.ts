/**
 * The fonts every PDF is made with, and the fontconfig configuration that makes Chromium use them
 * and nothing else.
 *
 * Chromium finds fonts through fontconfig. Left alone it reads the host's /etc/fonts (whatever the
 * developer's machine has) or, on Lambda, @sparticuz/chromium's /tmp/fonts/fonts.conf (Open Sans
 * only). Either way a PDF depends on where it was made. So the browser is launched with
 * FONTCONFIG_FILE pointing at a configuration generated here, which lists only the font files this
 * project ships (from npm packages, TTF, so fontconfig can read them) and says which family serves
 * sans-serif, serif, monospace and each script. Locally, in tests and on Lambda the set is the same.
 *
 * The configuration is generated at run time because the fonts' absolute paths differ between a
 * checkout (./node_modules) and the Lambda bundle (/var/task/node_modules); it is written under the
 * system temporary directory (the only writable place on Lambda), with fontconfig's cache beside it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One font file shipped with the service: which npm package carries it, and where inside it. */
export interface BundledFont {
  readonly package: string;
  /** Path of the font file inside the package. */
  readonly file: string;
  /** The family name the font declares (what CSS `font-family` and fontconfig call it). */
  readonly family: string;
}

const expo = (name: string, family: string, faces: readonly string[]): BundledFont[] => {
  const pkg = `@expo-google-fonts/${name}`;
  const base = family.replace(/ /g, '');
  return faces.map((face) => ({ package: pkg, file: `${face}/${base}_${face}.ttf`, family }));
};

const REGULAR_BOLD = ['400Regular', '700Bold'] as const;
const FOUR_STYLES = ['400Regular', '400Regular_Italic', '700Bold', '700Bold_Italic'] as const;

/**
 * Every font the service renders with. Text faces come in regular and bold (and italic for the
 * Latin families); CJK ships its regular weight only, 5 to 11 MB each, and Chromium emboldens it
 * for bold text. To add a font: `npm i -E` its package and add its files here (README "Fonts").
 */
export const BUNDLED_FONTS: readonly BundledFont[] = [
  // Latin, Greek, Cyrillic (and Vietnamese, IPA...): the three generic families.
  ...expo('noto-sans', 'Noto Sans', FOUR_STYLES),
  ...expo('noto-serif', 'Noto Serif', FOUR_STYLES),
  ...expo('noto-sans-mono', 'Noto Sans Mono', REGULAR_BOLD),
  // Scripts Noto Sans does not cover.
  ...expo('noto-sans-arabic', 'Noto Sans Arabic', REGULAR_BOLD),
  ...expo('noto-naskh-arabic', 'Noto Naskh Arabic', REGULAR_BOLD),
  ...expo('noto-sans-hebrew', 'Noto Sans Hebrew', REGULAR_BOLD),
  ...expo('noto-sans-devanagari', 'Noto Sans Devanagari', REGULAR_BOLD),
  ...expo('noto-sans-thai', 'Noto Sans Thai', REGULAR_BOLD),
  // CJK: one regional font per writing tradition (Han characters are drawn differently in each).
  ...expo('noto-sans-jp', 'Noto Sans JP', ['400Regular']),
  ...expo('noto-sans-sc', 'Noto Sans SC', ['400Regular']),
  ...expo('noto-sans-tc', 'Noto Sans TC', ['400Regular']),
  ...expo('noto-sans-kr', 'Noto Sans KR', ['400Regular']),
  // Colour emoji (COLRv1 glyphs, which Chromium draws as vectors).
  ...expo('noto-color-emoji', 'Noto Color Emoji', ['400Regular']),
];

/** The npm packages the fonts come from (each is an exact-version dependency in package.json). */
export const FONT_PACKAGES: readonly string[] = [...new Set(BUNDLED_FONTS.map((font) => font.package))];

/**
 * What a deployment bundle must contain, as paths relative to its `node_modules` directory: every
 * font file plus each package's font licence (the SIL Open Font License asks that it travel with the
 * fonts). Only these files are needed (58.5 MiB), not whole packages (every weight, about 320 MB).
 */
export const FONT_BUNDLE_PATHS: readonly string[] = [
  ...BUNDLED_FONTS.map((font) => `${font.package}/${font.file}`),
  ...FONT_PACKAGES.map((pkg) => `${pkg}/LICENSE_FONT`),
];

/** The family each CSS generic family resolves to. */
export const DEFAULT_FAMILIES = {
  'sans-serif': 'Noto Sans',
  serif: 'Noto Serif',
  monospace: 'Noto Sans Mono',
} as const;

/** Families tried, in order, for characters the first family lacks (per script, then emoji). */
const SANS_FALLBACKS = [
  'Noto Sans Arabic',
  'Noto Sans Hebrew',
  'Noto Sans Devanagari',
  'Noto Sans Thai',
  'Noto Sans JP',
  'Noto Sans SC',
  'Noto Sans TC',
  'Noto Sans KR',
  'Noto Color Emoji',
] as const;
/** Serif text gets the serif-style (Naskh) Arabic; other scripts share the sans faces. */
const SERIF_FALLBACKS = SANS_FALLBACKS.map((family) => (family === 'Noto Sans Arabic' ? 'Noto Naskh Arabic' : family));

/**
 * Han characters are shared by Chinese, Japanese and Korean but drawn differently in each, so the
 * document's language (`<html lang>`) picks the regional font before the default order (JP first).
 */
const CJK_BY_LANGUAGE: readonly { readonly langs: readonly string[]; readonly family: string }[] = [
  { langs: ['ja'], family: 'Noto Sans JP' },
  { langs: ['zh-cn', 'zh-sg', 'zh-hans', 'zh'], family: 'Noto Sans SC' },
  { langs: ['zh-tw', 'zh-hk', 'zh-mo', 'zh-hant'], family: 'Noto Sans TC' },
  { langs: ['ko'], family: 'Noto Sans KR' },
];

const escapeXml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const family = (name: string): string => `<family>${escapeXml(name)}</family>`;

/**
 * The fontconfig configuration: only `fontDirs` are scanned (no system directory, no user
 * configuration is included), generic families resolve to the bundled ones, and the cache lives in
 * `cacheDir`.
 */
export function fontconfigXml({ fontDirs, cacheDir }: { fontDirs: readonly string[]; cacheDir: string }): string {
  const alias = (generic: string, prefer: readonly string[]) =>
    `  <alias binding="same">${family(generic)}<prefer>${prefer.map(family).join('')}</prefer></alias>`;
  const languageRules = CJK_BY_LANGUAGE.flatMap(({ langs, family: preferred }) =>
    langs.map(
      (lang) =>
        // Puts the language's regional font before the first CJK font of the default order.
        `  <match target="pattern"><test name="lang" compare="eq"><string>${lang}</string></test>` +
        `<test name="family"><string>Noto Sans JP</string></test>` +
        `<edit name="family" mode="prepend" binding="same"><string>${escapeXml(preferred)}</string></edit></match>`,
    ),
  );
  return [
    '<?xml version="1.0"?>',
    '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
    '<!-- Generated by lib/render/fonts.ts: the only fonts Chromium may use. Do not edit. -->',
    '<fontconfig>',
    ...fontDirs.map((dir) => `  <dir>${escapeXml(dir)}</dir>`),
    `  <cachedir>${escapeXml(cacheDir)}</cachedir>`,
    // The set never changes while a process runs: no periodic rescans.
    '  <config><rescan><int>0</int></rescan></config>',
    // Old spellings of the generic names.
    alias('sans', ['sans-serif']),
    alias('mono', ['monospace']),
    alias('system-ui', ['sans-serif']),
    alias('emoji', ['Noto Color Emoji']),
    // A request naming no generic family (e.g. Chromium looking for any font with a character)
    // gets sans-serif's list, as the standard 49-sansserif.conf does.
    '  <match target="pattern"><test qual="all" name="family" compare="not_eq"><string>sans-serif</string></test>' +
      '<test qual="all" name="family" compare="not_eq"><string>serif</string></test>' +
      '<test qual="all" name="family" compare="not_eq"><string>monospace</string></test>' +
      '<edit name="family" mode="append_last"><string>sans-serif</string></edit></match>',
    alias('sans-serif', [DEFAULT_FAMILIES['sans-serif'], ...SANS_FALLBACKS]),
    alias('serif', [DEFAULT_FAMILIES.serif, ...SERIF_FALLBACKS]),
    alias('monospace', [DEFAULT_FAMILIES.monospace, ...SANS_FALLBACKS]),
    ...languageRules,
    '</fontconfig>',
    '',
  ].join('\n');
}

/**
 * Where a package's file is, searched as Node resolves packages: in `node_modules` of the start
 * directory and of each of its parents. Starts from this module (a checkout), the Lambda task root
 * and the working directory, so a bundled handler finds the files shipped beside it.
 */
export function locateBundledFile(relativePath: string, startDirs: readonly string[]): string | undefined {
  for (const start of startDirs) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', relativePath);
      if (existsSync(candidate)) return candidate;
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

function searchStarts(): string[] {
  const starts: string[] = [];
  try {
    starts.push(dirname(fileURLToPath(import.meta.url)));
  } catch {
    // bundled to CommonJS: import.meta.url is empty, the other starts still apply
  }
  if (process.env.LAMBDA_TASK_ROOT) starts.push(process.env.LAMBDA_TASK_ROOT);
  starts.push(process.cwd());
  return starts;
}

/** Absolute paths of every bundled font file; fails naming each missing one. */
export function bundledFontFiles(startDirs: readonly string[] = searchStarts()): string[] {
  const found: string[] = [];
  const missing: string[] = [];
  for (const font of BUNDLED_FONTS) {
    const path = locateBundledFile(`${font.package}/${font.file}`, startDirs);
    if (path) found.push(path);
    else missing.push(`${font.package}/${font.file}`);
  }
  if (missing.length > 0) {
    throw new Error(
      `Bundled fonts are missing (run npm ci, or ship FONT_BUNDLE_PATHS with the function): ${missing.join(', ')}`,
    );
  }
  return found;
}

/** Environment variables that make a Chromium (or any fontconfig user) see only the bundled fonts. */
export interface FontEnvironment {
  readonly FONTCONFIG_FILE: string;
  readonly FONTCONFIG_PATH: string;
  [name: string]: string;
}

let prepared: FontEnvironment | undefined;

/**
 * Writes the fontconfig configuration (the file name carries a hash of its content, so checkouts or
 * versions sharing a machine never overwrite each other's) and returns the variables to launch
 * Chromium with. Later calls (a relaunch) only check that the file is still there.
 */
export function fontEnvironment(): FontEnvironment {
  if (prepared && existsSync(prepared.FONTCONFIG_FILE)) return prepared;
  const root = join(tmpdir(), 'pdf-api-fontconfig');
  // Each font sits in a directory of its own inside its package (one per weight), so listing those
  // directories admits exactly the chosen files.
  const fontDirs = [...new Set(bundledFontFiles().map((file) => dirname(file)))];
  const xml = fontconfigXml({ fontDirs, cacheDir: join(root, 'cache') });
  const file = join(root, `fonts-${createHash('sha256').update(xml).digest('hex').slice(0, 16)}.conf`);
  mkdirSync(root, { recursive: true });
  if (!existsSync(file) || readFileSync(file, 'utf8') !== xml) {
    // Written beside and renamed, so a concurrently launching process never reads half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, xml);
    renameSync(partial, file);
  }
  prepared = { FONTCONFIG_FILE: file, FONTCONFIG_PATH: root };
  return prepared;
}
