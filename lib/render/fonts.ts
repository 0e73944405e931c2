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
 * How Chromium picks a font for a piece of text (Linux): the first family of its CSS list that
 * exists (a generic family or no font-family at all: Noto Sans, Noto Serif or Noto Sans Mono, by
 * family alone), then, for each character that font lacks, the font fontconfig ranks first among
 * those that have it, given the element's `lang` (fontconfigXml: fonts supporting the language
 * first, then the order of SCRIPT_FAMILIES). A renderer remembers that answer per character,
 * whatever the language, for its life. That is what Chrome itself does with these fonts, so the
 * service does the same: per-script default fonts (DevTools Page.setFontFamilies) would start text in
 * a script's language with its own family, but would also print it unlike Chrome (other dandas,
 * taller lines in Tibetan and Myanmar), so they are not used.
 *
 * The configuration is generated at run time because the fonts' absolute paths differ between a
 * checkout (./node_modules) and the Lambda bundle (/var/task/node_modules); it is written under the
 * system temporary directory (the only writable place on Lambda), with a directory of links to the
 * font files (what fontconfig scans) and fontconfig's cache beside it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
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
 * Every font the service renders with. Text faces come in regular and bold where the package has
 * a bold (and italic for the Latin families); CJK ships its regular weight only, 5 to 11 MB each,
 * and Chromium emboldens it, as it does the scripts whose package has a regular weight only. To add
 * a font: `npm i -E` its package and add its files here (docs/api.md, "Bundled fonts").
 */
export const BUNDLED_FONTS: readonly BundledFont[] = [
  // Latin, Greek, Cyrillic (and Vietnamese, IPA, Devanagari...): the three generic families.
  ...expo('noto-sans', 'Noto Sans', FOUR_STYLES),
  ...expo('noto-serif', 'Noto Serif', FOUR_STYLES),
  ...expo('noto-sans-mono', 'Noto Sans Mono', REGULAR_BOLD),
  // Scripts Noto Sans does not cover, one family each (Tibetan only exists as a serif).
  ...expo('noto-sans-arabic', 'Noto Sans Arabic', REGULAR_BOLD),
  ...expo('noto-naskh-arabic', 'Noto Naskh Arabic', REGULAR_BOLD),
  ...expo('noto-sans-hebrew', 'Noto Sans Hebrew', REGULAR_BOLD),
  ...expo('noto-sans-devanagari', 'Noto Sans Devanagari', REGULAR_BOLD),
  ...expo('noto-sans-bengali', 'Noto Sans Bengali', REGULAR_BOLD),
  ...expo('noto-sans-gurmukhi', 'Noto Sans Gurmukhi', REGULAR_BOLD),
  ...expo('noto-sans-gujarati', 'Noto Sans Gujarati', REGULAR_BOLD),
  ...expo('noto-sans-oriya', 'Noto Sans Oriya', REGULAR_BOLD),
  ...expo('noto-sans-tamil', 'Noto Sans Tamil', REGULAR_BOLD),
  ...expo('noto-sans-telugu', 'Noto Sans Telugu', REGULAR_BOLD),
  ...expo('noto-sans-kannada', 'Noto Sans Kannada', REGULAR_BOLD),
  ...expo('noto-sans-malayalam', 'Noto Sans Malayalam', REGULAR_BOLD),
  ...expo('noto-sans-sinhala', 'Noto Sans Sinhala', REGULAR_BOLD),
  ...expo('noto-sans-thai', 'Noto Sans Thai', REGULAR_BOLD),
  ...expo('noto-sans-lao', 'Noto Sans Lao', REGULAR_BOLD),
  ...expo('noto-sans-khmer', 'Noto Sans Khmer', REGULAR_BOLD),
  ...expo('noto-sans-myanmar', 'Noto Sans Myanmar', REGULAR_BOLD),
  ...expo('noto-serif-tibetan', 'Noto Serif Tibetan', REGULAR_BOLD),
  ...expo('noto-sans-georgian', 'Noto Sans Georgian', REGULAR_BOLD),
  ...expo('noto-sans-armenian', 'Noto Sans Armenian', REGULAR_BOLD),
  ...expo('noto-sans-ethiopic', 'Noto Sans Ethiopic', REGULAR_BOLD),
  ...expo('noto-sans-thaana', 'Noto Sans Thaana', REGULAR_BOLD),
  ...expo('noto-sans-syriac', 'Noto Sans Syriac', REGULAR_BOLD),
  ...expo('noto-sans-nko', 'Noto Sans NKo', ['400Regular']),
  ...expo('noto-sans-adlam', 'Noto Sans Adlam', REGULAR_BOLD),
  ...expo('noto-sans-tifinagh', 'Noto Sans Tifinagh', ['400Regular']),
  ...expo('noto-sans-cherokee', 'Noto Sans Cherokee', REGULAR_BOLD),
  ...expo('noto-sans-canadian-aboriginal', 'Noto Sans Canadian Aboriginal', REGULAR_BOLD),
  ...expo('noto-sans-ol-chiki', 'Noto Sans Ol Chiki', REGULAR_BOLD),
  ...expo('noto-sans-meetei-mayek', 'Noto Sans Meetei Mayek', REGULAR_BOLD),
  ...expo('noto-sans-javanese', 'Noto Sans Javanese', REGULAR_BOLD),
  ...expo('noto-sans-mongolian', 'Noto Sans Mongolian', ['400Regular']),
  ...expo('noto-sans-yi', 'Noto Sans Yi', ['400Regular']),
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
 * fonts). Only these files are needed (66.3 MiB), not whole packages (every weight, about 390 MB).
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

