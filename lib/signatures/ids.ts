/** Signing key ids: `sk_` and up to 64 base62 characters (24 when we make them). */
export const SIGNING_KEY_ID_PATTERN = /^sk_[0-9A-Za-z]{1,64}$/;
