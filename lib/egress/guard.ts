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
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { portOf, resolveDestination, type EgressPolicy } from './destinations.ts';

/** Marks the guard's own refusals, so a refused top-level navigation can be told from a site's 403. */
export const REFUSAL_HEADER = 'x-pdf-api-egress';
/** The value of REFUSAL_HEADER on the guard's own 502: the site could not be reached. */
export const UNREACHABLE = 'unreachable';

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

function withoutHopByHop(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

/**
 * What one document's traffic has done so far, and the one rule of admission: a destination is
 * let through only while the guard is armed, open and under the download cap, and only to the
 * address that was checked (lib/egress/destinations.ts).
 */
class DocumentTraffic {
  options: GuardOptions | undefined;
  readonly refused: string[] = [];
  readonly #sockets = new Set<Socket>();
  bytesReceived = 0;
  requestCount = 0;
  overLimit = false;
  closed = false;
  // Upstream connections of this guard's document only. Node's global agent keeps connections
  // alive and hands them to whoever asks next: a connection would pass from one document (and
  // customer) to another, and cutting the first document's connections would break the other's
  // request mid-flight (measured: slow images printed broken).
  agent = new Agent({ keepAlive: true });

  constructor(options: GuardOptions | undefined) {
    this.options = options;
  }

  /** Every socket of this document, client and upstream side, so that all can be cut at once. */
  track(socket: Socket): void {
    // A kept-alive socket carries many requests: listen for its end once.
    if (this.#sockets.has(socket)) return;
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  cutEverything(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Counts bytes from sites; past the cap, the document is cut off. */
  readonly count = (chunk: Buffer): void => {
    this.bytesReceived += chunk.length;
    if (this.bytesReceived > (this.options?.maxBytes ?? 0) && !this.overLimit) {
      this.overLimit = true;
      this.cutEverything();
    }
  };

  /** The checked address to connect to, or undefined when the destination is refused. */
  async admit(host: string, port: number): Promise<string | undefined> {
    const open = this.options && !this.closed && !this.overLimit;
    const destination = open ? await resolveDestination(host, port, this.options!) : undefined;
    if (!destination?.allowed) {
      this.refused.push(`${host}:${port}`);
      return undefined;
    }
    return destination.address;
  }

  /** A new document: its policy, fresh connections and zeroed counters. */
  rearm(options: GuardOptions): void {
    this.cutEverything();
    this.agent.destroy();
    this.agent = new Agent({ keepAlive: true });
    this.options = options;
    this.refused.length = 0;
    this.bytesReceived = 0;
    this.requestCount = 0;
    this.overLimit = false;
  }
}

/** Plain HTTP: the request line carries the absolute URL; the request is replayed to the checked address. */
async function forwardHttp(traffic: DocumentTraffic, request: IncomingMessage, response: ServerResponse): Promise<void> {
  traffic.requestCount++;
  let target: URL;
  try {
    target = new URL(request.url ?? '');
  } catch {
    response.writeHead(400, { [REFUSAL_HEADER]: 'refused' }).end();
    return;
  }
  const port = portOf(target);
  const address = target.protocol === 'http:' ? await traffic.admit(target.hostname, port) : undefined;
  if (!address) {
    response.writeHead(403, { [REFUSAL_HEADER]: 'refused', 'Content-Type': 'text/plain', 'Content-Length': '0' }).end();
    return;
  }
  const upstream = httpRequest({
    host: address,
    port,
    method: request.method,
    path: target.pathname + target.search,
    headers: withoutHopByHop(request.headers),
    setHost: false,
    timeout: UPSTREAM_CONNECT_TIMEOUT_MS,
    agent: traffic.agent,
  });
  upstream.on('socket', (socket) => traffic.track(socket));
  upstream.on('timeout', () => upstream.destroy());
  upstream.on('error', () => {
    // Marked, so that a site that cannot be reached is not mistaken for one that answered 502.
    if (!response.headersSent) response.writeHead(502, { [REFUSAL_HEADER]: UNREACHABLE, 'Content-Length': '0' }).end();
    else response.destroy();
  });
  upstream.on('response', (reply) => {
    response.writeHead(reply.statusCode ?? 502, withoutHopByHop(reply.headers));
    reply.on('data', traffic.count);
    reply.pipe(response);
  });
  request.pipe(upstream);
}

/** HTTPS and WebSockets: a CONNECT tunnel to host:port, opened only to the checked address. */
async function openTunnel(traffic: DocumentTraffic, request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
  traffic.requestCount++;
  traffic.track(client);
  client.on('error', () => client.destroy());
  const authority = splitHostPort(request.url ?? '');
  const address = authority ? await traffic.admit(authority.host, authority.port) : undefined;
  if (!authority || !address) {
    client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSAL_HEADER}: refused\r\nContent-Length: 0\r\n\r\n`);
    return;
  }
  const upstream = connect({ host: address, port: authority.port, timeout: UPSTREAM_CONNECT_TIMEOUT_MS });
  traffic.track(upstream);
  upstream.once('timeout', () => upstream.destroy());
  upstream.once('error', () => {
    if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
  });
  upstream.once('connect', () => {
    upstream.setTimeout(0);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.on('data', traffic.count);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.once('close', () => client.destroy());
  client.once('close', () => upstream.destroy());
}

/** Chromium never sends Upgrade to a proxy (WebSockets use CONNECT); anything that does is refused. */
function refuseUpgrade(traffic: DocumentTraffic, socket: Socket): void {
  traffic.requestCount++;
  socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
}

/** A listener on a free loopback port that never keeps the process alive on its own. */
async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return (server.address() as AddressInfo).port;
}

export async function startEgressGuard(initial?: GuardOptions): Promise<EgressGuard> {
  const traffic = new DocumentTraffic(initial);
  const server = createServer();
  server.on('connection', (socket: Socket) => traffic.track(socket));
  server.on('request', (request: IncomingMessage, response: ServerResponse) => void forwardHttp(traffic, request, response));
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => void openTunnel(traffic, request, client, head));
  server.on('upgrade', (_request: IncomingMessage, socket: Socket) => refuseUpgrade(traffic, socket));
  const port = await listenOnLoopback(server);

  return {
    proxyServer: `http://127.0.0.1:${port}`,
    get refused() {
      return traffic.refused;
    },
    get bytesReceived() {
      return traffic.bytesReceived;
    },
    get overLimit() {
      return traffic.overLimit;
    },
    get requestCount() {
      return traffic.requestCount;
    },
    arm: (policy: GuardOptions) => traffic.rearm(policy),
    async close() {
      traffic.closed = true;
      traffic.cutEverything();
      traffic.agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
