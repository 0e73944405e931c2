/**
 * A webhook receiver on loopback, for tests and benchmarks that start a stack of their own: records
 * every delivery by path and answers each path with the statuses it is told, in turn (then 200).
 * The stack must allow its `host` (PDF_ALLOW_PRIVATE_HOSTS), since the egress guard refuses loopback.
 * Free of vitest, so bench/ can use it too.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

export class WebhookReceiver {
  readonly deliveries = new Map<string, Delivery[]>();
  readonly answers = new Map<string, number[]>();
  server!: Server;
  origin!: string;

  async start(): Promise<void> {
    this.server = createServer((incoming, response) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const path = incoming.url ?? '/';
        this.deliveries.set(path, [...(this.deliveries.get(path) ?? []), { headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }]);
        const status = this.answers.get(path)?.shift() ?? 200;
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** `host:port`, as PDF_ALLOW_PRIVATE_HOSTS lists it. */
  get host(): string {
    return new URL(this.origin).host;
  }

  /** A fresh path on this receiver that answers `statuses` first. */
  hook(name: string, statuses: number[] = []): string {
    this.answers.set(`/${name}`, [...statuses]);
    return `${this.origin}/${name}`;
  }

  received(name: string): Delivery[] {
    return this.deliveries.get(`/${name}`) ?? [];
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}
