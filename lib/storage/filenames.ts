/**
 * The name a PDF downloads under (`filename`, shared/spec/beyond.md): checked when asked for, and
 * sent by the download link as `Content-Disposition: attachment` (RFC 6266, with an RFC 8187
 * `filename*` for names beyond ASCII and a plain fallback for old clients), built by the
 * content-disposition library rather than by hand.
 *
 * A name is saved by browsers and by the CLI on every filesystem, and shown in file managers: it
 * must fit (255 bytes is every common filesystem's limit, so 200 bytes of UTF-8 leave room for the
 * ".pdf" added and a copy's " (1)"), and it must read as what it is. Refused, each with its reason:
 * - invisible characters and characters that reorder what follows (Unicode general categories Cc
 *   controls, Cf format characters such as the bidi overrides U+202A-202E and isolates U+2066-2069,
 *   the marks U+200E, U+200F and U+061C, zero-width characters and the BOM, Zl and Zp separators,
 *   Co private use and Cn unassigned code points, which print as boxes), and every space but U+0020;
 * - path separators and whatever looks like one: `/` and `\`, what Unicode NFKC folds into them
 *   (U+FF0F, U+FF3C, U+FE68, ...), and the solidus look-alikes of Unicode's confusables list
 *   (U+2044, U+2215, U+29F8, U+2216, U+29F5, U+29F9, ...);
 * - what Windows cannot save: `*?<>|:"`, trailing dots and spaces, and the device names CON, PRN,
 *   AUX, NUL, COM0-9 and LPT0-9 (with or without an extension);
 * - names led by a dot (hidden files, `..`), or by a space.
 */
import { create as contentDisposition } from 'content-disposition';
import { z } from 'zod';

/** Most bytes of UTF-8 a name may take, as given (".pdf" may be added). */
export const MAX_FILENAME_BYTES = 200;

const RULE = `filename must be a name of 1 to ${MAX_FILENAME_BYTES} bytes of UTF-8`;

/** Invisible, reordering or unprintable characters, by Unicode general category; and spaces other than U+0020. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]|(?! )\p{Zs}/u;
/**
 * Characters drawn as a slash or a backslash that NFKC leaves alone (Unicode's confusables.txt,
 * symbols only: CJK strokes that look alike are letters of their own).
 */
const SEPARATOR_LOOK_ALIKES = /[\u2044\u2215\u2571\u27cb\u29f8\u2216\u2572\u27cd\u29f5\u29f9]/u;
/** What Windows refuses in a name; `/` and `\` are checked after NFKC, with their look-alikes. */
const WINDOWS_RESERVED_CHARACTERS = /[*?<>|:"]/;
/** Device names Windows keeps whatever the extension (the superscript digits count too). */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;

/** Why `name` cannot be a download name, or undefined when it can. */
export function filenameProblem(name: string): string | undefined {
  if (name.length === 0) return `${RULE}, not empty`;
  // A lone surrogate has no UTF-8 encoding for the header's filename*.
  if (!name.isWellFormed()) return 'filename must be well-formed Unicode text';
  if (Buffer.byteLength(name) > MAX_FILENAME_BYTES) return `${RULE}: it has ${Buffer.byteLength(name)}`;
  const invisible = INVISIBLE.exec(name);
  if (invisible) {
    const code = `U+${(invisible[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    return `filename must not contain control, invisible or reordering characters, nor spaces other than U+0020 (it has ${code})`;
  }
  const folded = name.normalize('NFKC');
  if (/[/\\]/.test(folded) || SEPARATOR_LOOK_ALIKES.test(name)) return 'filename must not contain slashes, backslashes or characters that look like them';
  if (WINDOWS_RESERVED_CHARACTERS.test(name)) return 'filename must not contain any of * ? < > | : "';
  if (/^[.\s]/.test(folded)) return 'filename must not start with a dot or a space';
  if (/[.\s]$/.test(name)) return 'filename must not end with a dot or a space';
  const stem = folded.split('.')[0] as string;
  if (WINDOWS_DEVICE.test(stem.trimEnd())) return `filename must not be a Windows device name (${stem.trimEnd().toUpperCase()}), with or without an extension`;
  return undefined;
}

export const filenameSchema = z
  .string({ error: `${RULE}, given as a string` })
  .superRefine((name, context) => {
    const problem = filenameProblem(name);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  // What JSON Schema can say of the rule, for the OpenAPI document (its lengths count characters).
  .meta({ minLength: 1, maxLength: MAX_FILENAME_BYTES });

/**
 * The name with the file's extension (`pdf`, `png`, `jpg`, `webp`): saved without it, a file does
 * not open as what it is, so it is added when missing (`.jpeg` counts for `jpg`).
 */
export function withExtension(name: string, extension: string): string {
  const ending = extension === 'jpg' ? /\.jpe?g$/i : new RegExp(`\\.${extension}$`, 'i');
  return ending.test(name) ? name : `${name}.${extension}`;
}

/** The header the download link's redirect makes S3 answer with. */
export function attachmentDisposition(filename: string): string {
  return contentDisposition(filename, { type: 'attachment' });
}