/** A script Noto Sans does not cover, the bundled family that draws it, and the languages written in it. */
export interface ScriptFamily {
  /** What docs/api.md calls it. */
  readonly name: string;
  /** Draws the script's text in sans-serif, serif and monospace, and in text with no font-family. */
  readonly family: string;
  /** Serif text in the script's languages, where a serif face of the script is bundled. */
  readonly serif?: string;
  /**
   * Language tags (BCP 47, lower case) whose text prefers this family: Chromium gives the element's
   * `lang` to fontconfig when it looks for a font for a character the first font lacks, and
   * fontconfig ranks the fonts by it (see fontconfigXml). The first tag is the script's main language.
   */
  readonly langs: readonly string[];
}

/**
 * Every script Noto Sans, Noto Serif and Noto Sans Mono lack, in the order the fallback tries them
 * for a character the first family lacks (where several fonts have a character, the earlier wins
 * unless the text's language says otherwise). Latin, Greek, Cyrillic and Devanagari are in Noto Sans
 * itself; Devanagari is here too, for serif and monospace text.
 */
export const SCRIPT_FAMILIES: readonly ScriptFamily[] = [
  { name: 'Arabic', family: 'Noto Sans Arabic', serif: 'Noto Naskh Arabic', langs: ['ar', 'fa', 'ur', 'ps', 'ckb', 'sd', 'ug'] },
  { name: 'Hebrew', family: 'Noto Sans Hebrew', langs: ['he', 'yi'] },
  { name: 'Devanagari', family: 'Noto Sans Devanagari', langs: ['hi', 'mr', 'ne', 'sa'] },
  { name: 'Bengali', family: 'Noto Sans Bengali', langs: ['bn', 'as', 'mni'] },
  { name: 'Gurmukhi', family: 'Noto Sans Gurmukhi', langs: ['pa'] },
  { name: 'Gujarati', family: 'Noto Sans Gujarati', langs: ['gu'] },
  { name: 'Odia (Oriya)', family: 'Noto Sans Oriya', langs: ['or'] },
  { name: 'Tamil', family: 'Noto Sans Tamil', langs: ['ta'] },
  { name: 'Telugu', family: 'Noto Sans Telugu', langs: ['te'] },
  { name: 'Kannada', family: 'Noto Sans Kannada', langs: ['kn'] },
  { name: 'Malayalam', family: 'Noto Sans Malayalam', langs: ['ml'] },
  { name: 'Sinhala', family: 'Noto Sans Sinhala', langs: ['si'] },
  { name: 'Thai', family: 'Noto Sans Thai', langs: ['th'] },
  { name: 'Lao', family: 'Noto Sans Lao', langs: ['lo'] },
  { name: 'Khmer', family: 'Noto Sans Khmer', langs: ['km'] },
  { name: 'Myanmar', family: 'Noto Sans Myanmar', langs: ['my'] },
  { name: 'Tibetan', family: 'Noto Serif Tibetan', langs: ['bo', 'dz'] },
  { name: 'Georgian', family: 'Noto Sans Georgian', langs: ['ka'] },
  { name: 'Armenian', family: 'Noto Sans Armenian', langs: ['hy'] },
  { name: 'Ethiopic', family: 'Noto Sans Ethiopic', langs: ['am', 'ti'] },
  { name: 'Thaana', family: 'Noto Sans Thaana', langs: ['dv'] },
  { name: 'Syriac', family: 'Noto Sans Syriac', langs: ['syr', 'aii', 'syc'] },
  { name: "N'Ko", family: 'Noto Sans NKo', langs: ['nqo'] },
  { name: 'Adlam', family: 'Noto Sans Adlam', langs: ['ff-adlm', 'fuf-adlm'] },
  { name: 'Tifinagh', family: 'Noto Sans Tifinagh', langs: ['zgh', 'tzm-tfng'] },
  { name: 'Cherokee', family: 'Noto Sans Cherokee', langs: ['chr'] },
  { name: 'Canadian Aboriginal syllabics', family: 'Noto Sans Canadian Aboriginal', langs: ['iu', 'cr'] },
  { name: 'Ol Chiki', family: 'Noto Sans Ol Chiki', langs: ['sat'] },
  { name: 'Meetei Mayek', family: 'Noto Sans Meetei Mayek', langs: ['mni-mtei'] },
  { name: 'Javanese', family: 'Noto Sans Javanese', langs: ['jv-java'] },
  // Han characters are shared by Chinese, Japanese and Korean but drawn differently in each: the
  // language picks the regional font; a character with no language gets the Japanese form.
  { name: 'Japanese', family: 'Noto Sans JP', langs: ['ja'] },
  { name: 'Chinese (Simplified)', family: 'Noto Sans SC', langs: ['zh', 'zh-cn', 'zh-sg', 'zh-hans'] },
  { name: 'Chinese (Traditional)', family: 'Noto Sans TC', langs: ['zh-tw', 'zh-hk', 'zh-mo', 'zh-hant'] },
  { name: 'Korean', family: 'Noto Sans KR', langs: ['ko'] },
  // After CJK: these two fonts also carry CJK punctuation (、。，), which Chinese and Japanese text
  // without a language should take from a CJK font.
  { name: 'Mongolian', family: 'Noto Sans Mongolian', langs: ['mn-mong'] },
  { name: 'Yi', family: 'Noto Sans Yi', langs: ['ii'] },
];

