/**
 * Loopback HTTP servers standing in for the web: "public" sites the tests allow-list (two, so that a
 * document can reach another origin than its own), and an "internal" one that plays a private
 * service holding a canary secret and must stay unreachable.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/** The font file /brand-font.ttf serves. */
export const BRAND_FONT = 'node_modules/@expo-google-fonts/noto-sans-hebrew/400Regular/NotoSansHebrew_400Regular.ttf';

export const CANARY = 'CANARY-7f3e-INTERNAL-SECRET';

type Page = {
  status?: number;
  type?: string;
  body: string | Uint8Array;
  delayMs?: number;
  location?: string;
  headers?: Record<string, string>;
};

/**
 * A document that leaves every kind of state a browser keeps behind: a cookie, web storage,
 * IndexedDB, Cache Storage, a service worker that would answer later requests, and a timer.
 */
const PLANT_STATE = `<!doctype html><p>planting</p><script>
  localStorage.setItem('planted', 'PLANTED-LOCAL-STORAGE');
  sessionStorage.setItem('planted', 'PLANTED-SESSION-STORAGE');
  const open = indexedDB.open('planted', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  open.onsuccess = () => open.result.transaction('s', 'readwrite').objectStore('s').put('PLANTED-INDEXEDDB', 'k');
  caches.open('planted').then((cache) => cache.put('/page', new Response('PLANTED-CACHE-STORAGE')));
  navigator.serviceWorker.register('/sw.js');
  setInterval(() => document.body.insertAdjacentText('beforeend', ' PLANTED-TIMER '), 5);
  fetch('/cacheable');
</script>`;

/**
 * A document that prints whatever state it can find, so that a PDF shows any leak. One finding per
 * line: they arrive in any order, and a <pre> line wider than the page is cut off in the PDF.
 */
const INSPECT_STATE = `<!doctype html><pre id="out">inspecting</pre><script>
  const out = [];
  out.push('cookie=' + document.cookie);
  out.push('local=' + localStorage.getItem('planted'));
  out.push('session=' + sessionStorage.getItem('planted'));
  out.push('controller=' + Boolean(navigator.serviceWorker.controller));
  Promise.all([
    caches.keys().then((keys) => out.push('caches=' + keys.join(','))),
    new Promise((done) => {
      const open = indexedDB.open('planted', 1);
      open.onupgradeneeded = () => open.result.createObjectStore('s');
      open.onsuccess = () => {
        const get = open.result.transaction('s').objectStore('s').get('k');
        get.onsuccess = () => done(out.push('idb=' + get.result));
      };
      open.onerror = () => done(out.push('idb=error'));
    }),
    fetch('/page').then((r) => r.text()).then((t) => out.push('fetched=' + t.replace(/<[^>]+>/g, ' '))),
    fetch('/cacheable').then((r) => r.text()).then((t) => out.push('cacheable=' + t)),
  ]).then(() => { document.getElementById('out').textContent = 'INSPECTED\\n' + out.join('\\n'); });
</script>`;

let cacheableServed = 0;

/**
 * A script for a worker of any kind (service, dedicated or shared) that fetches
 * /pixel.svg?probe=<its own probe>-fetch as soon as it runs, and tells when that is done: a
 * service worker by finishing its install, a dedicated one by a message, a shared one by a message
 * on each connection.
 */
const WORKER_FETCH = `const probe = new URL(self.location.href).searchParams.get('probe');
const fetched = fetch('/pixel.svg?probe=' + probe + '-fetch').then(() => 'fetched', () => 'failed');
self.addEventListener('install', (event) => event.waitUntil(fetched));
self.addEventListener('connect', (event) => fetched.then((said) => event.ports[0].postMessage(said)));
if (typeof DedicatedWorkerGlobalScope !== 'undefined') fetched.then((said) => self.postMessage(said));`;

