/**
 * The local stack as a child process (`node <flags> lib/local/start.ts`), as a user runs it with `npm start`,
 * and the project's key tool against it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { processTree } from './rss.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** How long the stack may take to come up before the benchmark gives up on it. */
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export interface StackProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** performance.now() just before spawn. */
  readonly spawnedAt: number;
  /** What the stack wrote to stack.json. */
  readonly info: StackInfo;
  /** Spawn until stack.json appeared (the API is listening and has rendered its warm-up PDF). */
  readonly readyMs: number;
  /**
   * The stack's own "first PDF after N ms" (timed inside the process, so without Node's start-up
   * and module loading). Printed just after stack.json is written, hence a promise.
   */
  readonly reportedFirstPdfMs: Promise<number | undefined>;
  /** Everything the stack printed, for error messages. */
  readonly output: string[];
}

/**
 * How `npm start` starts the stack (package.json's `start` script, the one place it is written:
 * `[NAME=value ...] node [flags] lib/local/start.ts`): the bench measures the stack as a user runs
 * it. Why each is there is in docs/bulk-jobs.md, "Memory through a job": `--max-semi-space-size=16`
 * bounds the main thread's young generation, `--heap-growing-percent=30` its old generation's growth
 * (V8's default let both grow under a bulk job and keep what they took), and `MALLOC_ARENA_MAX=2`
 * glibc's arenas, one per allocating thread by default, kept after the thread ends.
 */
export function startScript(): { env: Record<string, string>; nodeFlags: string[] } {
  const script = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = script.split(/\s+/);
  const assignments = words.slice(0, words.indexOf('node'));
  if (!words.includes('node') || words.at(-1) !== 'lib/local/start.ts' || !assignments.every((word) => /^[A-Z_][A-Z0-9_]*=\S*$/.test(word))) {
    throw new Error(`package.json's start script is not "[NAME=value ...] node [flags] lib/local/start.ts": ${script}`);
  }
  const env = Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
  return { env, nodeFlags: words.slice(assignments.length + 1, -1) };
}

/**
 * The stack's environment: the caller's, without settings that would change what is measured,
 * plus `extra` (which may set the render limit on purpose).
 */
function stackEnvironment(dataDir: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  // Defaults for the render limit; the stack picks its own table, bucket, endpoints and base URL.
  for (const name of ['RENDER_TIMEOUT_MS', 'TABLE_NAME', 'IDEMPOTENCY_TABLE_NAME', 'BUCKET_NAME', 'PUBLIC_BASE_URL']) delete inherited[name];
  return { ...inherited, PORT: '0', ...extra, DATA_DIR: dataDir };
}

const children = new Set<ChildProcess>();
// If the benchmark dies, it must not leave a stack (and its Chromium) behind.
process.once('exit', () => {
  for (const child of children) if (child.pid !== undefined) killTree(child.pid);
});

