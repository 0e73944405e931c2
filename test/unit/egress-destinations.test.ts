/**
 * The egress policy (lib/egress/destinations.ts) and the check of a document's url against it
 * (lib/render/document-url.ts): a caller's `url` may only reach public unicast
 * addresses, however the address is spelled, unless the operator allow-lists a `host:port`.
 *
 * DNS is never queried: every check gets an injected resolver.
 */
import { describe, expect, it } from 'vitest';
import { DocumentError } from '#lib/render/errors.ts';
import { hostPortOf, isPublicAddress } from '#lib/egress/destinations.ts';
import { assertUrlAllowed } from '#lib/render/document-url.ts';

const NO_ALLOW_LIST: ReadonlySet<string> = new Set();

/** A resolver answering from a fixed table; unknown names fail like NXDOMAIN. Records the names asked. */
function resolverFor(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (host: string): Promise<string[]> => {
    asked.push(host);
    const answer = table[host];
    if (!answer) throw new Error(`ENOTFOUND ${host}`);
    return answer;
  };
  return { resolve, asked };
}

/** A resolver for URLs that carry an IP literal: asking it anything is a test failure. */
const mustNotResolve = async (host: string): Promise<string[]> => {
  throw new Error(`unexpected DNS lookup for ${host}`);
};

/** The refusal a caller gets, or undefined when the URL was allowed. */
async function refusal(
  url: string,
  policy: { allowPrivateHosts?: ReadonlySet<string>; resolve?: (host: string) => Promise<string[]> } = {},
): Promise<DocumentError | undefined> {
  try {
    await assertUrlAllowed(url, {
      allowPrivateHosts: policy.allowPrivateHosts ?? NO_ALLOW_LIST,
      resolve: policy.resolve ?? mustNotResolve,
    });
    return undefined;
  } catch (error) {
    if (error instanceof DocumentError) return error;
    throw error;
  }
}

