/**
 * Which network destinations a document may reach: public unicast addresses only, unless the
 * deployment lists a `host:port` in PDF_ALLOW_PRIVATE_HOSTS.
 *
 * Decisions are made on resolved addresses, never on the URL's text: the WHATWG URL parser first
 * normalises every spelling (decimal, octal, hex or short IPv4 forms, upper-case schemes,
 * backslashes, userinfo), then every address the name resolves to must be public.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { DocumentError } from '#lib/documents/errors.ts';

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * True when an address is ordinary public unicast. IPv4-mapped IPv6 is judged as the IPv4
 * address it carries; 6to4, NAT64 and Teredo embeddings are refused outright, since they can
 * tunnel to addresses we cannot see.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address); // unwraps ::ffff:a.b.c.d into a.b.c.d
  return parsed.range() === 'unicast';
}

/** `host:port` as it appears in the allow-list, with the scheme's default port filled in. */
export function hostPortOf(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname.toLowerCase()}:${port}`;
}

export interface EgressPolicy {
  readonly allowPrivateHosts: ReadonlySet<string>;
  /** Resolves a host name to its addresses; injectable for tests. */
  readonly resolve?: (host: string) => Promise<string[]>;
}

async function resolveAll(host: string): Promise<string[]> {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/**
 * Checks a caller-supplied URL before the browser is pointed at it.
 * Throws URL_NOT_ALLOWED with a message a caller can act on.
 */
export async function assertUrlAllowed(raw: string, policy: EgressPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DocumentError('URL_NOT_ALLOWED', 'url is not a valid absolute URL');
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    throw new DocumentError('URL_NOT_ALLOWED', `url is not allowed: only http and https URLs can be rendered`);
  }
  if (policy.allowPrivateHosts.has(hostPortOf(url))) return url;

  // URL keeps IPv6 literals in brackets.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await (policy.resolve ?? resolveAll)(host);
    } catch {
      throw new DocumentError('URL_UNREACHABLE', `url could not be loaded: the host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    throw new DocumentError(
      'URL_NOT_ALLOWED',
      'url is not allowed: it must point to a publicly reachable host, not a private, loopback or link-local address',
    );
  }
  return url;
}
