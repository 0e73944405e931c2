/**
 * Which network destinations a document or a webhook may reach: public unicast addresses only,
 * unless the deployment lists a `host:port` in PDF_ALLOW_PRIVATE_HOSTS. Verdicts only: the caller
 * words the refusal for its own reader (lib/render/document-url.ts for a document's `url`).
 *
 * Decisions are made on resolved addresses, never on the URL's text: the WHATWG URL parser first
 * normalises every spelling (decimal, octal, hex or short IPv4 forms, upper-case schemes,
 * backslashes, userinfo), then every address the name resolves to must be public.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

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