/** Families tried, in order, for characters the first family lacks (per script, then emoji). */
const SANS_FALLBACKS = [...SCRIPT_FAMILIES.map((script) => script.family), 'Noto Color Emoji'];
/**
 * The list a request for serif gets, with the serif faces where a script has one. Chromium takes
 * only its first family (Noto Serif) from it: it looks up fallbacks by character with no family,
 * so serif text reaches Noto Naskh Arabic by name.
 */
const SERIF_FALLBACKS = [...SCRIPT_FAMILIES.map((script) => script.serif ?? script.family), 'Noto Color Emoji'];

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
  const languageRules = SCRIPT_FAMILIES.flatMap(({ langs, family: preferred }) =>
    langs.map(
      (lang) =>
        // Puts the language's family right after Noto Sans, before the default fallback order.
        // Only for the fallback's ranking: fontconfig ranks fonts supporting the language first
        // (by its own table of letters per language), then by this order, so the rule decides
        // between fonts that both support a language (Japanese: JP and SC) or neither (Syriac
        // punctuation: Arabic and Syriac).
        `  <match target="pattern"><test name="lang" compare="eq"><string>${lang}</string></test>` +
        `<test name="family"><string>${DEFAULT_FAMILIES['sans-serif']}</string></test>` +
        `<edit name="family" mode="append" binding="same"><string>${escapeXml(preferred)}</string></edit></match>`,
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

export function searchStarts(): string[] {
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

let prepared: { readonly environment: FontEnvironment; readonly fontDir: string } | undefined;

/**
 * A directory of symbolic links to the given font files, named by a hash of their paths (so
 * checkouts or versions sharing a machine never mix): what fontconfig scans. One directory instead
 * of the packages' own (a directory per weight, 77 of them) because fontconfig pays for each
 * directory when it builds its cache, as every cold start does: measured with fc-list, 183 ms of CPU
 * for the 77 directories, 80 ms for one directory of the same 77 files (the 25 files before the
 * scripts of issue 15 took 76 ms).
 */
export function linkFontDirectory(root: string, files: readonly string[]): string {
  const names = files.map((file) => basename(file));
  if (new Set(names).size !== names.length) throw new Error(`Bundled font file names must be unique: ${names.join(', ')}`);
  const dir = join(root, `fonts-${createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 16)}`);
  if (existsSync(dir)) return dir;
  // Made beside and renamed, so a concurrently launching process never sees half a directory.
  const partial = `${dir}.${process.pid}.tmp`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  files.forEach((file, index) => symlinkSync(file, join(partial, names[index]!)));
  try {
    renameSync(partial, dir);
  } catch (error) {
    // Another process got there first with the same links.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
  return dir;
}

/**
 * Writes the fontconfig configuration (the file name carries a hash of its content, so checkouts or
 * versions sharing a machine never overwrite each other's) and the directory of the fonts it lists,
 * and returns the variables to launch Chromium with. Later calls (a relaunch) only check that both
 * are still there.
 */
export function fontEnvironment(): FontEnvironment {
  if (prepared && existsSync(prepared.environment.FONTCONFIG_FILE) && existsSync(prepared.fontDir)) return prepared.environment;
  const root = join(tmpdir(), 'pdf-api-fontconfig');
  mkdirSync(root, { recursive: true });
  const fontDir = linkFontDirectory(root, bundledFontFiles());
  const xml = fontconfigXml({ fontDirs: [fontDir], cacheDir: join(root, 'cache') });
  const file = join(root, `fonts-${createHash('sha256').update(xml).digest('hex').slice(0, 16)}.conf`);
  if (!existsSync(file) || readFileSync(file, 'utf8') !== xml) {
    // Written beside and renamed, so a concurrently launching process never reads half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, xml);
    renameSync(partial, file);
  }
  prepared = { environment: { FONTCONFIG_FILE: file, FONTCONFIG_PATH: root }, fontDir };
  return prepared.environment;
}