function killTree(root: number): void {
  for (const pid of processTree(root).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Spawns the stack and resolves once stack.json is written. `onSpawn` runs right after spawn, so
 * the memory sampler can follow the process from its first instant; `env` adds to the caller's
 * environment (e.g. PDF_ALLOW_PRIVATE_HOSTS for a webhook receiver on loopback, or the PORT of a
 * stack started again, which is any free one otherwise); `extraNodeArgs` adds Node flags (a phase's
 * preloaded probe, bench/lib/stack-heap-log.ts).
 */
export async function startStackProcess(dataDir: string, onSpawn?: (pid: number) => void, env: NodeJS.ProcessEnv = {}, extraNodeArgs: readonly string[] = []): Promise<StackProcess> {
  const infoPath = join(dataDir, 'stack.json');
  rmSync(infoPath, { force: true });
  const output: string[] = [];
  const spawnedAt = performance.now();
  // BENCH_STACK_NODE_ARGS: flags for the stack's Node only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
  // to see where its time goes (Node refuses --cpu-prof in NODE_OPTIONS).
  const nodeArgs = (process.env.BENCH_STACK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const start = startScript();
  const child = spawn(process.execPath, [...start.nodeFlags, ...extraNodeArgs, ...nodeArgs, 'lib/local/start.ts'], {
    cwd: REPO_ROOT,
    env: stackEnvironment(dataDir, { ...start.env, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (child.pid === undefined) throw new Error('The local stack could not be spawned');
  const pid = child.pid;
  onSpawn?.(pid);
  let reported: (ms: number | undefined) => void = () => undefined;
  const reportedFirstPdfMs = new Promise<number | undefined>((resolve) => (reported = resolve));
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output.push(text);
    const match = /first PDF after (\d+) ms/.exec(text);
    if (match) reported(Number(match[1]));
  };
  child.once('exit', () => reported(undefined));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${signal ?? `code ${code}`}`));
  let info: StackInfo | undefined;
  while (!info) {
    if (exited) throw new Error(`The local stack ${exited} before it was ready:\n${output.join('')}`);
    if (performance.now() - spawnedAt > START_TIMEOUT_MS) {
      killTree(pid);
      throw new Error(`The local stack was not ready after ${START_TIMEOUT_MS} ms:\n${output.join('')}`);
    }
    if (existsSync(infoPath)) {
      try {
        const candidate = JSON.parse(readFileSync(infoPath, 'utf8')) as StackInfo;
        if (candidate.pid === pid) info = candidate;
      } catch {
        // caught mid-write: read again on the next turn
      }
    }
    if (!info) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const readyMs = performance.now() - spawnedAt;
  return { child, pid, spawnedAt, info, readyMs, reportedFirstPdfMs, output };
}

/** Stops the stack as Ctrl-C would (SIGTERM, a clean shutdown); kills its tree if it does not exit in time. */
export async function stopStackProcess(stack: StackProcess): Promise<void> {
  const { child } = stack;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const tree = processTree(stack.pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let grace: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (grace = setTimeout(() => r(false), STOP_GRACE_MS)))]);
  // A timer left running would keep the caller's process up for the rest of the grace.
  clearTimeout(grace);
  if (!inTime) killTree(stack.pid);
  // Anything of its tree still alive (an orphaned Chromium) goes too.
  for (const pid of tree) {
    try {
      process.kill(pid, 0);
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  await exited;
}

/** Kills the stack and its whole tree at once, as a crash or `kill -9` would: no shutdown of any kind. */
export async function killStackProcess(stack: StackProcess): Promise<void> {
  const { child } = stack;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killTree(stack.pid);
  await exited;
}

export interface BenchKey {
  readonly apiKey: string;
  readonly keyId: string;
  readonly rateLimitPerMinute: number;
  readonly monthlyQuota: number;
}

/**
 * A key made with the project's key tool: by default an enterprise key whose limits never interfere
 * with the benchmark; `tier` and `rateLimitPerMinute` make one that meets its limits (a hostile
 * sender's, bench/lib/neighbours.ts).
 */
export async function createBenchKey(
  dataDir: string,
  { tier = 'enterprise', rateLimitPerMinute = 100_000, name = 'bench' }: { tier?: string; rateLimitPerMinute?: number; name?: string } = {},
): Promise<BenchKey> {
  const args = ['bin/keys.ts', 'create', '--tier', tier, '--name', name];
  args.push('--rate-limit', String(rateLimitPerMinute), '--monthly-quota', '10000000', '--json');
  const { stdout } = await run(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, DATA_DIR: dataDir, TABLE_NAME: '' },
  });
  const created = JSON.parse(stdout) as { api_key: string; key_id: string; rate_limit_per_minute: number; monthly_quota: number };
  return {
    apiKey: created.api_key,
    keyId: created.key_id,
    rateLimitPerMinute: created.rate_limit_per_minute,
    monthlyQuota: created.monthly_quota,
  };
}

/** The JSON log lines the stack has written so far (its other output, such as the banner, left out), typed as the caller reads them. */
export function jsonLogLines<Line>(stack: StackProcess): Line[] {
  return stack.output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}
