/**
 * Options applied to the printed file rather than to the printing (shared/spec/beyond.md, "Page
 * and document"): PDF metadata, a watermark and encryption. Validation only; lib/render/finishing.ts
 * applies them.
 */
import { z } from 'zod';

export const PERMISSIONS = ['print', 'copy', 'modify', 'annotate'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** PDF 2.0 (AES-256) passwords are at most 127 bytes of UTF-8 (ISO 32000-2, 7.6.4.3.3). */
const MAX_PASSWORD_BYTES = 127;
const MAX_METADATA_CHARS = 1_000;

/**
 * Text that can be written as it is: well-formed UTF-16 (a lone surrogate has no UTF-8 or PDF
 * encoding: it became garbage in the info dictionary, and a password nobody could type) and no
 * noncharacter U+FFFE or U+FFFF (not allowed in XML, so not in XMP).
 */
export const isWritableText = (value: string) => value.isWellFormed() && !/[\uFFFE\uFFFF]/.test(value);

/** What a watermark must not hold, by Unicode general category: controls, format (bidi, zero-width), private-use, unassigned, line and paragraph separators. */
const WATERMARK_REFUSED = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

const text = (field: string, most: number) =>
  z
    .string({ error: `${field} must be a string` })
    .max(most, { error: `${field} must be at most ${most} characters` })
    // Control characters have no place in a title or a name, and would show as boxes.
    .refine((value) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value), { error: `${field} must not contain control characters` })
    .refine(isWritableText, { error: `${field} must be well-formed Unicode text` });

/** Fewest characters an owner password may have: it is what lifts every restriction. */
export const MIN_OWNER_PASSWORD_CHARS = 8;

/**
 * What SASLprep (RFC 4013, which PDF 2.0 readers apply to a typed password before hashing it)
 * prohibits or maps to nothing: controls, format and private-use characters, unassigned code
 * points, line and paragraph separators, and table B.1 (soft hyphen, zero-width characters,
 * variation selectors, ...). A password holding one would be hashed here as given and by a reader
 * as something else: a file nobody could open.
 */
const SASLPREP_REFUSED = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00ad\u034f\u1806\u180b-\u180d\u200b-\u200d\u2060\ufe00-\ufe0f\ufeff]/u;
/** SASLprep maps every space but U+0020 to U+0020. */
const OTHER_SPACES = /(?! )\p{Zs}/u;

/**
 * A password as readers see it: NFKC, as SASLprep normalises. Validation lets through only
 * passwords whose NFKC and NFC forms agree, so this only composes what was given decomposed.
 */
export const normalisePassword = (value: string) => value.normalize('NFKC');

const password = (field: string, least: number) =>
  z.string({ error: `${field} must be a string` }).superRefine((value, context) => {
    const problem = (): string | undefined => {
      if (!isWritableText(value)) return `${field} must be well-formed Unicode text`;
      // qpdf takes the password as a C string: a NUL would end it there and silently weaken the file.
      if (/[\u0000-\u001f\u007f]/.test(value)) return `${field} must not contain control characters`;
      if (SASLPREP_REFUSED.test(value)) return `${field} must not contain invisible, format or unassigned characters (SASLprep, which PDF readers apply, refuses or drops them)`;
      if (OTHER_SPACES.test(value)) return `${field} must not contain spaces other than U+0020 (SASLprep, which PDF readers apply, turns them into it)`;
      // Fullwidth letters, ligatures, superscripts: a reader would hash the plain letters instead.
      if (value.normalize('NFKC') !== value.normalize('NFC')) return `${field} must not contain compatibility characters such as fullwidth letters or ligatures (SASLprep, which PDF readers apply, replaces them)`;
      const normalised = normalisePassword(value);
      if (Buffer.byteLength(normalised) > MAX_PASSWORD_BYTES) return `${field} must be at most ${MAX_PASSWORD_BYTES} bytes of UTF-8`;
      if (Array.from(normalised).length < least) return least === 1 ? `${field} must not be empty` : `${field} must have at least ${least} characters`;
      return undefined;
    };
    const message = problem();
    if (message) context.addIssue({ code: 'custom', message });
  });

