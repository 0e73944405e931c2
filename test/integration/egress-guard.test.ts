/**
 * The egress guard as an HTTP proxy, on its own: each document's guard talks to sites over its own
 * connections, so one document ending (its guard closed or re-armed, which cuts its connections)
 * never touches another document's requests, and no connection carries two customers' requests.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressGuard, type EgressGuard } from '#lib/egress/guard.ts';

/** GET `url` through the proxy at `proxyServer`: status and body, or the error that ended it. */
function getThroughProxy(proxyServer: string, url: string): Promise<{ status: number; body: string } | { error: string }> {
  const proxy = new URL(proxyServer);
  return new Promise((resolve) => {
    const outgoing = request({ host: proxy.hostname, port: Number(proxy.port), path: url, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', (error) => resolve({ error: error.message }));
    });
    outgoing.on('error', (error) => resolve({ error: error.message }));
    outgoing.end();
  });
}

describe('egress guard connections', () => {
  let site: Server;
  let siteUrl: string;
  /** The client port of every connection the site accepted, by path. */
  const connectionsByPath = new Map<string, number[]>();
  const guards: EgressGuard[] = [];

  beforeAll(async () => {
    // A keep-alive site whose /slow answers after 300 ms.
    site = createServer((incoming, response) => {
      const path = incoming.url ?? '/';
      connectionsByPath.set(path, [...(connectionsByPath.get(path) ?? []), incoming.socket.remotePort ?? 0]);
      const answer = () => response.writeHead(200, { 'Content-Type': 'text/plain' }).end(`answer for ${path}`);
      if (path.startsWith('/slow')) setTimeout(answer, 300);
      else answer();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await Promise.all(guards.map((guard) => guard.close()));
    site.closeAllConnections();
    await new Promise<void>((resolve) => site.close(() => resolve()));
  });

  async function armedGuard(): Promise<EgressGuard> {
    const guard = await startEgressGuard();
    guards.push(guard);
    guard.arm({ allowPrivateHosts: new Set([new URL(siteUrl).host]), maxBytes: 1_000_000 });
    return guard;
  }

  it("one document ending does not cut another document's request in flight", async () => {
    // Prepare: document A fetched from the site (its connection to the site is now idle)
    const first = await armedGuard();
    const second = await armedGuard();
    expect(await getThroughProxy(first.proxyServer, `${siteUrl}/fast`)).toEqual({ status: 200, body: 'answer for /fast' });

    // Act: document B asks the same site for something slow, and document A ends meanwhile
    const slow = getThroughProxy(second.proxyServer, `${siteUrl}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await first.close();

    // Assess
    expect(await slow).toEqual({ status: 200, body: 'answer for /slow' });
    expect(connectionsByPath.get('/slow')).not.toContain(connectionsByPath.get('/fast')?.[0]);
  });

  it("re-arming a guard for its next document does not cut another guard's request in flight", async () => {
    // Prepare
    const first = await armedGuard();
    const second = await armedGuard();
    expect(await getThroughProxy(first.proxyServer, `${siteUrl}/fast?again`)).toMatchObject({ status: 200 });

    // Act
    const slow = getThroughProxy(second.proxyServer, `${siteUrl}/slow?again`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    first.arm({ allowPrivateHosts: new Set(), maxBytes: 1_000_000 });

    // Assess
    expect(await slow).toEqual({ status: 200, body: 'answer for /slow?again' });
  });
});
