/**
 * What callers send about signatures (shared/spec/beyond.md "Signatures"), as zod schemas: the
 * body of `POST /v1/signing-keys` and of `PUT /v1/signing-keys/{id}/certificate`, and the
 * `signature` option of a document, one schema read by generate, batch items, templates, async
 * jobs and bulk lines alike (lib/documents/document-options.ts), and by the OpenAPI document.
 */
import { z } from 'zod';
import { lengthToPixels } from '#lib/render/options.ts';
import { KEY_SPECS } from './certificates.ts';
import { SIGNING_KEY_ID_PATTERN } from './ids.ts';

/** Longest reason, location or contact text: a line or two on the signature panel. */
export const MAX_SIGNATURE_TEXT_CHARS = 200;
/** Longest PEM chain accepted (a handful of certificates). */
export const MAX_CHAIN_PEM_CHARS = 64 * 1024;

const text = (field: string, max: number) =>
  z.string({ error: `${field} must be a string` }).trim().min(1, { error: `${field} must not be empty` }).max(max, { error: `${field} must be at most ${max} characters` });

export const subjectSchema = z.strictObject(
  {
    common_name: text('subject.common_name', 64),
    organization: text('subject.organization', 64).optional(),
    country: z.string({ error: 'subject.country must be a string' }).regex(/^[A-Z]{2}$/, { error: 'subject.country must be a two-letter ISO 3166 code such as "DE"' }).optional(),
    email: z.email({ error: 'subject.email must be an email address' }).max(128, { error: 'subject.email must be at most 128 characters' }).optional(),
  },
  { error: 'subject must be an object with common_name (and optionally organization, country, email)' },
);

export const createSigningKeyBodySchema = z.strictObject({
  subject: subjectSchema,
  key_spec: z.enum(KEY_SPECS as ['ECC_NIST_P256', 'RSA_3072'], { error: 'key_spec must be "ECC_NIST_P256" or "RSA_3072"' }).optional(),
  self_signed: z.boolean({ error: 'self_signed must be true or false' }).optional(),
});

export const certificateBodySchema = z.strictObject({
  certificate_chain_pem: z
    .string({ error: 'certificate_chain_pem is required: the PEM certificates, leaf first' })
    .min(1, { error: 'certificate_chain_pem must not be empty' })
    .max(MAX_CHAIN_PEM_CHARS, { error: `certificate_chain_pem must be at most ${MAX_CHAIN_PEM_CHARS} characters` }),
});

const LENGTH_RULE = 'a length with a unit of px, pt, in, cm or mm, such as "20mm"';
const length = (field: string) =>
  z.string({ error: `${field} must be ${LENGTH_RULE}` }).refine((value) => lengthToPixels(value) !== undefined, { error: `${field} must be ${LENGTH_RULE}` });

/** The `signature` option. The visible box's lengths are CSS lengths, as `margin` (lib/render/options.ts), from the page's top-left corner. */
export const signatureOptionSchema = z.strictObject(
  {
    signing_key_id: z.string({ error: 'signature.signing_key_id is required' }).regex(SIGNING_KEY_ID_PATTERN, { error: 'signature.signing_key_id must be a signing key id such as "sk_…"' }),
    reason: text('signature.reason', MAX_SIGNATURE_TEXT_CHARS).optional(),
    location: text('signature.location', MAX_SIGNATURE_TEXT_CHARS).optional(),
    contact_info: text('signature.contact_info', MAX_SIGNATURE_TEXT_CHARS).optional(),
    timestamp: z.boolean({ error: 'signature.timestamp must be true or false' }).optional(),
    visible: z
      .strictObject(
        {
          page: z.int({ error: 'signature.visible.page must be a whole number from 1' }).min(1, { error: 'signature.visible.page must be a whole number from 1' }),
          x: length('signature.visible.x'),
          y: length('signature.visible.y'),
          width: length('signature.visible.width'),
          height: length('signature.visible.height'),
          text: text('signature.visible.text', MAX_SIGNATURE_TEXT_CHARS).optional(),
        },
        { error: 'signature.visible must be an object with page, x, y, width and height (and optionally text)' },
      )
      .optional(),
  },
  { error: 'signature must be an object with signing_key_id' },
);
export type SignatureOption = z.infer<typeof signatureOptionSchema>;
