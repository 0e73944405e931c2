/**
 * How a `url` document is fetched (shared/spec/beyond.md, "Fetching a url"): extra headers,
 * cookies, basic auth, the user agent, and whether an error status fails the document. Validation
 * only; lib/render/url-access.ts applies them, to the document's own origin only.
 */
import { z } from 'zod';

/** RFC 9110 token: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Header values: visible ASCII, spaces and tabs (no line breaks, which would start another header). */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,8000}$/;
/**
 * Headers the browser owns: the host and the connection's own (hop-by-hop) headers, which would
 * break the request, and Cookie, which is what `cookies` is for. Chromium itself refuses to send
 * Cookie2, Set-Cookie and every Proxy-* header, and silently drops Referer (it sets the referrer itself):
 * refused here rather than lost on the way.
 */
const REFUSED_HEADERS = new Map<string, string>([
  ...['host', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length'].map(
    (name) => [name, 'the browser sets it'] as const,
  ),
  ['cookie', 'use cookies'],
  ['cookie2', 'use cookies'],
  ['referer', 'the browser sets it'],
  // A response header: Chromium refuses to send it, and a cookie for the page is what `cookies` is for.
  ['set-cookie', 'it is a response header; use cookies'],
  ['set-cookie2', 'it is a response header; use cookies'],
]);

/** Why a header name cannot be given in http_headers, or undefined when it can. */
function refusedHeader(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower.startsWith('proxy-')) return 'the browser refuses to send Proxy-* headers';
  return REFUSED_HEADERS.get(lower);
}

/** Most bytes Chromium keeps of one cookie's name and value together (RFC 6265 section 6.1). */
const MAX_COOKIE_NAME_AND_VALUE = 4096;
/** Control characters, which RFC 7617 forbids in a user-id or password. */
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/;

/** RFC 6265 cookie-name (a token) and cookie-value characters. */
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/;
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{0,4000}$/;

export const urlAccessShape = {
  http_headers: z
    .record(z.string(), z.string({ error: 'http_headers values must be strings' }), { error: 'http_headers must be an object of header names to values' })
    .superRefine((headers, context) => {
      const names = Object.keys(headers);
      if (names.length > 50) context.addIssue({ code: 'custom', message: 'http_headers may hold at most 50 headers' });
      const seen = new Set<string>();
      for (const name of names) {
        const refusal = HEADER_NAME.test(name) ? refusedHeader(name) : undefined;
        if (!HEADER_NAME.test(name)) context.addIssue({ code: 'custom', message: `http_headers: ${JSON.stringify(name.slice(0, 100))} is not a header name` });
        else if (refusal) context.addIssue({ code: 'custom', message: `http_headers may not set ${name} (${refusal})` });
        else if (seen.has(name.toLowerCase())) context.addIssue({ code: 'custom', message: `http_headers gives ${name} twice (header names ignore case)` });
        // The value is never quoted: it may be a secret.
        else if (!HEADER_VALUE.test(headers[name] as string)) {
          context.addIssue({ code: 'custom', message: `http_headers.${name} must be printable ASCII without line breaks, at most 8000 characters` });
        }
        seen.add(name.toLowerCase());
      }
    })
    .optional(),
  cookies: z
    .array(
      z.strictObject(
        {
          name: z.string({ error: 'cookies[].name must be a string' }).regex(COOKIE_NAME, { error: 'cookies[].name must be a cookie name (letters, digits and !#$%&\'*+.^_`|~-)' }),
          value: z.string({ error: 'cookies[].value must be a string' }).regex(COOKIE_VALUE, { error: 'cookies[].value must be a cookie value: printable ASCII without spaces, quotes, commas, semicolons or backslashes' }),
          path: z.string({ error: 'cookies[].path must be a string' }).regex(/^\/[\x21-\x3a\x3c-\x7e]{0,1000}$/, { error: 'cookies[].path must start with / and hold no spaces or semicolons' }).optional(),
          secure: z.boolean({ error: 'cookies[].secure must be true or false' }).optional(),
          http_only: z.boolean({ error: 'cookies[].http_only must be true or false' }).optional(),
        },
        { error: 'cookies must be an array of objects with name and value, and optionally path, secure, http_only' },
      ).refine((cookie) => cookie.name.length + cookie.value.length <= MAX_COOKIE_NAME_AND_VALUE, {
        error: `cookies[]: a cookie's name and value may hold at most ${MAX_COOKIE_NAME_AND_VALUE} characters together`,
      }),
      { error: 'cookies must be an array of objects with name and value' },
    )
    .max(50, { error: 'cookies may hold at most 50 cookies' })
    .optional(),
  basic_auth: z
    .strictObject(
      {
        username: z
          .string({ error: 'basic_auth.username must be a string' })
          .max(1_000, { error: 'basic_auth.username must be at most 1000 characters' })
          .refine((value) => !value.includes(':'), { error: 'basic_auth.username must not contain a colon (RFC 7617)' })
          .refine((value) => !CONTROL_CHARACTERS.test(value), { error: 'basic_auth.username must not contain control characters (RFC 7617)' }),
        password: z
          .string({ error: 'basic_auth.password must be a string' })
          .max(1_000, { error: 'basic_auth.password must be at most 1000 characters' })
          .refine((value) => !CONTROL_CHARACTERS.test(value), { error: 'basic_auth.password must not contain control characters (RFC 7617)' }),
      },
      { error: 'basic_auth must be an object with username and password' },
    )
    .optional(),
  user_agent: z
    .string({ error: 'user_agent must be a string of 1 to 300 characters' })
    .min(1, { error: 'user_agent must be a string of 1 to 300 characters' })
    .max(300, { error: 'user_agent must be a string of 1 to 300 characters' })
    .regex(/^[\x20-\x7e]+$/, { error: 'user_agent must be printable ASCII' })
    .optional(),
  fail_on_http_status: z.boolean({ error: 'fail_on_http_status must be true or false' }).optional(),
};

