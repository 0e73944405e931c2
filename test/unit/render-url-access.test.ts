/**
 * The url options (shared/spec/beyond.md, "Fetching a url") as far as they need no browser: their
 * validation through a batch item's options schema (lib/render/url-access-options.ts), and how
 * lib/render/url-access.ts turns them into headers and cookies for the document's origin.
 * test/integration/url-options.test.ts checks what sites really receive.
 */
import { describe, expect, it } from 'vitest';
import { itemOptionsSchema } from '#lib/documents/document-options.ts';
import { describeIssue } from '#lib/render/options.ts';
import { resolveUrlAccess, urlAccessProblem, type UrlAccess } from '#lib/render/url-access-options.ts';
import { cookieParams, FrameDocuments, originHeaders, startedByOrigin, withOriginHeaders, type PausedRequest } from '#lib/render/url-access.ts';
import { DocumentError } from '#lib/render/errors.ts';

function refusal(options: Record<string, unknown>): string | undefined {
  const result = itemOptionsSchema.safeParse(options);
  return result.success ? undefined : describeIssue(result.error);
}

function access(options: Record<string, unknown>): UrlAccess {
  return resolveUrlAccess(itemOptionsSchema.parse(options));
}

describe('http_headers validation', () => {
  it.each([
    ['Host', /may not set Host/],
    ['Cookie', /may not set Cookie \(use cookies\)/],
    ['cookie2', /may not set cookie2 \(use cookies\)/],
    ['Referer', /may not set Referer/],
    ['Proxy-Authorization', /may not set Proxy-Authorization/],
    ['Proxy-Anything', /Proxy-\*/],
    ['Transfer-Encoding', /may not set Transfer-Encoding/],
    ['Content-Length', /may not set Content-Length/],
  ])('refuses %s', (name, message) => {
    // Act
    const problem = refusal({ http_headers: { [name]: 'x' } });

    // Assess
    expect(problem).toMatch(message);
  });

  it('refuses one name given twice in different case, and never quotes a value', () => {
    // Act
    const twice = refusal({ http_headers: { 'X-Token': 'first-secret', 'x-token': 'second-secret' } });
    const broken = refusal({ http_headers: { 'X-Token': 'a-secret\r\nX-Injected: 1' } });

    // Assess
    expect(twice).toMatch(/twice/);
    expect(broken).toMatch(/http_headers\.X-Token must be printable ASCII/);
    for (const message of [twice, broken]) expect(message).not.toMatch(/secret/);
  });

  it('accepts ordinary headers, Authorization and User-Agent among them', () => {
    // Act
    const accepted = access({ http_headers: { Authorization: 'Bearer t', 'User-Agent': 'x', 'X-Tenant': 'acme corp' } });

    // Assess
    expect(accepted.headers).toEqual({ Authorization: 'Bearer t', 'User-Agent': 'x', 'X-Tenant': 'acme corp' });
  });
});

describe('cookies and basic_auth validation', () => {
  it('refuses a cookie whose name and value together exceed what a browser keeps', () => {
    // Act
    const problem = refusal({ cookies: [{ name: 'n'.repeat(200), value: 'v'.repeat(3_900) }] });

    // Assess
    expect(problem).toMatch(/4096/);
  });

  it('refuses control characters in basic_auth, without quoting the password', () => {
    // Act
    const problem = refusal({ basic_auth: { username: 'reporter', password: 'top\nsecret' } });

    // Assess
    expect(problem).toMatch(/basic_auth\.password/);
    expect(problem).not.toMatch(/secret/);
  });

  it('resolves defaults: path /, http_only false, secure left to the scheme, fail_on_http_status true', () => {
    // Act
    const resolved = access({ cookies: [{ name: 'a', value: 'b' }] });

    // Assess
    expect(resolved).toEqual({ headers: {}, cookies: [{ name: 'a', value: 'b', path: '/', httpOnly: false }], failOnHttpStatus: true });
  });
});

