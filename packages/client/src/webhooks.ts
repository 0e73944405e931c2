/**
 * Verifying the webhooks the API sends when a job ends, per Standard Webhooks
 * (https://www.standardwebhooks.com): `webhook-signature` holds one or more `v1,<base64 HMAC-SHA256
 * of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the base64 part of your key's
 * `whsec_…` secret. WebCrypto only, so it runs wherever the client does (Node, Deno, Bun, workers).
 */
import type { components } from './schema.d.ts';

/** The body of a verified webhook: `pdf.job.completed` or `pdf.job.failed`, and the job as `GET /v1/jobs/{id}` shows it. */
export type WebhookEvent = components['schemas']['WebhookEvent'];

/** The request's headers: a Headers, or a plain object as Node's `req.headers`, Express or Lambda give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way (300 s): an older message is a replay. */
  readonly toleranceSeconds?: number;
  /** The time to check against (tests). */
  readonly now?: Date;
}

/** A webhook that is not from the API (or was changed, or is too old): answer it 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = entry?.[1];
  return typeof value === 'string' ? value : value?.[0];
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

async function subtle(): Promise<SubtleCrypto> {
  // Node 18 has WebCrypto only as node:crypto's webcrypto, not as a global.
  return globalThis.crypto?.subtle ?? ((await import('node:crypto')).webcrypto.subtle as SubtleCrypto);
}

/** Equal without telling how much of it was equal. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let index = 0; index < a.length; index += 1) difference |= a[index]! ^ b[index]!;
  return difference === 0;
}

/**
 * The webhook's event, once its signature is one of `secret`'s (several secrets: any of them, as
 * during a rotation, when messages signed with the old secret may still arrive) and its timestamp
 * is recent; else a WebhookVerificationError. `body` is the raw body as received: parsed and
 * re-serialised JSON does not verify.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  { toleranceSeconds = 300, now = new Date() }: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  const sentAt = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(sentAt)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  if (Math.abs(now.getTime() / 1000 - sentAt) > toleranceSeconds) throw new WebhookVerificationError(`webhook-timestamp is more than ${toleranceSeconds} s from now (a replay, or a clock far off)`);

  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  const given = signatures
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, value]) => version === 'v1' && value)
    .map(([, value]) => {
      try {
        return base64Bytes(value!);
      } catch {
        return new Uint8Array();
      }
    });
  const crypto = await subtle();
  for (const each of typeof secret === 'string' ? [secret] : secret) {
    let keyBytes: Uint8Array<ArrayBuffer>;
    try {
      keyBytes = base64Bytes(each.startsWith('whsec_') ? each.slice('whsec_'.length) : each);
    } catch {
      throw new WebhookVerificationError('the secret is not a whsec_… webhook secret');
    }
    const key = await crypto.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const expected = new Uint8Array(await crypto.sign('HMAC', key, signed));
    if (given.some((signature) => sameBytes(signature, expected))) return JSON.parse(text) as WebhookEvent;
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret');
}
