/**
 * Phase `cli-start` (issue #41): how long `pdfapi --version` takes from the installed package, as a
 * customer runs it: both packages packed and installed from their tarballs into a fresh project
 * (packages/build.ts packAndInstall), then the installed bin run again and again, on the pinned
 * Node and on the machine's own `node` when there is another. Bare `node -e 0` is measured beside
 * it: what no CLI can start faster than on that machine at that moment.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { packAndInstall } from '../../packages/build.ts';
import { summarize, type LatencySummary } from './stats.ts';

export interface CliStartRow {
  readonly node: string;
  readonly nodeVersion: string;
  readonly version: LatencySummary;
  readonly bareNode: LatencySummary;
}

const WARMUP = 3;

function timed(command: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const took = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr.toString('utf8')}`);
  return took;
}

/** The machine's own node (first on PATH), when it is not the pinned one. */
function machineNode(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v node'], { env: { PATH: (process.env.PATH ?? '').split(delimiter).filter((dir) => !dir.includes('node_modules')).join(delimiter) } });
  const path = found.stdout.toString('utf8').trim();
  return path && path !== process.execPath ? path : undefined;
}

export async function runCliStart(runs: number, log: (line: string) => void): Promise<CliStartRow[]> {
  const { project, packed } = await packAndInstall(await mkdtemp(join(tmpdir(), 'pdfapi-bench-cli-')));
  const bin = join(project, 'node_modules', '.bin', 'pdfapi');
  log(`installed ${packed.cli.filename} and ${packed.client.filename} into ${project}`);
  const rows: CliStartRow[] = [];
  for (const node of [process.execPath, machineNode()].filter((each): each is string => each !== undefined)) {
    // That Node first on PATH, as the bin's `#!/usr/bin/env node` finds it.
    const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` };
    const nodeVersion = spawnSync(node, ['--version']).stdout.toString('utf8').trim();
    for (let index = 0; index < WARMUP; index += 1) timed(bin, ['--version'], env);
    const version: number[] = [];
    const bare: number[] = [];
    // Interleaved, so both see the same machine.
    for (let index = 0; index < runs; index += 1) {
      version.push(timed(bin, ['--version'], env));
      bare.push(timed(node, ['-e', '0'], env));
    }
    const row = { node, nodeVersion, version: summarize(version), bareNode: summarize(bare) };
    log(`Node ${nodeVersion}: pdfapi --version p50 ${row.version.p50} ms, p95 ${row.version.p95} ms (bare node p50 ${row.bareNode.p50} ms)`);
    rows.push(row);
  }
  return rows;
}
