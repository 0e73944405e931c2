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
import { DocumentError, quoteInput } from '#lib/render/errors.ts';

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * IANA's global unicast block. ipaddr.js calls every IPv6 address outside its named special
 * ranges 'unicast', including the rest of the IETF-reserved space: the deprecated IPv4-compatible
 * ::/96 (which `http://[::127.0.0.1]/` normalises to) and ::/8, 4000::/3 and the like.
 */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * True when an address is ordinary public unicast. IPv4-mapped IPv6 is judged as the IPv4
 * address it carries; 6to4, NAT64 and Teredo embeddings are refused outright, since they can
 * tunnel to addresses we cannot see, and so is IPv6 outside the global unicast block 2000::/3.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address); // unwraps ::ffff:a.b.c.d into a.b.c.d
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || parsed.match(IPV6_GLOBAL_UNICAST);
}

/** `host:port` as it appears in the allow-list, with the scheme's default port filled in. */
export function hostPortOf(url: URL): string {
  return `${url.hostname.toLowerCase()}:${portOf(url)}`;
}

/** The URL's port, or its scheme's default. */
export function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
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

export type Destination =
  | { readonly allowed: true; /** The address to connect to: the one that was checked. */ readonly address: string }
  | { readonly allowed: false; readonly reason: 'not_public' | 'unresolvable' };

/**
 * Where a connection to `host:port` may go: the allow-list by name, else every address the name
 * resolves to must be public, and the connection must then go to one of exactly those addresses
 * (never resolve again: that is how DNS rebinding switches a checked name to an internal address).
 */
export async function resolveDestination(host: string, port: number, policy: EgressPolicy): Promise<Destination> {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const allowListed = policy.allowPrivateHosts.has(`${host.toLowerCase()}:${port}`);
  let addresses: string[];
  if (ipaddr.isValid(bare)) {
    addresses = [bare];
  } else {
    try {
      addresses = await (policy.resolve ?? resolveAll)(bare);
    } catch {
      return { allowed: false, reason: 'unresolvable' };
    }
  }
  const first = addresses[0];
  if (first === undefined) return { allowed: false, reason: 'unresolvable' };
  if (!allowListed && !addresses.every(isPublicAddress)) return { allowed: false, reason: 'not_public' };
  return { allowed: true, address: first };
}

/**
 * Checks a caller-supplied URL before the browser is pointed at it, so that a refused URL is a
 * clear 400 rather than a failed navigation. Throws URL_NOT_ALLOWED with a message a caller can act on.
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
  const destination = await resolveDestination(url.hostname, portOf(url), policy);
  if (!destination.allowed && destination.reason === 'unresolvable') {
    throw new DocumentError('URL_UNREACHABLE', `url could not be loaded: the host ${quoteInput(url.hostname)} does not resolve`);
  }
  if (!destination.allowed) {
    throw new DocumentError(
      'URL_NOT_ALLOWED',
      'url is not allowed: it must point to a publicly reachable host, not a private, loopback or link-local address',
    );
  }
  // Credentials in the URL would be dropped on the way: refused, naming the option that sends them.
  // Checked after the address, so that a private one is refused as such whatever the URL carries.
  if (url.username !== '' || url.password !== '') {
    throw new DocumentError('URL_NOT_ALLOWED', 'url must not carry credentials (user:password@): give them as basic_auth instead');
  }
  return url;
}
