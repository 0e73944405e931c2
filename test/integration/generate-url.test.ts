/**
 * POST /v1/pdf/generate with `url`: public pages render; private, loopback and non-HTTP
 * destinations are refused before any connection is made; broken and endless pages end in the
 * documented errors without harming the next request.
 *
 * Every refused URL here is either loopback or a literal private address that the egress guard
 * rejects before the browser sees it, so no traffic leaves the machine.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createKey, expectApiError, generate, generateAndDownload, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { CANARY } from '../support/fixture-server.ts';
import { readPdf } from '../support/pdf.ts';

const publicSite = inject('publicSite');
const internalSite = inject('internalSite');
const renderTimeoutMs = inject('renderTimeoutMs');
const internalPort = new URL(internalSite).port;

describe('POST /v1/pdf/generate with url', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('enterprise');
  });

  it('renders an allow-listed page and records it like any other PDF', async () => {
    // Act
    const { record, bytes } = await generateAndDownload(key.apiKey, { url: `${publicSite}/page` });

    // Assess
    const pdf = await readPdf(bytes);
    expect(pdf.text).toContain('Fixture page from the public site');
    expect(record.pages).toBe(pdf.pageCount);
    expect(record.size).toBe(bytes.byteLength);
    expect(record.format).toBe('A4');
  });

  it('says a site that is down could not be loaded (400), not that it answered an error', async () => {
    // Act
    const response = await generate(key.apiKey, { url: `${inject('deadSite')}/page` });

    // Assess: the egress guard's own 502 is not the site's
    const message = expectApiError(response, 400, 'invalid_request');
    expect(message).toMatch(/could not be loaded/);
    expect(message).not.toMatch(/HTTP 502/);
  });

  it('refuses a loopback service that is not allow-listed, without contacting it', async () => {
    // Prepare
    const probe = randomUUID();

    // Act
    const response = await generate(key.apiKey, { url: `${internalSite}/canary?probe=${probe}` });

    // Assess
    const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey, CANARY] });
    expect(message).toMatch(/not allowed/i);
    expect((await requestsReceivedBy(internalSite)).some((path) => path.includes(probe))).toBe(false);
  });

  describe('refuses destinations that are not public http(s) before connecting', () => {
    it.each([
      ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
      ['a private network address', 'http://10.0.0.1/'],
      ['the unspecified address', `http://0.0.0.0:${internalPort}/canary`],
      ['IPv6 loopback', `http://[::1]:${internalPort}/canary`],
      ['IPv4-mapped IPv6 loopback', `http://[::ffff:127.0.0.1]:${internalPort}/canary`],
      ['decimal loopback', `http://2130706433:${internalPort}/canary`],
      ['hexadecimal short-form loopback', `http://0x7f.1:${internalPort}/canary`],
      ['a name resolving to loopback', `http://localhost:${internalPort}/canary`],
    ])('%s is 400 invalid_request saying the URL is not allowed', async (_what, url) => {
      // Prepare
      const probe = randomUUID();
      const probed = url.includes('/canary') ? `${url}?probe=${probe}` : url;

      // Act
      const response = await generate(key.apiKey, { url: probed });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [CANARY] });
      expect(message).toMatch(/not allowed/i);
      expect((await requestsReceivedBy(internalSite)).some((path) => path.includes(probe))).toBe(false);
    });

    it.each([
      ['a file: URL', 'file:///etc/passwd'],
      ['an ftp: URL', `ftp://127.0.0.1:${internalPort}/`],
      ['a data: URL', 'data:text/html,<p>inline</p>'],
      ['a javascript: URL', 'javascript:alert(1)'],
    ])('%s is 400 invalid_request saying only http and https are allowed', async (_what, url) => {
      // Act
      const response = await generate(key.apiKey, { url });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: ['root:x:0:0'] });
      expect(message).toMatch(/not allowed/i);
      expect(message).toMatch(/http/);
    });

    it.each([
      ['not a URL at all', 'just some words'],
      ['a relative path', '/page'],
    ])('a url that is %s is 400 invalid_request', async (_what, url) => {
      // Act
      const response = await generate(key.apiKey, { url });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/url/);
    });

    it('a url that is not a string is 400 invalid_request naming url', async () => {
      // Act
      const response = await generate(key.apiKey, { url: 42 });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/url/);
    });
  });

  describe('requests the document itself makes follow the same rules', () => {
    it('an html document cannot pull a loopback service into its PDF by iframe, image or fetch', async () => {
      // Prepare
      const probe = randomUUID();
      const target = (how: string) => `${internalSite}/canary?probe=${probe}-${how}`;
      const html =
        `<!doctype html><p>Outer document</p><iframe src="${target('iframe')}"></iframe><img src="${target('img')}">` +
        `<pre id="out"></pre><script>fetch('${target('fetch')}').then((r) => r.text()).then((t) => { out.textContent = t; }, () => {});</script>`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, wait_for: 'networkidle0' });

      // Assess
      const text = (await readPdf(bytes)).text;
      expect(text).toContain('Outer document');
      expect(text).not.toContain(CANARY);
      expect((await requestsReceivedBy(internalSite)).filter((path) => path.includes(probe))).toEqual([]);
    });

    it('an allow-listed site still loads as a subresource', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        html: `<!doctype html><p>Outer document</p><iframe src="${publicSite}/page" style="width:600px;height:200px"></iframe>`,
      });

      // Assess
      expect((await readPdf(bytes)).text).toContain('Fixture page from the public site');
    });

    it('an allowed page that redirects to a loopback service does not deliver it', async () => {
      // Prepare
      const probe = randomUUID();
      const url = `${publicSite}/redirect?to=${encodeURIComponent(`${internalSite}/canary?probe=${probe}`)}`;

      // Act
      const response = await generate(key.apiKey, { url });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [CANARY] });
      expect(message).toMatch(/url/);
      expect((await requestsReceivedBy(internalSite)).some((path) => path.includes(probe))).toBe(false);
    });
  });

  it('a page answering 404 is 422 url_fetch_failed saying it answered HTTP 404 (test/integration/url-options.test.ts has more)', async () => {
    // Act
    const response = await generate(key.apiKey, { url: `${publicSite}/not-found` });

    // Assess
    expect(expectApiError(response, 422, 'url_fetch_failed')).toMatch(/HTTP 404/);
  });

  describe('render timeout', () => {
    it('a page that never answers is 504 render_timeout, once the limit has passed', async () => {
      // Prepare
      const started = Date.now();

      // Act
      const response = await generate(key.apiKey, { url: `${publicSite}/hang` });

      // Assess
      const elapsed = Date.now() - started;
      const message = expectApiError(response, 504, 'render_timeout', { secrets: [key.apiKey] });
      expect(message).toMatch(/took longer|time/i);
      expect(elapsed).toBeGreaterThanOrEqual(renderTimeoutMs - 500);
    });

    it('a document stuck in an infinite loop is 504, and the very next request succeeds (not handed the stuck renderer, which would time out too)', async () => {
      // Act
      const stuck = await generate(key.apiKey, { html: '<!doctype html><p>Spinning</p><script>while(true){}</script>' });
      const next = await generateAndDownload(key.apiKey, { html: '<!doctype html><p>Business as usual</p>' });

      // Assess
      expectApiError(stuck, 504, 'render_timeout', { secrets: [key.apiKey] });
      expect((await readPdf(next.bytes)).text).toContain('Business as usual');
    });

    it('a document whose timers never stop is still printed once it has loaded', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        html: '<!doctype html><p id="t">Ticking</p><script>setInterval(() => {}, 10)</script>',
      });

      // Assess
      expect((await readPdf(bytes)).text).toContain('Ticking');
    });
  });
});
