import { createHmac, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A uniformly random base62 string from the OS CSPRNG (each character carries log2(62) ≈ 5.95 bits).
 * Bytes >= 248 are dropped rather than folded, so no character is more likely than another.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/**
 * A base62 string derived from a secret seed and a label (HMAC-SHA256, rejection-sampled like
 * randomBase62): the same seed and label always give the same string, and without the seed it is
 * as unguessable as a random one.
 */
export function derivedBase62(seed: string, label: string, length: number): string {
  let out = '';
  for (let round = 0; out.length < length; round++) {
    for (const byte of createHmac('sha256', seed).update(`${label}\u0000${round}`).digest()) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
