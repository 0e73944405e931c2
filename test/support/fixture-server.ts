/**
 * Loopback HTTP servers standing in for the web: a "public" site the tests allow-list, and an
 * "internal" one that plays a private service holding a canary secret and must stay unreachable.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CANARY = 'CANARY-7f3e-INTERNAL-SECRET';

const pages: Record<string, (url: URL) => { status?: number; type?: string; body: string; delayMs?: number; location?: string } | 'hang'> = {
  '/page': () => ({ body: '<!doctype html><title>Fixture</title><h1>Fixture page from the public site</h1>' }),
  // Content that appears only after a delayed fetch: captured with networkidle0, missed with domcontentloaded.
  '/late-content': () => ({
    body: `<!doctype html><div id="out">Loading</div><script>
      setTimeout(() => fetch('/data').then(r => r.text()).then(t => { document.getElementById('out').textContent = t; }), 300);
    </script>`,
  }),
  '/data': () => ({ type: 'text/plain', body: 'Data arrived after a delayed fetch', delayMs: 400 }),
  '/slow-image': () => ({ type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', delayMs: 1500 }),
  '/not-found': () => ({ status: 404, body: '<h1>Nothing here</h1>' }),
  '/hang': () => 'hang',
  '/canary': () => ({ body: `<!doctype html><p>${CANARY}</p>` }),
  // An open redirect, as many real sites have: sends the browser wherever ?to= says.
  '/redirect': (url) => ({ status: 302, location: url.searchParams.get('to') ?? '/', body: '' }),
};

/** Path of the request log: every request the site received, as path plus query, oldest first. */
export const REQUEST_LOG_PATH = '/__requests';

export interface FixtureServer {
  readonly origin: string;
  readonly hostPort: string;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const received: string[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fixture');
    // Lets tests check from their own process that a site was (or was never) contacted.
    if (url.pathname === REQUEST_LOG_PATH) {
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(received));
      return;
    }
    received.push(url.pathname + url.search);
    const page = pages[url.pathname]?.(url);
    if (!page) {
      response.writeHead(404).end();
      return;
    }
    if (page === 'hang') {
      hanging.add(response);
      return;
    }
    const send = () =>
      response
        .writeHead(page.status ?? 200, {
          'Content-Type': page.type ?? 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          ...(page.location !== undefined && { Location: page.location }),
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
