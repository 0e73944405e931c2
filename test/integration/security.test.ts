/**
 * The attack corpus: untrusted HTML and URLs trying to reach the internal network, the host's
 * files, or another customer's documents, through the local stack with real Chromium.
 *
 * The "internal" fixture site plays a private service (the Lambda runtime API, a metadata
 * endpoint, an intranet): it is on loopback and NOT in PDF_ALLOW_PRIVATE_HOSTS. Every vector asks
 * for it with a unique marker, and each test asserts both that the PDF never shows its canary and
 * that the site never received the request at all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createKey, generate, generateAndDownload, post, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { CANARY } from '../support/fixture-server.ts';
import { readPdf } from '../support/pdf.ts';

const internalSite = inject('internalSite');
const publicSite = inject('publicSite');
const internal = new URL(internalSite);
const port = internal.port;

let key: TestKey;
beforeAll(async () => {
  key = await createKey('enterprise');
});

/** Renders html and returns the PDF's text; the render itself must succeed. */
async function renderText(html: string, options: Record<string, unknown> = {}): Promise<string> {
  const { bytes } = await generateAndDownload(key.apiKey, { html, ...options });
  return (await readPdf(bytes)).text;
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

async function internalRequestsMatching(marker: string): Promise<string[]> {
  return (await requestsReceivedBy(internalSite)).filter((path) => path.includes(marker));
}

/** Every spelling of the internal site's loopback address that a parser might let through. */
const SPELLINGS: Record<string, string> = {
  'plain loopback': `http://127.0.0.1:${port}`,
  'localhost name': `http://localhost:${port}`,
  'upper-case scheme and host': `HTTP://LOCALHOST:${port}`,
  'decimal IPv4': `http://2130706433:${port}`,
  'hex IPv4': `http://0x7f000001:${port}`,
  'octal IPv4': `http://0177.0.0.1:${port}`,
  'short IPv4': `http://127.1:${port}`,
  'unspecified address': `http://0.0.0.0:${port}`,
  'IPv4-mapped IPv6': `http://[::ffff:127.0.0.1]:${port}`,
  'IPv6 loopback': `http://[::1]:${port}`,
  'userinfo trick': `http://public.example.com@127.0.0.1:${port}`,
  backslashes: `http:\\\\127.0.0.1:${port}`,
};

describe('subresources to internal addresses are refused, however they are spelled', () => {
  it.each(Object.entries(SPELLINGS))('iframe via %s', async (name, base) => {
    // Prepare
    const marker = `spelling-${name.replace(/\W+/g, '-')}`;

    // Act
    const text = await renderText(`<p>Before</p><iframe src="${base}/canary?m=${marker}"></iframe><p>After</p>`);

    // Assess
    expect(text).toContain('Before');
    expect(text).not.toContain(CANARY);
    expect(await internalRequestsMatching(marker)).toEqual([]);
  });

  it('every kind of subresource and script-initiated request', async () => {
    // Prepare: one document that tries everything at once, and writes what it got into the page.
    const url = (kind: string) => `${internalSite}/canary?m=kinds-${kind}`;
    const html = `<!doctype html>
      <img src="${url('img')}"><link rel="stylesheet" href="${url('css')}"><script src="${url('script')}"></script>
      <object data="${url('object')}"></object><embed src="${url('embed')}"><video src="${url('video')}"></video>
      <div style="background:url(${url('background')})">bg</div>
      <style>@import url(${url('import')}); @font-face { font-family: X; src: url(${url('font')}); } p { font-family: X; }</style>
      <pre id="out">results:</pre>
      <script>
        const out = (s) => document.getElementById('out').textContent += ' ' + s;
        fetch('${url('fetch')}').then(r => r.text()).then(out, () => out('fetch-refused'));
        const xhr = new XMLHttpRequest(); xhr.open('GET', '${url('xhr')}', false);
        try { xhr.send(); out(xhr.responseText); } catch { out('xhr-refused'); }
        navigator.sendBeacon('${url('beacon')}', 'x');
        new EventSource('${url('eventsource')}');
        const ws = new WebSocket('ws://127.0.0.1:${port}/canary?m=kinds-websocket');
        ws.onmessage = (e) => out(e.data); ws.onerror = () => out('ws-refused');
        const worker = new Worker(URL.createObjectURL(new Blob([
          "fetch('${url('worker')}').then(r => r.text()).then(t => postMessage(t), () => postMessage('worker-refused'))"
        ])));
        worker.onmessage = (e) => out(e.data);
      </script>`;

    // Act
    const text = await renderText(html, { wait_for: 'networkidle0' });

    // Assess
    expect(text).toContain('results:');
    expect(text).toContain('fetch-refused');
    expect(text).toContain('worker-refused');
    expect(text).not.toContain(CANARY);
    expect(await internalRequestsMatching('kinds-')).toEqual([]);
  });

  it('navigations started by the document: meta refresh, location, form submission, popups', async () => {
    // Prepare
    const url = (kind: string) => `${internalSite}/canary?m=nav-${kind}`;
    const documents = [
      `<meta http-equiv="refresh" content="0;url=${url('meta')}"><p>meta</p>`,
      `<p>location</p><script>location.href = '${url('location')}';</script>`,
      `<form id="f" action="${url('form')}" method="get"></form><script>document.getElementById('f').submit();</script>`,
      `<p>popup</p><script>window.open('${url('popup')}');</script>`,
      `<iframe src="${publicSite}/redirect?to=${encodeURIComponent(url('redirect'))}"></iframe>`,
    ];

    // Act
    const answers = await Promise.all(documents.map((html) => generate(key.apiKey, { html, wait_for: 'networkidle0' })));

    // Assess: whatever each document became, it holds no canary and nothing reached the site
    for (const answer of answers) {
      if (answer.status !== 200) continue;
      const pdf = await readPdf(new Uint8Array(await (await fetch(answer.body.url)).arrayBuffer()));
      expect(pdf.text).not.toContain(CANARY);
    }
    expect(await internalRequestsMatching('nav-')).toEqual([]);
  });

  it('the cloud metadata address 169.254.169.254 is refused without a connection attempt', async () => {
    // Act
    const started = Date.now();
    const text = await renderText('<p>meta</p><iframe src="http://169.254.169.254/latest/meta-data/iam/"></iframe>');

    // Assess: refused by address at once, not after a connect timeout
    expect(text).toContain('meta');
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});

describe('the host file system is out of reach', () => {
  it.each([
    ['iframe', '<iframe src="file:///etc/passwd"></iframe>'],
    ['img', '<img src="file:///etc/passwd">'],
    ['fetch', `<pre id="o">x</pre><script>fetch('file:///etc/passwd').then(r => r.text()).then(t => o.textContent = t, () => o.textContent = 'refused')</script>`],
    ['UNC-style path', '<iframe src="\\\\localhost\\etc\\passwd"></iframe>'],
    ['view-source', '<iframe src="view-source:file:///etc/passwd"></iframe>'],
  ])('via %s', async (_kind, html) => {
    // Act
    const text = await renderText(`<p>doc</p>${html}`);

    // Assess: /etc/passwd always starts with root's entry
    expect(text).not.toMatch(/root:.*:0:0:/);
  });

  it.each(['file:///etc/passwd', 'FILE:///etc/passwd', 'view-source:http://example.com/', 'chrome://version', 'ftp://example.com/x'])(
    'a top-level url %s is a 400',
    async (url) => {
      // Act
      const { status, body } = await generate(key.apiKey, { url });

      // Assess
      expect(status).toBe(400);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message).toContain('not allowed');
    },
  );
});

describe('top-level urls', () => {
  it('a public url that redirects to an internal address is refused as not allowed', async () => {
    // Act
    const marker = 'top-redirect';
    const { status, body } = await generate(key.apiKey, {
      url: `${publicSite}/redirect?to=${encodeURIComponent(`${internalSite}/canary?m=${marker}`)}`,
    });

    // Assess
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('not allowed');
    expect(await internalRequestsMatching(marker)).toEqual([]);
  });

  it('in a batch, a refused url is URL_NOT_ALLOWED and the other items still render', async () => {
    // Act
    const { body } = await post('/v1/pdf/batch', { pdfs: [{ url: `${internalSite}/canary?m=batch` }, { html: '<p>fine</p>' }] }, key.apiKey);

    // Assess
    expect(body.results[0]).toEqual({ success: false, error: { code: 'URL_NOT_ALLOWED', message: expect.stringContaining('not allowed') } });
    expect(body.results[1].success).toBe(true);
  });
});

describe('isolation between documents', () => {
  // The same key on purpose: a workspace may serve the same key's next document (after a reset),
  // so this is the hardest case; another key never even shares the browser context.
  it('a timer, globals, window name and history planted by one document never reach the next ones', async () => {
    // Prepare: the planting document keeps writing into "any later document" it can reach.
    const plant = `<p>first</p><script>
      window.planted = 'PLANTED-GLOBAL'; window.name = 'PLANTED-NAME'; history.pushState({}, '', '#planted');
      setInterval(() => { for (const w of [window, window.opener, window.top]) { try { w.document.body.insertAdjacentText('beforeend', ' LEAKED-FROM-FIRST '); } catch {} } }, 1);
    </script>`;
    const probe = `<p>probe</p><pre id="o"></pre><script>
      setTimeout(() => { o.textContent = 'planted=' + (typeof window.planted) + ' name=' + (window.name || 'empty') + ' history=' + history.length; }, 200);
    </script>`;

    // A document without scripts renders with scripting off and may follow another in the same window.
    const staticProbe = '<p>static probe</p><p>nothing else</p>';

    // Act: the planting document, then probes one after another and at the same time
    await renderText(plant);
    const sequential = [await renderText(probe, { wait_for: 'networkidle0' }), await renderText(probe, { wait_for: 'networkidle0' })];
    await renderText(plant);
    const staticAfterPlant = [await renderText(staticProbe, { wait_for: 'networkidle0' }), await renderText(staticProbe)];
    const parallel = await Promise.all([plant, probe, staticProbe, probe, plant, staticProbe].map((html) => renderText(html, { wait_for: 'networkidle0' })));

    // Assess
    for (const text of [...sequential, parallel[1]!, parallel[3]!]) {
      expect(text).toContain('planted=undefined name=empty history=1');
      expect(text).not.toContain('LEAKED-FROM-FIRST');
    }
    for (const text of [...staticAfterPlant, parallel[2]!, parallel[5]!]) {
      expect(normalize(text)).toBe('static probe nothing else');
    }
  });

  it('a scripted document finds its window as new: no global beyond those of a fresh frame', async () => {
    // Prepare: a fresh frame's window is the baseline; the document's own window may have no more.
    const probe = `<p>probe</p><pre id="o"></pre><script>
      (() => {
        const frame = document.createElement('iframe');
        document.body.append(frame);
        const fresh = new Set(Object.getOwnPropertyNames(frame.contentWindow));
        const extra = Object.getOwnPropertyNames(window).filter((name) => !fresh.has(name) && !/^[0-9]+$/.test(name));
        frame.remove();
        o.textContent = 'extra globals: ' + (extra.join(' ') || 'none');
      })();
    </script>`;

    // Act: the first document of fresh workspaces, and one after another
    const texts = await Promise.all([renderText(probe), renderText(probe), renderText(probe)]);
    texts.push(await renderText(probe));

    // Assess
    for (const text of texts) expect(normalize(text)).toBe('probe extra globals: none');
  });

  it.each([
    ['another customer', 'other key'],
    ['the same customer', 'same key'],
  ])('cookies, storage, IndexedDB, Cache Storage, service workers and the HTTP cache never reach a later document of %s', async (_who, which) => {
    // Prepare: a document plants every kind of state on a site...
    const planter = which === 'same key' ? key : await createKey('pro');
    await generateAndDownload(planter.apiKey, { url: `${publicSite}/plant`, wait_for: 'networkidle0' });
    const cacheableBefore = (await requestsReceivedBy(publicSite)).filter((path) => path === '/cacheable').length;

    // Act: ...and a later document on the same site looks for it.
    const { bytes } = await generateAndDownload(key.apiKey, { url: `${publicSite}/inspect`, wait_for: 'networkidle0' });
    const text = (await readPdf(bytes)).text;

    // Assess
    expect(text).toContain('INSPECTED');
    expect(text).not.toContain('PLANTED');
    expect(text).toContain('cookie= ');
    expect(text).toContain('local=null');
    expect(text).toContain('controller=false');
    expect(text).toContain('Fixture page from the public site'); // fetched from the site, not a service worker
    const cacheableAfter = (await requestsReceivedBy(publicSite)).filter((path) => path === '/cacheable').length;
    expect(cacheableAfter).toBe(cacheableBefore + 1); // not served from the first document's cache
  });
});

describe('scripting follows the document', () => {
  it('a document with scripts runs them even after documents without, in the same workspace', async () => {
    // Act: documents of one key, alternating between needing scripts and not
    const texts = [];
    for (const html of ['<p>plain one</p>', '<p id="x">before</p><script>x.textContent = "SCRIPT-RAN"</script>', '<p>plain two</p>', '<p id="y">before</p><script>y.textContent = "RAN-AGAIN"</script>']) {
      texts.push(normalize(await renderText(html)));
    }

    // Assess
    expect(texts).toEqual(['plain one', 'SCRIPT-RAN', 'plain two', 'RAN-AGAIN']);
  });

  it('alert, confirm and prompt are declined at once, as by a user, and the document prints', async () => {
    // Prepare: each dialog would wait for an answer that never comes
    const html = `<p id="o">not run</p><script>
      alert('Hello');
      const confirmed = confirm('Proceed?');
      const answer = prompt('Your name?', 'default');
      o.textContent = 'after dialogs: ' + confirmed + ' ' + answer;
    </script>`;

    // Act: fails with the status (504 on a render timeout) if the document did not render
    const { bytes } = await generateAndDownload(key.apiKey, { html });

    // Assess: the answers a declining user gives
    expect(normalize((await readPdf(bytes)).text)).toBe('after dialogs: false null');
  });

  it('<noscript> content stays hidden, as in a browser with scripting on', async () => {
    // Act
    const text = normalize(await renderText('<p>visible</p><noscript>ENABLE-JAVASCRIPT-PLEASE</noscript>'));

    // Assess
    expect(text).toBe('visible');
  });
});

describe('resource limits', () => {
  it('a document over the page limit is refused clearly, and nothing is charged', async () => {
    // Prepare: the test stack allows 50 pages
    const capped = await createKey('pro', ['--monthly-quota', '1']);
    const html = Array.from({ length: 60 }, (_, i) => `<p style="break-before:page">Page ${i + 1}</p>`).join('');

    // Act
    const tooLong = await generate(capped.apiKey, { html });
    const next = await generate(capped.apiKey, { html: '<p>short</p>' });

    // Assess
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error).toMatchObject({ code: 'too_many_pages', max_pages: 50 });
    expect(tooLong.body.error.message).toContain('maximum of 50 pages');
    expect(next.status).toBe(200);
  });

  it('a PDF over the size limit is refused clearly while it is being printed, and nothing is charged', async () => {
    // Prepare: a few hundred bytes of script paint 2000 x 2000 random pixels, which no compression
    // can shrink: the PDF would be well over the test stack's 8 MB limit.
    const capped = await createKey('pro', ['--monthly-quota', '1']);
    const html = `<canvas id="c" width="2000" height="2000"></canvas><script>
      const g = c.getContext('2d'); const img = g.createImageData(2000, 2000);
      for (let i = 0; i < img.data.length; i++) img.data[i] = (i % 4 === 3) ? 255 : Math.random() * 256;
      g.putImageData(img, 0, 0);
    </script>`;

    // Act
    const tooBig = await generate(capped.apiKey, { html });
    const next = await generate(capped.apiKey, { html: '<p>small</p>' });

    // Assess
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.error).toMatchObject({ code: 'pdf_too_large', max_pdf_bytes: 8 * 1024 * 1024 });
    expect(tooBig.body.error.message).toContain(`maximum of ${8 * 1024 * 1024} bytes`);
    expect(next.status).toBe(200);
  });

  it('permission requests are never granted', async () => {
    // Act
    const text = await renderText(`<pre id="o">asking</pre><script>
      Promise.all([
        Notification.requestPermission(),
        new Promise((done) => navigator.geolocation.getCurrentPosition(() => done('geo-granted'), (e) => done('geo-denied-' + e.code))),
      ]).then(([notifications, geo]) => { o.textContent = 'notifications=' + notifications + ' ' + geo; });
    </script>`, { wait_for: 'networkidle0' });

    // Assess
    expect(text).toMatch(/notifications=(default|denied) geo-denied-1/);
  });

  it('a download over the per-document cap is cut off and the document renders without it', async () => {
    // Act: the fixture serves 10 MB; the test stack allows 2 MB per document
    const text = await renderText(`<p>With a huge frame</p><iframe src="${publicSite}/big"></iframe>`, { wait_for: 'networkidle0' });
    const uncapped = await renderText(`<p>With a small frame</p><iframe src="${publicSite}/page"></iframe>`);

    // Assess: the frame's end never arrived; a frame within the cap arrives whole
    expect(text).toContain('With a huge frame');
    expect(text).not.toContain('END-OF-BIG-PAGE');
    expect(uncapped).toContain('Fixture page from the public site');
  });

  it('a decompression bomb image does not take the service down', async () => {
    // Prepare: a 1-bit 30000 x 30000 PNG (112 MB of pixels, a few hundred KB compressed)
    const { deflateSync, crc32 } = await import('node:zlib');
    const chunk = (type: string, data: Buffer) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])) >>> 0);
      return Buffer.concat([length, Buffer.from(type), data, crc]);
    };
    const side = 30_000;
    const header = Buffer.alloc(13);
    header.writeUInt32BE(side, 0);
    header.writeUInt32BE(side, 4);
    header[8] = 1; // bit depth
    header[9] = 0; // grey
    const row = Buffer.alloc(1 + side / 8);
    const pixels = deflateSync(Buffer.concat(Array.from({ length: side }, () => row)), { level: 9 });
    const png = Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);

    // Act
    const bomb = await generate(key.apiKey, { html: `<p>bomb</p><img src="data:image/png;base64,${png.toString('base64')}">` });
    const next = await generate(key.apiKey, { html: '<p>still alive</p>' });

    // Assess: the bomb either renders or fails cleanly; the service keeps working
    expect([200, 400, 500, 504]).toContain(bomb.status);
    expect(next.status).toBe(200);
  });
});
