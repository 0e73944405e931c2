/**
 * Chromium's decompression cost, measured apart from cold start.
 *
 * @sparticuz/chromium ships Chromium brotli-compressed and, on the first executablePath() of a
 * machine, inflates it to `os.tmpdir()/chromium` (plus fonts/ and SwiftShader's libraries beside
 * it); later calls find the file and return at once. On this machine it is normally there already,
 * so the benchmark runs a child process whose TMPDIR (which os.tmpdir() reads) is a fresh empty
 * directory, times the first call there, and deletes the directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './stack-process.ts';
import { round } from './stats.ts';

const run = promisify(execFile);

export type DecompressResult =
  | { readonly measured: true; readonly firstCallMs: number; readonly cachedCallMs: number; readonly extractedMiB: number; readonly processMs: number }
  | { readonly measured: false; readonly reason: string };

function sizeOf(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
}

export async function measureDecompression(): Promise<DecompressResult> {
  if (process.env.CHROME_PATH) return { measured: false, reason: 'CHROME_PATH is set: no decompression happens' };
  const dir = mkdtempSync(join(tmpdir(), 'pdf-bench-chromium-'));
  try {
    const started = performance.now();
    const { stdout } = await run(process.execPath, ['bench/lib/decompress-child.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TMPDIR: dir },
    });
    const processMs = performance.now() - started;
    const { path, firstMs, cachedMs } = JSON.parse(stdout) as { path: string; firstMs: number; cachedMs: number };
    if (!path.startsWith(dir)) return { measured: false, reason: `Chromium was not extracted to the fresh directory (got ${path})` };
    return { measured: true, firstCallMs: round(firstMs), cachedCallMs: round(cachedMs, 2), extractedMiB: round(sizeOf(dir) / 2 ** 20), processMs: round(processMs) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