/**
 * A page that starts a service worker, a dedicated worker and a shared worker, each running
 * /worker-fetch.js?probe=<the page's probe>-<kind>, and once all three have fetched sets
 * window.workersDone and shows what each said.
 */
const WORKERS_PAGE = `<!doctype html><pre id="out">Waiting for the workers</pre><script>
  const probe = new URL(location.href).searchParams.get('probe');
  const script = (kind) => '/worker-fetch.js?probe=' + encodeURIComponent(probe + '-' + kind);
  const said = (target) => new Promise((done) => { target.onmessage = (event) => done(event.data); });
  const shared = new SharedWorker(script('shared'));
  shared.port.start();
  Promise.all([
    navigator.serviceWorker.register(script('service')).then(() => navigator.serviceWorker.ready).then(() => 'fetched', () => 'failed'),
    said(new Worker(script('dedicated'))),
    said(shared.port),
  ]).then(([service, dedicated, sharedSaid]) => {
    document.getElementById('out').textContent = 'service ' + service + ', dedicated ' + dedicated + ', shared ' + sharedSaid;
    window.workersDone = true;
  });
</script>`;

/** The account /basic-auth lets in (RFC 7617 Basic): anything else is 401 with a challenge. */
export const BASIC_AUTH_USER = 'reporter';
export const BASIC_AUTH_PASSWORD = 'pa55:word-Ω';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The request headers /echo shows: the ones a caller adds, and what says who is asking. */
const ECHOED = (name: string) => name.startsWith('x-') || ['authorization', 'cookie', 'user-agent'].includes(name);

/**
 * A page that shows what it was sent: the request headers (ECHOED, one per line) the server received
 * and the cookies its own script can read. Each `img` query parameter becomes an image of the page,
 * so a test can have the page load subresources from anywhere. With `cors`, any origin may read it
 * (`Access-Control-Allow-Origin: *`), as public APIs and CDNs allow.
 */
function echoPage(url: URL, request: IncomingMessage): Page {
  const lines = Object.entries(request.headers)
    .filter(([name]) => ECHOED(name))
    .map(([name, value]) => `<p>${escapeHtml(`${name}: ${String(value)}`)}</p>`)
    .join('');
  const images = url.searchParams.getAll('img').map((src) => `<img src="${escapeHtml(src)}" width="10" height="10">`).join('');
  return {
    body:
      `<!doctype html><style>p { word-break: break-all; margin: 2px 0 }</style><h1>Echo</h1>${lines}${images}` +
      `<p id="js">script sees</p><script>document.getElementById('js').textContent = 'document.cookie: ' + (document.cookie || '(none)');</script>`,
    ...(url.searchParams.has('cors') && { headers: { 'Access-Control-Allow-Origin': '*' } }),
  };
}

