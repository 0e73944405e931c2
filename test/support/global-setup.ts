/**
 * Starts the local stack once for all integration tests, exactly as `npm start` does, on a free
 * port with a throw-away data directory, plus the loopback fixture sites.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildCli } from '../../packages/build.ts';
import { startFixtureServer } from './fixture-server.ts';
import { startTestTsa } from './test-tsa.ts';

/** Short enough to keep timeout tests quick, long enough for any honest test document. */
export const TEST_RENDER_TIMEOUT_MS = 5_000;
export const TEST_MAX_PDF_PAGES = 50;
export const TEST_MAX_DOWNLOAD_BYTES = 2 * 1024 * 1024;
export const TEST_MAX_PDF_BYTES = 8 * 1024 * 1024;
/** How long the stack waits for the test TSA: ample for its answer (milliseconds), short for the stalled one. */
export const TEST_TSA_TIMEOUT_MS = 3_000;

declare module 'vitest' {
  export interface ProvidedContext {
    apiUrl: string;
    dataDir: string;
    publicSite: string;
    /** A second allow-listed site: another origin than publicSite (another port of the same host). */
    otherSite: string;
    internalSite: string;
    /** An allow-listed address where nothing listens: a site that is down. */
    deadSite: string;
    renderTimeoutMs: number;
    /** An allow-listed loopback port kept free for the docs' webhook examples to listen on (client-packages.test.ts). */
    examplesWebhookPort: number;
    /** The RFC 3161 authority the stack time-stamps signatures with (SIGNATURE_TSA_URL), and its certificate. */
    tsaUrl: string;
    tsaCertificatePem: string;
    tsaTimeoutMs: number;
  }
}

export default async function setup(project: TestProject) {
  // The CLI's tests run its bundle (what the package ships), built from the sources as they are now.
  const cliBuilt = buildCli();
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-test-'));
  const publicSite = await startFixtureServer();
  const otherSite = await startFixtureServer();
  const internalSite = await startFixtureServer();
  const deadSite = await closedPort();
  const examplesWebhookPort = await closedPort();
  const tsa = await startTestTsa();
  process.env.SIGNATURE_TSA_URL = tsa.url;
  process.env.SIGNATURE_TSA_TIMEOUT_MS = String(TEST_TSA_TIMEOUT_MS);
  process.env.PDF_ALLOW_PRIVATE_HOSTS = `${publicSite.hostPort},${otherSite.hostPort},127.0.0.1:${deadSite},127.0.0.1:${examplesWebhookPort}`;
  process.env.RENDER_TIMEOUT_MS = String(TEST_RENDER_TIMEOUT_MS);
  // Small enough to test without huge documents; see the limits tests.
  process.env.MAX_PDF_PAGES = String(TEST_MAX_PDF_PAGES);
  process.env.MAX_DOCUMENT_DOWNLOAD_BYTES = String(TEST_MAX_DOWNLOAD_BYTES);
  process.env.MAX_PDF_BYTES = String(TEST_MAX_PDF_BYTES);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'CRITICAL';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // Imported only now, so that the logger and settings see the test environment above.
  const { startLocalStack } = await import('#lib/local/stack.ts');
  const stack = await startLocalStack({ dataDir, port: 0 });

  await cliBuilt;
  project.provide('apiUrl', stack.apiUrl);
  project.provide('dataDir', dataDir);
  project.provide('publicSite', publicSite.origin);
  project.provide('otherSite', otherSite.origin);
  project.provide('internalSite', internalSite.origin);
  project.provide('deadSite', `http://127.0.0.1:${deadSite}`);
  project.provide('renderTimeoutMs', TEST_RENDER_TIMEOUT_MS);
  project.provide('examplesWebhookPort', examplesWebhookPort);
  project.provide('tsaUrl', tsa.url);
  project.provide('tsaCertificatePem', tsa.certificatePem);
  project.provide('tsaTimeoutMs', TEST_TSA_TIMEOUT_MS);

  return async () => {
    await stack.stop();
    await publicSite.close();
    await otherSite.close();
    await internalSite.close();
    await tsa.close();
    await rm(dataDir, { recursive: true, force: true });
  };
}

/** A loopback port that was free a moment ago and has nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
