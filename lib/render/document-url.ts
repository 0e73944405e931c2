/**
 * The `url` a caller asks to render, checked before the browser is pointed at it, so that a refused
 * URL is a clear 400 rather than a failed navigation. The destination's verdict is the egress
 * policy's (lib/egress/destinations.ts, the same one the egress guard applies to every request the
 * page makes); the wording, for the caller of this API, is the document's.
 */
import { portOf, resolveDestination, type EgressPolicy } from '#lib/egress/destinations.ts';
import { DocumentError, quoteInput } from './errors.ts';

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * Checks a caller-supplied URL (see above). Throws URL_NOT_ALLOWED, or URL_UNREACHABLE for a host that
 * does not resolve, with a message a caller can act on.
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