describe('urlAccessProblem', () => {
  it('refuses basic_auth beside an Authorization header of any case', () => {
    // Act
    const problem = urlAccessProblem(access({ basic_auth: { username: 'u', password: 'p' }, http_headers: { AUTHORIZATION: 'Bearer x' } }));

    // Assess
    expect(problem).toMatch(/basic_auth and http_headers\.AUTHORIZATION/);
  });

  it('accepts either alone', () => {
    // Assess
    expect(urlAccessProblem(access({ basic_auth: { username: 'u', password: 'p' } }))).toBeUndefined();
    expect(urlAccessProblem(access({ http_headers: { Authorization: 'Bearer x' } }))).toBeUndefined();
  });
});

describe('originHeaders and withOriginHeaders', () => {
  it('sends basic_auth as a Basic Authorization header of the UTF-8 credentials', () => {
    // Act
    const headers = originHeaders(access({ basic_auth: { username: 'rené', password: 'pa:ss' }, http_headers: { 'X-Tenant': 'acme' } }));

    // Assess
    expect(headers).toEqual({ 'X-Tenant': 'acme', Authorization: `Basic ${Buffer.from('rené:pa:ss', 'utf8').toString('base64')}` });
  });

  it('replaces a header the browser made of the same name, in any case, and keeps the others', () => {
    // Act
    const merged = withOriginHeaders({ Accept: 'text/html', 'User-Agent': 'Chrome' }, { accept: 'application/pdf', 'X-Tenant': 'acme' });

    // Assess
    expect(merged).toEqual([
      { name: 'User-Agent', value: 'Chrome' },
      { name: 'accept', value: 'application/pdf' },
      { name: 'X-Tenant', value: 'acme' },
    ]);
  });
});

describe('cookieParams', () => {
  it('makes host-only cookies of the document’s origin: a url, never a domain', () => {
    // Act
    const [cookie] = cookieParams(access({ cookies: [{ name: 'a', value: 'b', path: '/app', http_only: true }] }).cookies, 'https://reports.example:8443/app/q?x=1');

    // Assess
    expect(cookie).toEqual({ name: 'a', value: 'b', url: 'https://reports.example:8443/app', path: '/app', secure: true, httpOnly: true });
    expect(cookie).not.toHaveProperty('domain');
  });

  it('defaults secure to false for http, and refuses a secure cookie there', () => {
    // Act
    const [plain] = cookieParams(access({ cookies: [{ name: 'a', value: 'b' }] }).cookies, 'http://reports.example/');
    const secure = () => cookieParams(access({ cookies: [{ name: 'a', value: 'b' }, { name: 's', value: 't', secure: true }] }).cookies, 'http://reports.example/');

    // Assess
    expect(plain?.secure).toBe(false);
    expect(secure).toThrow(DocumentError);
    expect(secure).toThrow(/cookies\[1\] is secure but url is http/);
  });
});

describe('startedByOrigin: whose requests the origin’s headers go with', () => {
  const origin = 'https://reports.example';
  const request = (resourceType: string, headers: Record<string, string>, mainFrame = false): PausedRequest => ({ resourceType, headers, mainFrame });

  it.each([
    ['the top-level navigation, which has no referrer', request('Document', {}, true), true],
    ['a top-level navigation another origin starts (its answer replaces everything in the page)', request('Document', { Referer: 'https://evil.example/' }, true), true],
    ['a form another origin posts to the top', request('Document', { Origin: 'https://evil.example', Referer: 'https://evil.example/' }, true), false],
    ['a form the origin posts to the top', request('Document', { Origin: origin, Referer: `${origin}/form` }, true), true],
    ['an image of the origin’s page', request('Image', { Referer: `${origin}/report` }), true],
    ['an image of the origin’s style sheet', request('Image', { referer: `${origin}/style.css` }), true],
    ['the origin’s own POST fetch', request('XHR', { Origin: origin, Referer: `${origin}/report` }), true],
    ['a frame of the origin', request('Document', { Referer: `${origin}/report` }), true],
    ['an image of the origin’s page with a no-referrer policy', request('Image', {}), false],
    ['another origin’s fetch, in any credentials mode', request('XHR', { Origin: 'https://evil.example', Referer: 'https://evil.example/' }), false],
    ['another origin’s fetch without a referrer (a worker, an about:blank frame)', request('XHR', { Origin: 'https://evil.example' }), false],
    ['a fetch from an opaque origin (data: or sandboxed frame)', request('XHR', { Origin: 'null', Referer: `${origin}/report` }), false],
    ['another origin’s image or script', request('Script', { Referer: 'https://evil.example/page' }), false],
    ['another origin’s frame of the origin', request('Document', { Referer: 'https://evil.example/' }), false],
    ['another origin on the same host (another port)', request('Image', { Referer: 'https://reports.example:8443/' }), false],
    ['a referrer that is not a URL', request('Image', { Referer: 'reports.example' }), false],
  ])('%s: %s', (_what, paused, lent) => {
    // Act
    const started = startedByOrigin(paused, origin);

    // Assess
    expect(started).toBe(lent);
  });
});

