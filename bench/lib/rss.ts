/**
 * Peak resident memory of a process tree (the local stack and its Chromium processes), sampled from
 * /proc: the sum of VmRSS over the root and every descendant. Pages shared between Chromium's
 * processes are counted once per process, so the sum overstates physical memory somewhat; it is
 * the figure `ps` users would add up, and it is comparable from run to run.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface RssPeak {
  /** Highest sum seen, in MiB. */
  readonly peakMiB: number;
  /** Processes in the tree at that moment. */
  readonly processesAtPeak: number;
  readonly samples: number;
}

/** A process's parent, from /proc; undefined once it has exited. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined; // exited meanwhile
  }
}

function rssKiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0; // kernel threads and zombies have none
  } catch {
    return 0;
  }
}

/**
 * Parent of every process, kept between samples: a process's parent is read once, when its pid is
 * first seen, so a sample costs one directory listing plus the status files of the tree itself.
 * (A pid that disappears is forgotten, so a reused pid is read afresh.)
 */
export class ProcessTable {
  readonly #parents = new Map<number, number>();

  refresh(): void {
    const alive = new Set<number>();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      alive.add(pid);
      if (!this.#parents.has(pid)) {
        const parent = parentOf(pid);
        if (parent !== undefined) this.#parents.set(pid, parent);
      }
    }
    for (const pid of this.#parents.keys()) if (!alive.has(pid)) this.#parents.delete(pid);
  }

  /** The root and all its descendants. */
  tree(root: number): number[] {
    const children = new Map<number, number[]>();
    for (const [pid, parent] of this.#parents) {
      const siblings = children.get(parent);
      if (siblings) siblings.push(pid);
      else children.set(parent, [pid]);
    }
    const tree: number[] = [];
    const pending = [root];
    while (pending.length) {
      const pid = pending.pop() as number;
      tree.push(pid);
      pending.push(...(children.get(pid) ?? []));
    }
    return tree;
  }
}

/** The root and all its descendants, from a fresh pass over /proc. */
export function processTree(root: number): number[] {
  const table = new ProcessTable();
  table.refresh();
  return table.tree(root);
}

/**
 * Samples a tree's RSS at a fixed interval and keeps the peak of each labelled phase. The root can
 * change (the stack is restarted between phases), the peaks carry over.
 */
export class TreeRssSampler {
  #root: number | undefined;
  #phase = 'idle';
  #timer: NodeJS.Timeout | undefined;
  readonly #peaks = new Map<string, { peakMiB: number; processesAtPeak: number; samples: number }>();
  #sampleCpuMs = 0;
  readonly #table = new ProcessTable();

  start(intervalMs: number): void {
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  /** Which process tree to sample, and which phase the samples belong to from now on. */
  watch(root: number | undefined, phase: string): void {
    this.#root = root;
    this.#phase = phase;
    if (root !== undefined) this.sample();
  }

  sample(): void {
    if (this.#root === undefined) return;
    const started = performance.now();
    this.#table.refresh();
    const tree = this.#table.tree(this.#root);
    const mib = tree.reduce((sum, pid) => sum + rssKiB(pid), 0) / 1024;
    const processes = tree.length;
    this.#sampleCpuMs += performance.now() - started;
    const peak = this.#peaks.get(this.#phase) ?? { peakMiB: 0, processesAtPeak: 0, samples: 0 };
    peak.samples += 1;
    if (mib > peak.peakMiB) {
      peak.peakMiB = mib;
      peak.processesAtPeak = processes;
    }
    this.#peaks.set(this.#phase, peak);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#root = undefined;
  }

  /** Peak per phase, in MiB rounded to one decimal. */
  peaks(): Record<string, RssPeak> {
    return Object.fromEntries(
      [...this.#peaks].map(([phase, peak]) => [phase, { ...peak, peakMiB: Math.round(peak.peakMiB * 10) / 10 }]),
    );
  }

  /** Average time one sample took: the sampler's own cost on the machine it measures. */
  meanSampleMs(): number {
    const samples = [...this.#peaks.values()].reduce((sum, peak) => sum + peak.samples, 0);
    return samples ? Math.round((this.#sampleCpuMs / samples) * 100) / 100 : 0;
  }
}