export const finishingShape = {
  metadata_pdf: z
    .strictObject(
      {
        title: text('metadata_pdf.title', MAX_METADATA_CHARS).optional(),
        author: text('metadata_pdf.author', MAX_METADATA_CHARS).optional(),
        subject: text('metadata_pdf.subject', MAX_METADATA_CHARS).optional(),
        keywords: z
          .array(text('metadata_pdf.keywords[]', 200), { error: 'metadata_pdf.keywords must be an array of strings' })
          .max(100, { error: 'metadata_pdf.keywords may hold at most 100 keywords' })
          .optional(),
        creator: text('metadata_pdf.creator', MAX_METADATA_CHARS).optional(),
      },
      { error: 'metadata_pdf must be an object with any of title, author, subject, keywords, creator' },
    )
    .optional(),
  watermark: z
    .strictObject(
      {
        text: z
          .string({ error: 'watermark.text must be a string of 1 to 200 characters' })
          .trim()
          .min(1, { error: 'watermark.text must be a string of 1 to 200 characters' })
          .max(200, { error: 'watermark.text must be a string of 1 to 200 characters' })
          .refine(isWritableText, { error: 'watermark.text must be well-formed Unicode text' })
          // Controls print as boxes, bidi and format characters reorder or hide what is stamped.
          .refine((value) => !WATERMARK_REFUSED.test(value), {
            error: 'watermark.text must not contain control, invisible or reordering characters (Unicode Cc, Cf, Co, Cn, Zl, Zp)',
          }),
        opacity: z
          .number({ error: 'watermark.opacity must be a number from 0.05 to 1' })
          .min(0.05, { error: 'watermark.opacity must be a number from 0.05 to 1' })
          .max(1, { error: 'watermark.opacity must be a number from 0.05 to 1' })
          .optional(),
        angle: z
          .number({ error: 'watermark.angle must be a number of degrees from -90 to 90' })
          .min(-90, { error: 'watermark.angle must be a number of degrees from -90 to 90' })
          .max(90, { error: 'watermark.angle must be a number of degrees from -90 to 90' })
          .optional(),
      },
      { error: 'watermark must be an object with text, and optionally opacity and angle' },
    )
    .optional(),
  encryption: z
    .strictObject(
      {
        // Empty or absent: the file opens without a password.
        user_password: password('encryption.user_password', 0).optional(),
        owner_password: password('encryption.owner_password', MIN_OWNER_PASSWORD_CHARS).meta({ minLength: MIN_OWNER_PASSWORD_CHARS }),
        permissions: z
          .array(z.enum(PERMISSIONS, { error: `encryption.permissions may contain ${PERMISSIONS.join(', ')}` }), {
            error: `encryption.permissions must be an array of ${PERMISSIONS.join(', ')}`,
          })
          .max(PERMISSIONS.length * 4, { error: `encryption.permissions may contain ${PERMISSIONS.join(', ')}` })
          .optional(),
      },
      { error: 'encryption must be an object with owner_password, and optionally user_password and permissions' },
    )
    .optional(),
};

export interface Watermark {
  readonly text: string;
  readonly opacity: number;
  /** Degrees, counter-clockwise. */
  readonly angle: number;
}

export interface Finishing {
  readonly metadata?: {
    readonly title?: string;
    readonly author?: string;
    readonly subject?: string;
    readonly keywords?: readonly string[];
    readonly creator?: string;
  };
  readonly watermark?: Watermark;
  readonly encryption?: {
    /** Empty: the file opens without a password, and the permissions still hold. */
    readonly userPassword: string;
    /** Both passwords NFKC-normalised (normalisePassword), as PDF 2.0 readers' SASLprep makes what is typed. */
    readonly ownerPassword: string;
    readonly permissions: ReadonlySet<Permission>;
  };
}

type Parsed = { [K in keyof typeof finishingShape]?: z.output<(typeof finishingShape)[K]> };

export function resolveFinishing(parsed: Parsed): Finishing | { error: string } {
  const { metadata_pdf: metadata, watermark, encryption } = parsed;
  // Compared as readers see them: NFC and NFD spellings of one password are one password.
  const owner = encryption && normalisePassword(encryption.owner_password);
  const user = encryption && normalisePassword(encryption.user_password ?? '');
  if (encryption && user === owner) {
    // Whoever opens the file with the user password would have the owner's rights: no permission would hold.
    return { error: 'encryption.owner_password must differ from encryption.user_password' };
  }
  return {
    ...(metadata && { metadata }),
    ...(watermark && { watermark: { text: watermark.text, opacity: watermark.opacity ?? 0.15, angle: watermark.angle ?? 45 } }),
    ...(encryption && {
      encryption: {
        userPassword: user as string,
        ownerPassword: owner as string,
        permissions: new Set(encryption.permissions ?? []),
      },
    }),
  };
}
