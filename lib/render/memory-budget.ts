/**
 * A memory budget per document, enforced by watching and killing (issue #29).
 *
 * Every document renders in a browser context of its own, and Chromium never lets two browser
 * contexts share a renderer process: a document's renderer is its own. What a document makes the
 * renderer hold (a 48 KB PNG that decodes to 1.6 GB of pixels, typed arrays of gigabytes, a giant
 * page rastered with a blur) shows as that process's resident memory. Chromium has no limit of its
 * own for it (V8's heap limit leaves out array buffers and images), so this module reads the
 * resident memory of the browser's renderer processes every SAMPLE_INTERVAL_MS from /proc and kills
 * a renderer past the budget. Its document sees its renderer crash at once (lib/render/workspaces.ts)
 * and fails `MEMORY_LIMIT_EXCEEDED` (422), uncharged; every other document, and the process, go on.
 *
 * Sized so that one document never takes a Lambda container down: the budget defaults to the
 * function's memory less what the browser's other processes and Node need (settings
 * renderMemoryBudgetMb). Where there is no /proc (macOS developers) nothing is watched.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { logger } from '#lib/observability/logger.ts';

/** How often the renderers' memory is read: at about 1 GB/s of allocation, a kill lands ~100 MB past the budget. */
const SAMPLE_INTERVAL_MS = 100;
/** How long after a kill a renderer crash is put down to it. */
const KILL_ATTRIBUTION_MS = 5_000;

interface Kill {
  readonly pid: number;
  readonly at: number;
  readonly rssMb: number;
  readonly budgetMb: number;
}

/** Renderers killed for their memory, most recent last (a few at most are kept). */
const kills: Kill[] = [];

/** The pids of a process's descendants, through /proc/<pid>/task/<tid>/children. */
function descendantsOf(root: number): number[] {
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ')) {
        const childPid = Number(child);
        if (childPid > 0) {
          found.push(childPid);
          pending.push(childPid);
        }
      }
    }
  }
  return found;
}

const rendererByPid = new Map<number, boolean>();

function isRenderer(pid: number): boolean {
  let known = rendererByPid.get(pid);
  if (known === undefined) {
    try {
      known = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
    rendererByPid.set(pid, known);
  }
  return known;
}

function residentMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Watches the renderers of the browser whose process is `browserPid` and kills one whose resident
 * memory passes `budgetMb`. Returns the stop (also stopped when the browser goes: its pid is gone).
 */
export function watchRendererMemory(browserPid: number, budgetMb: number): () => void {
  try {
    readdirSync(`/proc/${browserPid}/task`);
  } catch {
    return () => undefined; // no /proc: nothing to watch with
  }
  const timer = setInterval(() => {
    const renderers = descendantsOf(browserPid).filter(isRenderer);
    if (renderers.length === 0 && !existsProcess(browserPid)) return clearInterval(timer);
    for (const pid of renderers) {
      const rssMb = residentMb(pid);
      if (rssMb <= budgetMb) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        continue; // gone already
      }
      kills.push({ pid, at: performance.now(), rssMb, budgetMb });
      if (kills.length > 16) kills.shift();
      logger.warn('renderer killed for its memory', { rss_mb: Math.round(rssMb), budget_mb: budgetMb });
    }
    for (const pid of rendererByPid.keys()) if (!renderers.includes(pid)) rendererByPid.delete(pid);
  }, SAMPLE_INTERVAL_MS);
  // The watch never keeps a process alive on its own.
  timer.unref();
  return () => clearInterval(timer);
}

function existsProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The kill a renderer crash seen now is put down to, if any: the browser's renderers crash for
 * other reasons too, but one killed here a moment ago is the one whose document just lost it.
 */
export function recentMemoryKill(now = performance.now()): Kill | undefined {
  const kill = kills.at(-1);
  return kill && now - kill.at < KILL_ATTRIBUTION_MS ? kill : undefined;
}

/** Forgets a kill once a document has been failed for it, so that it is blamed once. */
export function forgetMemoryKill(kill: Kill): void {
  const index = kills.indexOf(kill);
  if (index >= 0) kills.splice(index, 1);
}
