/**
 * Webhook deliveries go through the egress rules at every try: a name that resolves to a private
 * address by the time of the delivery (DNS rebinding) is refused before any connection is made,
 * and a delivery connects to the very address that was checked.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkWebhookUrl, sendWebhook } from '#lib/webhooks/send.ts';

describe('sending a webhook', () => {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.method} ${request.headers.host} ${request.url}`);
      response.writeHead(request.url === '/fail' ? 500 : 204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  test('a name that now resolves to a private address is refused, and nothing is sent', async () => {
    const outcome = await sendWebhook(`https://hooks.example.com:${port}/in`, {}, '{}', {
      allowPrivateHosts: new Set(),
      resolve: async () => ['127.0.0.1'],
      timeoutMs: 2_000,
    });
    expect(outcome).toEqual({ delivered: false, reason: expect.stringContaining('publicly reachable') });
    expect(seen).toEqual([]);
  });

  test('an allow-listed host gets the POST at the address that was checked, with the URL’s own Host', async () => {
    const outcome = await sendWebhook(`http://receiver.test:${port}/in`, { 'webhook-id': 'msg_1' }, '{"a":1}', {
      allowPrivateHosts: new Set([`receiver.test:${port}`]),
      resolve: async () => ['127.0.0.1'],
      timeoutMs: 2_000,
    });
    expect(outcome).toEqual({ delivered: true, status: 204 });
    expect(seen.at(-1)).toBe(`POST receiver.test:${port} /in`);
    const failed = await sendWebhook(`http://receiver.test:${port}/fail`, {}, '{}', {
      allowPrivateHosts: new Set([`receiver.test:${port}`]),
      resolve: async () => ['127.0.0.1'],
      timeoutMs: 2_000,
    });
    expect(failed).toEqual({ delivered: false, status: 500, reason: 'the receiver answered 500' });
  });

  test('only https, or http to an allow-listed host; names that do not resolve say so', async () => {
    const policy = { allowPrivateHosts: new Set<string>(), resolve: async () => ['93.184.216.34'] };
    expect(await checkWebhookUrl('http://example.com/hook', policy)).toEqual({ problem: 'webhook_url must be an https URL.' });
    expect(await checkWebhookUrl('not a url', policy)).toEqual({ problem: 'webhook_url is not a valid absolute URL' });
    expect(await checkWebhookUrl('https://example.com/hook', policy)).toMatchObject({ address: '93.184.216.34' });
    const unresolvable = { allowPrivateHosts: new Set<string>(), resolve: async () => Promise.reject(new Error('ENOTFOUND')) };
    expect(await checkWebhookUrl('https://nowhere.invalid/hook', unresolvable)).toEqual({ problem: expect.stringContaining('does not resolve') });
  });

  test('locally, a refused receiver on this machine is told the setting that allows it, with its own host:port; never on Lambda', async () => {
    const loopback = { allowPrivateHosts: new Set<string>(), resolve: async () => ['127.0.0.1'] };
    const local = { nameTheAllowance: true };
    // Plain http to loopback: the first refusal a developer meets.
    const http = await checkWebhookUrl('http://127.0.0.1:8765/hooks/pdf', loopback, local);
    expect(http).toEqual({ problem: expect.stringMatching(/^webhook_url must be an https URL\. .*PDF_ALLOW_PRIVATE_HOSTS=127\.0\.0\.1:8765 /) });
    // https to a name that resolves to loopback: the second.
    const https = await checkWebhookUrl('https://localhost:9443/in', loopback, local);
    expect(https).toEqual({ problem: expect.stringMatching(/^webhook_url must point to a publicly reachable host.*PDF_ALLOW_PRIVATE_HOSTS=localhost:9443 /) });
    // Once listed, the same receiver is allowed, plain http included.
    expect(await checkWebhookUrl('http://127.0.0.1:8765/hooks/pdf', { ...loopback, allowPrivateHosts: new Set(['127.0.0.1:8765']) }, local)).toMatchObject({ address: '127.0.0.1' });
    // A deployment's customers are not told about the operator's settings.
    expect((await checkWebhookUrl('http://127.0.0.1:8765/hooks/pdf', loopback)) as { problem: string }).toEqual({ problem: 'webhook_url must be an https URL.' });
  });

  test('a receiver that answers a byte at a time gets timeoutMs for the whole answer, not for each pause', async () => {
    const sockets: Socket[] = [];
    const trickler = createTcpServer((socket) => {
      sockets.push(socket);
      socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
      const drip = setInterval(() => socket.write('a'), 50);
      socket.on('close', () => clearInterval(drip));
      socket.on('error', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => trickler.listen(0, '127.0.0.1', resolve));
    const slowPort = (trickler.address() as AddressInfo).port;
    try {
      const outcome = await sendWebhook(`http://slow.test:${slowPort}/in`, {}, '{}', {
        allowPrivateHosts: new Set([`slow.test:${slowPort}`]),
        resolve: async () => ['127.0.0.1'],
        timeoutMs: 500,
      });
      expect(outcome).toEqual({ delivered: false, reason: expect.stringContaining('no answer within 500 ms') });
    } finally {
      for (const socket of sockets) socket.destroy();
      trickler.close();
    }
  });

  test('a receiver that answers 2xx at once is delivered at once, however slowly its body follows; the body is not read past its cap or the deadline', async () => {
    // Prepare: one path trickles a 200's body for 3 s, another a 503's, a third streams far more than the cap.
    const closed: Record<string, number> = {};
    const slowBody = createServer((request, response) => {
      request.resume();
      const started = Date.now();
      request.on('end', () => {
        response.writeHead(request.url === '/down' ? 503 : 200, { 'Content-Type': 'text/plain' });
        response.flushHeaders();
        const chunk = request.url === '/flood' ? 'x'.repeat(16 * 1024) : '.';
        const drip = setInterval(() => response.write(chunk), request.url === '/flood' ? 1 : 100);
        setTimeout(() => response.end(), 3_000).unref();
        response.on('close', () => {
          clearInterval(drip);
          closed[request.url!] = Date.now() - started;
        });
      });
    });
    await new Promise<void>((resolve) => slowBody.listen(0, '127.0.0.1', resolve));
    const slowPort = (slowBody.address() as AddressInfo).port;
    const send = (path: string) =>
      sendWebhook(`http://slow.test:${slowPort}${path}`, {}, '{}', { allowPrivateHosts: new Set([`slow.test:${slowPort}`]), resolve: async () => ['127.0.0.1'], timeoutMs: 1_500 });
    try {
      // Act
      const started = Date.now();
      const [ok, down, flood] = await Promise.all([send('/ok'), send('/down'), send('/flood')]);

      // Assess: judged by the status as it arrived, long before the body ended (3 s) or the deadline (1.5 s).
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(ok).toEqual({ delivered: true, status: 200 });
      expect(down).toEqual({ delivered: false, status: 503, reason: 'the receiver answered 503' });
      expect(flood).toEqual({ delivered: true, status: 200 });
      // The trickling bodies are dropped at the deadline, the flood at the cap.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(closed['/ok']).toBeGreaterThanOrEqual(1_400);
      expect(closed['/ok']).toBeLessThan(2_500);
      expect(closed['/flood']).toBeLessThan(1_000);
    } finally {
      slowBody.closeAllConnections();
      slowBody.close();
    }
  });
});