const pages: Record<string, (url: URL, request: IncomingMessage) => Page | 'hang' | 'endless'> = {
  '/plant': () => ({ body: PLANT_STATE, headers: { 'Set-Cookie': 'planted=PLANTED-COOKIE; Path=/; Max-Age=3600' } }),
  '/inspect': () => ({ body: INSPECT_STATE }),
  '/sw.js': () => ({
    type: 'text/javascript',
    body: "self.addEventListener('install', () => self.skipWaiting()); self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim())); self.addEventListener('fetch', (e) => e.respondWith(new Response('PLANTED-SERVICE-WORKER', { headers: { 'Content-Type': 'text/html' } })));",
  }),
  // Ten megabytes, five times the tests' per-document download cap, with its only visible text at the end.
  '/big': () => ({ body: `<!doctype html><!--${'x'.repeat(10 * 1024 * 1024)}--><p>END-OF-BIG-PAGE</p>` }),
  // Cacheable for an hour: a second document must not get the first one's copy.
  '/cacheable': () => ({ type: 'text/plain', body: `served-${++cacheableServed}`, headers: { 'Cache-Control': 'public, max-age=3600' } }),
  '/page': () => ({ body: '<!doctype html><title>Fixture</title><h1>Fixture page from the public site</h1>' }),
  // Content that appears only after a delayed fetch: captured with networkidle0, missed with domcontentloaded.
  '/late-content': () => ({
    body: `<!doctype html><div id="out">Loading</div><script>
      setTimeout(() => fetch('/data').then(r => r.text()).then(t => { document.getElementById('out').textContent = t; }), 300);
    </script>`,
  }),
  '/data': () => ({ type: 'text/plain', body: 'Data arrived after a delayed fetch', delayMs: 400 }),
  // A red square (lazy-image tests) and a web font (Noto Sans Hebrew, which also draws Latin), both slow
  // enough that a print which does not wait for them misses them.
  '/red-square.svg': () => ({
    type: 'image/svg+xml',
    body: '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100" fill="#ff0000"/></svg>',
    delayMs: 600,
  }),
  // Fonts are fetched in CORS mode, so a font host must allow other origins (public font CDNs do).
  '/brand-font.ttf': () => ({
    type: 'font/ttf',
    body: readFileSync(BRAND_FONT),
    delayMs: 300,
    headers: { 'Access-Control-Allow-Origin': '*' },
  }),
  '/not-found': () => ({ status: 404, body: '<h1>Nothing here</h1>' }),
  '/hang': () => 'hang',
  // Never ends: a style sheet that grows by a space every 100 ms for as long as the client stays.
  '/endless': () => 'endless',
  // An SVG sprite, as icon sets ship them, referenced as sprite.svg#icon.
  '/sprite.svg': () => ({
    type: 'image/svg+xml',
    body: '<svg xmlns="http://www.w3.org/2000/svg"><symbol id="icon" viewBox="0 0 10 10"><rect width="10" height="10" fill="#ff0000"/></symbol></svg>',
  }),
  '/canary': () => ({ body: `<!doctype html><p>${CANARY}</p>` }),
  // An open redirect, as many real sites have: sends the browser wherever ?to= says.
  '/redirect': (url) => ({ status: 302, location: url.searchParams.get('to') ?? '/', body: '' }),
  // A redirect loop: sends the browser back to itself, query and all.
  '/loop': (url) => ({ status: 302, location: url.pathname + url.search, body: '' }),
  '/worker-fetch.js': () => ({ type: 'text/javascript', body: WORKER_FETCH }),
  '/workers': () => ({ body: WORKERS_PAGE }),
  // Serves the HTML given in ?html=: a document at an http://127.0.0.1 origin is a secure context (as a
  // customer's https site is), where APIs such as WebTransport exist that a setContent document lacks.
  '/document': (url) => ({ body: url.searchParams.get('html') ?? '' }),
  '/echo': echoPage,
  '/pixel.svg': () => ({ type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>' }),
  // A style sheet whose background image is ?bg= (a style sheet asks for its images itself, naming itself as the referrer).
  '/style.css': (url) => ({ type: 'text/css', body: `body { background-image: url(${JSON.stringify(url.searchParams.get('bg') ?? '')}) }` }),
  // Signed-in content behind HTTP Basic authentication.
  '/basic-auth': (_url, request) => {
    const expected = `Basic ${Buffer.from(`${BASIC_AUTH_USER}:${BASIC_AUTH_PASSWORD}`, 'utf8').toString('base64')}`;
    if (request.headers.authorization === expected) return { body: `<!doctype html><h1>Signed in as ${BASIC_AUTH_USER}</h1>` };
    return { status: 401, body: '<!doctype html><h1>Sign-in required</h1>', headers: { 'WWW-Authenticate': 'Basic realm="fixture", charset="UTF-8"' } };
  },
};

/** Path of the request log: every request the site received, as path plus query, oldest first. */
export const REQUEST_LOG_PATH = '/__requests';
/** Path of the header log: every request the site received with its headers, oldest first. */
export const HEADER_LOG_PATH = '/__headers';
/**
 * `GATHERING_IMAGE_PATH?group=G&of=N` is an image held until N requests of group G wait for it at
 * once, then sent to them all: a document that shows it was being rendered while N-1 others were.
 * It is sent anyway after GATHERING_GIVE_UP_MS, so that a document never waits for it forever;
 * `GATHERINGS_PATH?group=G` then tells whether the group gathered. A test of parallel work waits
 * for the event it is about instead of timing it against a bound a slower host would miss.
 */
export const GATHERING_IMAGE_PATH = '/gathering-image';
export const GATHERINGS_PATH = '/__gatherings';
const GATHERING_GIVE_UP_MS = 30_000;
const GATHERING_IMAGE = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>';

/** What a gathering group saw: how many requests it had at most at once, and whether all it waited for came together. */
export interface Gathering {
  readonly mostAtOnce: number;
  readonly gathered: boolean;
}

export interface ReceivedRequest {
  /** Path plus query. */
  readonly path: string;
  /** As Node reads them: names in lower case. */
  readonly headers: IncomingHttpHeaders;
}

export interface FixtureServer {
  readonly origin: string;
  readonly hostPort: string;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const received: string[] = [];
  const receivedWithHeaders: ReceivedRequest[] = [];
  const gatherings = new Map<string, { waiting: import('node:http').ServerResponse[]; mostAtOnce: number; gathered: boolean }>();
  const sendGatheringImage = (response: import('node:http').ServerResponse) => {
    hanging.delete(response);
    if (!response.headersSent && !response.destroyed) response.writeHead(200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'no-store' }).end(GATHERING_IMAGE);
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fixture');
    // Lets tests check from their own process that a site was (or was never) contacted.
    if (url.pathname === REQUEST_LOG_PATH) {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(received));
      return;
    }
    if (url.pathname === HEADER_LOG_PATH) {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(receivedWithHeaders));
      return;
    }
    if (url.pathname === GATHERINGS_PATH) {
      const { mostAtOnce = 0, gathered = false } = gatherings.get(url.searchParams.get('group') ?? '') ?? {};
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ mostAtOnce, gathered } satisfies Gathering));
      return;
    }
    received.push(url.pathname + url.search);
    receivedWithHeaders.push({ path: url.pathname + url.search, headers: request.headers });
    if (url.pathname === GATHERING_IMAGE_PATH) {
      const name = url.searchParams.get('group') ?? '';
      const group = gatherings.get(name) ?? { waiting: [], mostAtOnce: 0, gathered: false };
      gatherings.set(name, group);
      group.waiting.push(response);
      hanging.add(response);
      response.once('close', () => (group.waiting = group.waiting.filter((waiting) => waiting !== response)));
      group.mostAtOnce = Math.max(group.mostAtOnce, group.waiting.length);
      if (group.waiting.length >= Number(url.searchParams.get('of') ?? 1)) {
        group.gathered = true;
        for (const waiting of group.waiting.splice(0)) sendGatheringImage(waiting);
      } else {
        setTimeout(() => sendGatheringImage(response), GATHERING_GIVE_UP_MS).unref();
      }
      return;
    }
    const page = pages[url.pathname]?.(url, request);
    if (!page) {
      response.writeHead(404).end();
      return;
    }
    if (page === 'hang') {
      hanging.add(response);
      return;
    }
    if (page === 'endless') {
      hanging.add(response);
      response.writeHead(200, { 'Content-Type': 'text/css', 'Cache-Control': 'no-store' });
      const drip = setInterval(() => response.write(' '), 100);
      response.once('close', () => clearInterval(drip));
      return;
    }
    const send = () =>
      response
        .writeHead(page.status ?? 200, {
          'Content-Type': page.type ?? 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          ...(page.location !== undefined && { Location: page.location }),
          ...page.headers,
        })
        .end(page.body);
    if (page.delayMs) setTimeout(send, page.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
