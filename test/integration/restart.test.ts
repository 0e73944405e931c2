/**
 * The local stack keeps its state in its data directory: keys made with the key tool and PDFs
 * with their download links survive a stop and a start, as they would survive a redeploy on AWS.
 *
 * This file runs a second local stack of its own (in this test worker's process), so it never
 * disturbs the shared one the other files use.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '#lib/local/stack.ts';
import { getBrowser } from '#lib/render/browser.ts';
import { expectApiError, request, runKeyTool } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';
import { processTree } from '../../bench/lib/rss.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

async function downloadBytes(url: string): Promise<Buffer> {
  const response = await fetch(url, { redirect: 'follow' });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

describe('local stack restart', () => {
  const savedEnv = { ...process.env };
  let dataDir: string;
  let stack: LocalStack | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-restart-'));
    // The shared stack's settings are inherited from the vitest main process; this stack makes its own.
    delete process.env.PUBLIC_BASE_URL;
  });

  afterAll(async () => {
    await stack?.stop();
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps keys, records and download links across a stop and a start on the same data directory', async () => {
    // Prepare: a stack, a key made with the key tool, a PDF and its link.
    stack = await startLocalStack({ dataDir, port: 0 });
    const port = Number(new URL(stack.apiUrl).port);
    const created = await runKeyTool(['create', '--tier', 'starter', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    const { api_key: apiKey } = JSON.parse(created.stdout) as { api_key: string };
    const generated = await request('POST', `${stack.apiUrl}/v1/pdf/generate`, {
      apiKey,
      headers: JSON_HEADERS,
      body: JSON.stringify({ html: '<!doctype html><h1>Survives restarts</h1>' }),
    });
    expect(generated.status).toBe(200);
    const record = generated.body;
    const original = await downloadBytes(record.url);

    // Act
    await stack.stop();
    stack = undefined;
    const whileStopped = await runKeyTool(['list', '--json'], { DATA_DIR: dataDir });
    stack = await startLocalStack({ dataDir, port });

    // Assess: the tool saw the stack gone, and everything made before works again.
    expect(whileStopped.code).not.toBe(0);
    expect(whileStopped.stderr).toMatch(/not running/i);
    const again = await downloadBytes(record.url);
    expect(again.equals(original)).toBe(true);
    expect((await readPdf(again)).text).toContain('Survives restarts');
    const fetched = await request('GET', `${stack.apiUrl}/v1/pdf/${record.id}`, { apiKey });
    expect(fetched.status).toBe(200);
    expect(fetched.body.size).toBe(record.size);
    const second = await request('POST', `${stack.apiUrl}/v1/pdf/generate`, {
      apiKey,
      headers: JSON_HEADERS,
      body: JSON.stringify({ html: '<!doctype html><p>After the restart</p>' }),
    });
    expect(second.status).toBe(200);
    expect((await readPdf(await downloadBytes(second.body.url))).text).toContain('After the restart');
    const listed = await runKeyTool(['list', '--json'], { DATA_DIR: dataDir });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
  });

  it('refuses an unknown key on the restarted stack: the data directory holds only its own keys', async () => {
    // Prepare
    expect(stack).toBeDefined();

    // Act
    const response = await request('POST', `${stack!.apiUrl}/v1/pdf/generate`, {
      apiKey: 'pdfk_' + 'Q'.repeat(40),
      headers: JSON_HEADERS,
      body: JSON.stringify({ html: '<p>x</p>' }),
    });

    // Assess
    expectApiError(response, 401, 'unauthorized');
  });

  it('relaunches Chromium after it dies, and the next document renders', async () => {
    // Prepare: the browser of this worker's stack, killed as an out-of-memory killer would
    expect(stack).toBeDefined();
    const created = await runKeyTool(['create', '--tier', 'pro', '--json'], { DATA_DIR: dataDir });
    const { api_key: apiKey } = JSON.parse(created.stdout) as { api_key: string };
    const browser = await getBrowser();
    const killed = new Promise((resolve) => browser.once('disconnected', resolve));
    browser.process()?.kill('SIGKILL');
    await killed;

    // Act
    const afterCrash = await request('POST', `${stack!.apiUrl}/v1/pdf/generate`, {
      apiKey,
      headers: JSON_HEADERS,
      body: JSON.stringify({ html: '<!doctype html><p>Rendered by a new browser</p>' }),
    });

    // Assess
    expect(afterCrash.status).toBe(200);
    expect((await readPdf(await downloadBytes(afterCrash.body.url))).text).toContain('Rendered by a new browser');
    expect((await getBrowser()).process()?.pid).not.toBe(browser.process()?.pid);
  });
});

/** The inodes of the TCP sockets in LISTEN state on this machine (IPv4 and IPv6). */
function listeningSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A') inodes.add(fields[9] as string); // st 0A = LISTEN; field 9 = inode
    }
  }
  return inodes;
}


/** The inodes of the sockets a process holds open. */
function socketInodesOf(pid: number): string[] {
  const inodes: string[] = [];
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' }));
      if (match) inodes.push(match[1] as string);
    }
  } catch {
    // exited meanwhile
  }
  return inodes;
}

describe("the browser's DevTools connection", () => {
  it.runIf(process.platform === 'linux')('is a pipe: no Chromium process listens on any TCP port another process could connect to', async () => {
    // Prepare: the browser of this process, after it rendered a document (renderers running)
    const browser = await getBrowser();
    const page = await browser.newPage();
    await page.setContent('<p>a renderer is running</p>');
    const pid = browser.process()?.pid;
    expect(pid).toBeDefined();

    // Act
    const listening = listeningSocketInodes();
    const chromiumListeners = processTree(pid as number).flatMap(socketInodesOf).filter((inode) => listening.has(inode));
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    await page.close();

    // Assess
    expect(chromiumListeners).toEqual([]);
    expect(commandLine).toContain('--remote-debugging-pipe');
    expect(commandLine.some((argument) => argument.startsWith('--remote-debugging-port'))).toBe(false);
  });
});

describe('key tool without a running stack', () => {
  it('exits non-zero with a clear "not running" message naming the data directory', async () => {
    // Prepare
    const emptyDir = await mkdtemp(join(tmpdir(), 'pdf-api-nostack-'));

    try {
      // Act
      const result = await runKeyTool(['create', '--tier', 'free', '--json'], { DATA_DIR: emptyDir });

      // Assess
      expect(result.code).not.toBe(0);
      expect(result.stdout).not.toMatch(/pdfk_/);
      expect(result.stderr).toMatch(/not running/i);
      expect(result.stderr).toContain(emptyDir);
      expect(result.stderr).toMatch(/npm start/);
    } finally {
      await rm(emptyDir, { recursive: true, force: true });
    }
  });
});