describe('isPublicAddress refuses every non-public address', () => {
  it.each([
    ['IPv4 loopback', '127.0.0.1'],
    ['IPv4 loopback, top of 127/8', '127.255.255.254'],
    ['private 10/8', '10.0.0.1'],
    ['private 10/8, top', '10.255.255.255'],
    ['private 172.16/12, bottom', '172.16.0.1'],
    ['private 172.16/12, top', '172.31.255.255'],
    ['private 192.168/16', '192.168.1.1'],
    ['link-local / cloud metadata', '169.254.169.254'],
    ['carrier-grade NAT 100.64/10, bottom', '100.64.0.1'],
    ['carrier-grade NAT 100.64/10, top', '100.127.255.255'],
    ['unspecified', '0.0.0.0'],
    ['"this network" 0/8', '0.1.2.3'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['reserved 240/4', '240.0.0.1'],
    ['documentation TEST-NET-1', '192.0.2.1'],
    ['documentation TEST-NET-2', '198.51.100.1'],
    ['documentation TEST-NET-3', '203.0.113.1'],
    ['benchmarking 198.18/15', '198.18.0.1'],
    ['IETF protocol assignments 192.0.0/24', '192.0.0.1'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unspecified', '::'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 link-local with zone', 'fe80::1%eth0'],
    ['IPv6 unique local fc00::/7', 'fc00::1'],
    ['IPv6 unique local fd00::/8', 'fd12:3456:789a::1'],
    ['IPv6 site-local (deprecated)', 'fec0::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped loopback, hex form', '::ffff:7f00:1'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['IPv4-compatible loopback (deprecated ::/96)', '::7f00:1'],
    ['IPv4-compatible private (deprecated ::/96)', '::a00:1'],
    ['IPv4-compatible public (deprecated ::/96)', '::808:808'],
    ['reserved ::/8 with an IPv4 tail', '::1:7f00:1'],
    ['IPv4-translated ::ffff:0:0:0/96', '::ffff:0:7f00:1'],
    ['6to4 carrying 127.0.0.1', '2002:7f00:1::1'],
    ['6to4 carrying a public address', '2002:808:808::1'],
    ['NAT64 carrying 127.0.0.1', '64:ff9b::7f00:1'],
    ['NAT64 carrying a public address', '64:ff9b::808:808'],
    ['local-use NAT64 64:ff9b:1::/48', '64:ff9b:1::1'],
    ['IPv6 documentation 2001:db8::/32', '2001:db8::1'],
    ['IPv6 documentation 3fff::/20', '3fff::1'],
    ['Teredo 2001::/32', '2001::1'],
    ['discard-only 100::/64', '100::1'],
    ['benchmarking 2001:2::/48', '2001:2::1'],
    ['outside global unicast 2000::/3', '4000::1'],
  ])('%s: %s', (_name, address) => {
    // Act
    const isPublic = isPublicAddress(address);

    // Assess
    expect(isPublic).toBe(false);
  });

  it.each(['', 'localhost', 'example.com', '256.1.1.1', '1.2.3.4.5', ':::1', 'not an address'])(
    'refuses %j, which is not an IP address at all',
    (address) => {
      // Act
      const isPublic = isPublicAddress(address);

      // Assess
      expect(isPublic).toBe(false);
    },
  );
});

describe('isPublicAddress accepts ordinary public unicast', () => {
  it.each([
    ['Google DNS', '8.8.8.8'],
    ['Cloudflare DNS', '1.1.1.1'],
    ['just above 172.16/12', '172.32.0.1'],
    ['just below 100.64/10', '100.63.255.255'],
    ['just above 100.64/10', '100.128.0.1'],
    ['Cloudflare DNS over IPv6', '2606:4700:4700::1111'],
    ['Google DNS over IPv6', '2001:4860:4860::8888'],
    ['IPv4-mapped public', '::ffff:8.8.8.8'],
  ])('%s: %s', (_name, address) => {
    // Act
    const isPublic = isPublicAddress(address);

    // Assess
    expect(isPublic).toBe(true);
  });
});

describe('assertUrlAllowed refuses schemes other than http and https', () => {
  it.each([
    'file:///etc/passwd',
    'ftp://ftp.example.com/file.html',
    'javascript:alert(1)',
    'chrome://settings',
    'view-source:https://example.com/',
    'data:text/html,<h1>hi</h1>',
    'blob:https://example.com/uuid',
    'ws://example.com/',
    'gopher://example.com/',
  ])('%s', async (url) => {
    // Act
    const error = await refusal(url);

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
    expect(error?.message).toBe('url is not allowed: only http and https URLs can be rendered');
  });

  it.each(['', 'example.com/page', '/relative/path', 'http://', 'http://exa mple.com/'])(
    'refuses %j as not an absolute URL',
    async (url) => {
      // Act
      const error = await refusal(url);

      // Assess
      expect(error?.code).toBe('URL_NOT_ALLOWED');
      expect(error?.message).toBe('url is not a valid absolute URL');
    },
  );
});

describe('assertUrlAllowed refuses every spelling of a private address', () => {
  it.each([
    ['decimal IPv4', 'http://2130706433/'],
    ['hexadecimal short IPv4', 'http://0x7f.1/'],
    ['octal IPv4', 'http://0177.0.0.1/'],
    ['short IPv4', 'http://127.1/'],
    ['trailing-dot IPv4', 'http://127.0.0.1./'],
    ['zero shorthand for 0.0.0.0', 'http://0/'],
    ['full-width digits and ideographic dots', 'http://１２７。０。０。１/'],
    ['IPv6 loopback literal', 'http://[::1]/'],
    ['IPv6 unspecified literal', 'http://[::]/'],
    ['IPv4-mapped IPv6 literal', 'http://[::ffff:7f00:1]/'],
    ['IPv4-mapped IPv6 literal, dotted', 'http://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped IPv6 literal, uncompressed', 'http://[0:0:0:0:0:ffff:127.0.0.1]/'],
    ['IPv4-compatible IPv6 literal', 'http://[::127.0.0.1]/'],
    ['IPv4-compatible IPv6 literal, hex', 'http://[::7f00:1]/'],
    ['6to4 literal', 'http://[2002:7f00:1::1]/'],
    ['NAT64 literal', 'http://[64:ff9b::7f00:1]/'],
    ['userinfo that looks like a host', 'http://evil.com@127.0.0.1/'],
    ['userinfo with a port', 'http://evil.com:80@127.0.0.1:8080/'],
    ['backslashes', 'http:\\\\127.0.0.1\\'],
    ['upper-case scheme', 'HTTP://127.0.0.1/'],
    ['https', 'https://127.0.0.1/'],
    ['explicit port', 'http://127.0.0.1:3000/admin'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['private network', 'http://10.0.0.5/'],
    ['documentation address', 'http://192.0.2.1/'],
  ])('%s: %s', async (_name, url) => {
    // Act
    const error = await refusal(url);

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
    expect(error?.message).toMatch(/publicly reachable host/);
  });

  it('refuses HTTP://LOCALHOST/ after resolving the lower-cased name to loopback', async () => {
    // Prepare
    const { resolve, asked } = resolverFor({ localhost: ['127.0.0.1', '::1'] });

    // Act
    const error = await refusal('HTTP://LOCALHOST/', { resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
    expect(asked).toEqual(['localhost']);
  });

  it('refuses a name when any one of its addresses is private', async () => {
    // Prepare: a public answer alongside a private one (DNS rebinding, split answers)
    const { resolve } = resolverFor({ 'mixed.example': ['93.184.215.14', '2606:4700::1', '10.0.0.7'] });

    // Act
    const error = await refusal('https://mixed.example/invoice', { resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
  });

  it('refuses a name whose only private address is IPv6', async () => {
    // Prepare
    const { resolve } = resolverFor({ 'v6.example': ['8.8.8.8', 'fd00::5'] });

    // Act
    const error = await refusal('https://v6.example/', { resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
  });

  it('refuses a name that resolves to no address at all, as not resolving', async () => {
    // Prepare
    const { resolve } = resolverFor({ 'empty.example': [] });

    // Act
    const error = await refusal('https://empty.example/', { resolve });

    // Assess
    expect(error?.code).toBe('URL_UNREACHABLE');
    expect(error?.message).toBe('url could not be loaded: the host empty.example does not resolve');
  });

  it('refuses a name that resolves to garbage instead of an address', async () => {
    // Prepare
    const { resolve } = resolverFor({ 'odd.example': ['not-an-ip'] });

    // Act
    const error = await refusal('https://odd.example/', { resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
  });

  it('reports a name that does not resolve as unreachable, naming the host', async () => {
    // Prepare
    const { resolve } = resolverFor({});

    // Act
    const error = await refusal('https://no-such-host.example/', { resolve });

    // Assess
    expect(error?.code).toBe('URL_UNREACHABLE');
    expect(error?.message).toBe('url could not be loaded: the host no-such-host.example does not resolve');
  });
});

describe('assertUrlAllowed allows public destinations', () => {
  it('allows a name whose every address is public, and returns the normalised URL', async () => {
    // Prepare
    const { resolve, asked } = resolverFor({ 'www.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });

    // Act
    const url = await assertUrlAllowed('HTTPS://WWW.Example.COM/Invoice?id=42', { allowPrivateHosts: NO_ALLOW_LIST, resolve });

    // Assess
    expect(url.href).toBe('https://www.example.com/Invoice?id=42');
    expect(asked).toEqual(['www.example.com']);
  });

  it.each(['http://8.8.8.8/', 'https://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]:8080/'])(
    'allows the public IP literal %s without a DNS lookup',
    async (raw) => {
      // Act
      const url = await assertUrlAllowed(raw, { allowPrivateHosts: NO_ALLOW_LIST, resolve: mustNotResolve });

      // Assess
      expect(url).toBeInstanceOf(URL);
    },
  );
});

describe('assertUrlAllowed with PDF_ALLOW_PRIVATE_HOSTS', () => {
  const allowPrivateHosts: ReadonlySet<string> = new Set(['localhost:3000', '127.0.0.1:8080', 'intranet.local:443']);
  const { resolve } = resolverFor({ localhost: ['127.0.0.1'], 'intranet.local': ['10.1.2.3'] });

  it.each([
    'http://localhost:3000/invoice.html',
    'HTTP://LOCALHOST:3000/',
    'http://127.0.0.1:8080/',
    'http://2130706433:8080/',
    'https://intranet.local/report',
    'https://intranet.local:443/report',
  ])('allows the listed host:port %s', async (raw) => {
    // Act
    const error = await refusal(raw, { allowPrivateHosts, resolve });

    // Assess
    expect(error).toBeUndefined();
  });

  it.each([
    ['another port of a listed host', 'http://localhost:3001/'],
    ['the default port of a host listed with another port', 'http://localhost/'],
    ['another port of a listed address', 'http://127.0.0.1:8081/'],
    ['http on a host listed for port 443', 'http://intranet.local/report'],
    ['an unlisted private address', 'http://10.0.0.1:3000/'],
    ['the same port on an unlisted loopback spelling', 'http://[::1]:3000/'],
  ])('still refuses %s (%s)', async (_name, raw) => {
    // Act
    const error = await refusal(raw, { allowPrivateHosts, resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
  });

  it('never lets a listed host:port through with a scheme other than http or https', async () => {
    // Act
    const error = await refusal('ftp://localhost:3000/', { allowPrivateHosts, resolve });

    // Assess
    expect(error?.code).toBe('URL_NOT_ALLOWED');
  });
});

describe('hostPortOf', () => {
  it.each([
    ['http://Example.com/', 'example.com:80'],
    ['https://example.com/', 'example.com:443'],
    ['http://example.com:443/', 'example.com:443'],
    ['https://example.com:8443/', 'example.com:8443'],
    ['http://[::1]:3000/', '[::1]:3000'],
  ])('%s is %s in the allow-list', (raw, expected) => {
    // Act
    const key = hostPortOf(new URL(raw));

    // Assess
    expect(key).toBe(expected);
  });
});
