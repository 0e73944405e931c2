/**
 * The egress guard: the HTTP proxy through which Chromium must send every request a document makes
 * (page, subresources, redirects, fetch/XHR, beacons, workers, WebSocket handshakes), the one place
 * where the egress policy is enforced.
 *
 * It decides on resolved addresses and then connects to the very address it checked, so a name that
 * resolves to a public address when checked and to an internal one a moment later (DNS rebinding)
 * cannot get through. HTTPS and WebSockets arrive as CONNECT tunnels; TLS stays end to end between
 * Chromium and the site, which is what makes connecting to the checked IP safe.
 *
 * Each document gets its own guard (one listener on loopback, a few hundred microseconds), so the
 * guard knows what that document was refused, can cap what it downloads, and cuts every connection
 * the document still holds when it is done.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { portOf, resolveDestination, type EgressPolicy } from './destinations.ts';

/** Marks the guard's own refusals, so a refused top-level navigation can be told from a site's 403. */
export const REFUSAL_HEADER = 'x-pdf-api-egress';

/** Headers that concern the hop to the proxy, not the site. */
const HOP_BY_HOP = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

const UPSTREAM_CONNECT_TIMEOUT_MS = 10_000;

export interface EgressGuard {
  /** For Chromium: `http://127.0.0.1:<port>`. */
  readonly proxyServer: string;
  /** `host:port` of every destination refused so far. */
  readonly refused: readonly string[];
  /** Bytes received from sites so far. */
  readonly bytesReceived: number;
  /** Requests and tunnels asked of the guard since it was armed, allowed or not. */
  readonly requestCount: number;
  /** True once the document went over its download cap and was cut off. */
  readonly overLimit: boolean;
  /**
   * Starts a document: sets its policy (until then every destination is refused, so a prepared
   * guard fails closed), cuts any connection left from before and zeroes the counters.
   */
  arm(options: GuardOptions): void;
  close(): Promise<void>;
}

export interface GuardOptions extends EgressPolicy {
  /** Most bytes one document may download; past it every connection is cut. */
  readonly maxBytes: number;
}

function splitHostPort(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  return { host: match[1] as string, port: Number(match[2]) };
}

export async function startEgressGuard(initial?: GuardOptions): Promise<EgressGuard> {
  let options: GuardOptions | undefined = initial;
  const sockets = new Set<Socket>();
  const refused: string[] = [];
  let bytesReceived = 0;
  let requestCount = 0;
  let overLimit = false;
  let closed = false;
  // Upstream connections of this guard's document only. Node's global agent keeps connections
  // alive and hands them to whoever asks next: a connection would pass from one document (and
  // customer) to another, and cutting the first document's connections would break the other's
  // request mid-flight (measured: slow images printed broken).
  const newAgent = () => new Agent({ keepAlive: true });
  let agent = newAgent();

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const cutEverything = () => {
    for (const socket of sockets) socket.destroy();
  };
  const count = (chunk: Buffer) => {
    bytesReceived += chunk.length;
    if (bytesReceived > (options?.maxBytes ?? 0) && !overLimit) {
      overLimit = true;
      cutEverything();
    }
  };
  const check = async (host: string, port: number) => {
    const destination = options && !closed && !overLimit ? await resolveDestination(host, port, options) : undefined;
    if (!destination?.allowed) {
      refused.push(`${host}:${port}`);
      return undefined;
    }
    return destination.address;
  };

  const server: Server = createServer();
  server.on('connection', track);

  // Plain HTTP: the request line carries the absolute URL.
  server.on('request', async (request: IncomingMessage, response) => {
    requestCount++;
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400, { [REFUSAL_HEADER]: 'refused' }).end();
      return;
    }
    const port = portOf(target);
    const address = target.protocol === 'http:' ? await check(target.hostname, port) : undefined;
    if (!address) {
      response.writeHead(403, { [REFUSAL_HEADER]: 'refused', 'Content-Type': 'text/plain', 'Content-Length': '0' }).end();
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    const upstream = httpRequest({
      host: address,
      port,
      method: request.method,
      path: target.pathname + target.search,
      headers,
      setHost: false,
      timeout: UPSTREAM_CONNECT_TIMEOUT_MS,
      agent,
    });
    upstream.on('socket', track);
    upstream.on('timeout', () => upstream.destroy());
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'Content-Length': '0' }).end();
      else response.destroy();
    });
    upstream.on('response', (reply) => {
      const replyHeaders: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(reply.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) replyHeaders[name] = value;
      }
      response.writeHead(reply.statusCode ?? 502, replyHeaders);
      reply.on('data', count);
      reply.pipe(response);
    });
    request.pipe(upstream);
  });

  // HTTPS and WebSockets: a tunnel to host:port, opened only to the checked address.
  server.on('connect', async (request: IncomingMessage, client: Socket, head: Buffer) => {
    requestCount++;
    track(client);
    client.on('error', () => client.destroy());
    const authority = splitHostPort(request.url ?? '');
    const address = authority ? await check(authority.host, authority.port) : undefined;
    if (!authority || !address) {
      client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSAL_HEADER}: refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const upstream = connect({ host: address, port: authority.port, timeout: UPSTREAM_CONNECT_TIMEOUT_MS });
    track(upstream);
    upstream.once('timeout', () => upstream.destroy());
    upstream.once('error', () => {
      if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    });
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.on('data', count);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  });

  // Chromium never sends Upgrade to a proxy (WebSockets use CONNECT); refuse anything that does.
  server.on('upgrade', (_request: IncomingMessage, socket: Socket) => {
    requestCount++;
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A guard serves a browser; it is no reason on its own to keep the process alive.
  server.unref();
  const { port } = server.address() as AddressInfo;

  return {
    proxyServer: `http://127.0.0.1:${port}`,
    get refused() {
      return refused;
    },
    get bytesReceived() {
      return bytesReceived;
    },
    get overLimit() {
      return overLimit;
    },
    get requestCount() {
      return requestCount;
    },
    arm(policy: GuardOptions) {
      cutEverything();
      agent.destroy();
      agent = newAgent();
      options = policy;
      refused.length = 0;
      bytesReceived = 0;
      requestCount = 0;
      overLimit = false;
    },
    async close() {
      closed = true;
      cutEverything();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