/** The options that only make sense for a `url` document. */
export const URL_ONLY_OPTIONS = Object.keys(urlAccessShape) as (keyof typeof urlAccessShape)[];

export interface UrlCookie {
  readonly name: string;
  readonly value: string;
  readonly path: string;
  readonly secure?: boolean;
  readonly httpOnly: boolean;
}

export interface UrlAccess {
  /** Sent with every request to the document's own origin, never to another. */
  readonly headers: Readonly<Record<string, string>>;
  readonly cookies: readonly UrlCookie[];
  readonly basicAuth?: { readonly username: string; readonly password: string };
  readonly userAgent?: string;
  /** A main document answering 4xx or 5xx fails the request (`url_fetch_failed`) instead of printing. */
  readonly failOnHttpStatus: boolean;
}

type Parsed = { [K in keyof typeof urlAccessShape]?: z.output<(typeof urlAccessShape)[K]> };

export function resolveUrlAccess(parsed: Parsed): UrlAccess {
  return {
    headers: parsed.http_headers ?? {},
    cookies: (parsed.cookies ?? []).map((cookie) => ({
      name: cookie.name,
      value: cookie.value,
      path: cookie.path ?? '/',
      ...(cookie.secure !== undefined && { secure: cookie.secure }),
      httpOnly: cookie.http_only ?? false,
    })),
    ...(parsed.basic_auth && { basicAuth: parsed.basic_auth }),
    ...(parsed.user_agent !== undefined && { userAgent: parsed.user_agent }),
    failOnHttpStatus: parsed.fail_on_http_status ?? true,
  };
}

/**
 * What single fields cannot tell: basic_auth is sent as an Authorization header, so an
 * Authorization header of the caller's own beside it would be a second, conflicting one.
 */
export function urlAccessProblem(access: UrlAccess): string | undefined {
  const authorization = Object.keys(access.headers).find((name) => name.toLowerCase() === 'authorization');
  if (access.basicAuth && authorization) {
    return `basic_auth and http_headers.${authorization} cannot be given together: basic_auth is sent as the Authorization header`;
  }
  return undefined;
}
