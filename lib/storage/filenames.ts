/**
 * The name a PDF downloads under (`filename`, shared/spec/beyond.md): checked when asked for, and
 * sent by the download link as `Content-Disposition: attachment` (RFC 6266, with an RFC 8187
 * `filename*` for names beyond ASCII and a plain fallback for old clients), built by the
 * content-disposition library rather than by hand.
 */
import { create as contentDisposition } from 'content-disposition';
import { z } from 'zod';

const RULE = 'filename must be a name of 1 to 200 characters, without slashes, backslashes or control characters';

export const filenameSchema = z
  .string({ error: RULE })
  .min(1, { error: RULE })
  .max(200, { error: RULE })
  .refine((name) => !/[/\\\u0000-\u001f\u007f-\u009f]/.test(name) && name.trim() !== '' && !/^\.+$/.test(name.trim()), { error: RULE })
  // A lone surrogate has no UTF-8 encoding for the header's filename*.
  .refine((name) => name.isWellFormed(), { error: 'filename must be well-formed Unicode text' })
  // Saved without an extension, a PDF does not open as one: the extension is added when missing.
  .transform((name) => (/\.pdf$/i.test(name) ? name : `${name}.pdf`));

/** The header the download link's redirect makes S3 answer with. */
export function attachmentDisposition(filename: string): string {
  return contentDisposition(filename, { type: 'attachment' });
}