describe('FrameDocuments: which frames hold another origin’s document', () => {
  const origin = 'https://reports.example';
  const frame = (id: string, securityOrigin: string, parentId?: string) =>
    ({ frame: { id, securityOrigin, url: `${securityOrigin}/`, ...(parentId && { parentId }) } }) as Parameters<FrameDocuments['navigated']>[0];

  it('knows the main frame and a frame of another origin, and not a frame without an origin of its own', async () => {
    // Prepare
    const frames = new FrameDocuments(origin);
    frames.mainFrame('main');

    // Act
    frames.navigated(frame('main', origin));
    frames.navigated(frame('evil', 'https://evil.example', 'main'));
    frames.navigated(frame('blank', '://', 'main'));

    // Assess
    expect(frames.isMainFrame('main')).toBe(true);
    expect(frames.isMainFrame('evil')).toBe(false);
    expect(await frames.holdsForeignDocument('main')).toBe(false);
    expect(await frames.holdsForeignDocument('evil')).toBe(true);
    expect(await frames.holdsForeignDocument('blank')).toBe(false);
    expect(await frames.holdsForeignDocument('never-seen')).toBe(false);
  });

  it('judges a request from a foreign frame that is navigating by the document that commits next', async () => {
    // Prepare
    const frames = new FrameDocuments(origin);
    frames.navigated(frame('f', 'https://evil.example', 'main'));
    frames.startedNavigating({ frameId: 'f', url: `${origin}/next`, loaderId: 'l', navigationType: 'differentDocument' });

    // Act: asked while the navigation is under way, answered once it commits on the origin
    const asked = frames.holdsForeignDocument('f');
    frames.navigated(frame('f', origin, 'main'));

    // Assess
    expect(await asked).toBe(false);
    expect(await frames.holdsForeignDocument('f')).toBe(false);
  });

  it('keeps a frame foreign across a same-document navigation, and one whose navigation never commits', async () => {
    // Prepare
    const frames = new FrameDocuments(origin);
    frames.navigated(frame('f', 'https://evil.example', 'main'));
    frames.startedNavigating({ frameId: 'f', url: 'https://evil.example/#x', loaderId: 'l', navigationType: 'sameDocument' });

    // Act
    const sameDocument = await frames.holdsForeignDocument('f');
    frames.startedNavigating({ frameId: 'f', url: `${origin}/no-content`, loaderId: 'l2', navigationType: 'differentDocument' });
    const started = performance.now();
    const neverCommitted = await frames.holdsForeignDocument('f');

    // Assess
    expect(sameDocument).toBe(true);
    expect(neverCommitted).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a frame detached while its request waits counts as foreign', async () => {
    // Prepare
    const frames = new FrameDocuments(origin);
    frames.navigated(frame('f', 'https://evil.example', 'main'));
    frames.startedNavigating({ frameId: 'f', url: `${origin}/next`, loaderId: 'l', navigationType: 'differentDocument' });

    // Act
    const asked = frames.holdsForeignDocument('f');
    frames.detached({ frameId: 'f', reason: 'remove' });

    // Assess
    expect(await asked).toBe(true);
  });
});
