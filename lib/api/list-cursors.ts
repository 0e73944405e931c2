/**
 * `next_cursor` of `GET /v1/pdf` and `GET /v1/templates`: where the caller's listing goes on, opaque to callers.
 *
 * A cursor is the last record's creation time and id (base64url JSON), then an HMAC of it bound to
 * the key it was given to, with the service's link-signing secret. So a cursor the API never gave
 * out, or gave to another key (even one naming that key's PDF), is 400 `invalid_request` rather than
 * a page that starts somewhere the caller made up. Rotating the secret ends outstanding cursors too:
 * the listing starts again from the first page.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ListCursor } from '#lib/storage/pdfs.ts';
import { invalidRequest } from './errors.ts';

/**
 * What is listed: a cursor of one listing is refused by the other (its signature names the listing;
 * the PDFs' is the original form, so cursors given out before templates existed still work).
 */
export type Listing = 'pdfs' | 'templates' | 'signing-keys';
const ID_PATTERN: Readonly<Record<Listing, RegExp>> = { pdfs: /^pdf_\w{1,64}$/, templates: /^tpl_\w{1,64}$/, 'signing-keys': /^sk_\w{1,64}$/ };

function sign(keyId: string, payload: string, secret: string, listing: Listing): Buffer {
  const purpose = listing === 'pdfs' ? 'list-cursor' : `list-cursor:${listing}`;
  return createHmac('sha256', secret).update(`${purpose}\u0000${keyId}\u0000${payload}`).digest();
}

export function encodeListCursor(cursor: ListCursor, keyId: string, secret: string, listing: Listing = 'pdfs'): string {
  const payload = Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
  return `${payload}.${sign(keyId, payload, secret, listing).toString('base64url')}`;
}

/** The cursor's position, when this API gave it to this key for this listing; 400 otherwise. Undefined without one. */
export function decodeListCursor(raw: string | undefined, keyId: string, secret: string, listing: Listing = 'pdfs'): ListCursor | undefined {
  if (raw === undefined) return undefined;
  const [payload, signature, ...rest] = raw.split('.');
  if (payload && signature && rest.length === 0) {
    const presented = Buffer.from(signature, 'base64url');
    const expected = sign(keyId, payload, secret, listing);
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) {
      try {
        const [createdAt, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
        if (typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt)) && ID_PATTERN[listing].test(id)) {
          return { createdAt, id };
        }
      } catch {
        // signed by us, so never here; refused below all the same
      }
    }
  }
  throw invalidRequest('cursor is not a cursor this API gave out; use next_cursor from the previous page');
}
