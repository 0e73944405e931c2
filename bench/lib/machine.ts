/**
 * How busy the machine is before a phase starts, while the benchmark itself is idle: the machine is
 * shared, and other work running on its two cores moves every figure. Measured from /proc/stat over
 * one second; recorded with the results so a noisy run can be recognised.
 */
import { readFileSync } from 'node:fs';
import { processTree } from './rss.ts';

function cpuTimes(): { idle: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle + iowait is time the CPUs had nothing to run.
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { idle, total };
}

/** Percentage of all cores busy over the next `ms` milliseconds. */
export async function busyPercent(ms = 1_000): Promise<number> {
  const before = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = cpuTimes();
  const total = after.total - before.total;
  return total > 0 ? Math.round((100 * (total - (after.idle - before.idle))) / total) : 0;
}

/** Above this share of busy cores before a phase, its figures are flagged as taken on a busy machine. */
export const BUSY_THRESHOLD_PERCENT = 25;

/**
 * Measures how busy the machine is; with a wait budget, keeps measuring (one second at a time)
 * until it is quiet or the budget is spent. Returns the last reading.
 */
export async function waitForQuiet(maxWaitSeconds: number): Promise<number> {
  const deadline = performance.now() + maxWaitSeconds * 1000;
  let busy = await busyPercent();
  while (busy > BUSY_THRESHOLD_PERCENT && performance.now() < deadline) busy = await busyPercent();
  return busy;
}

/** CPU ticks used by this process and all its descendants, including those already exited and reaped. */
function ownTreeTicks(): number {
  let ticks = 0;
  for (const pid of processTree(process.pid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, cutime, cstime (fields 14 to 17 of proc(5); the list here starts at field 3).
      ticks += [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index] ?? 0), 0);
    } catch {
      // exited meanwhile: its time is in its parent's cutime/cstime once reaped
    }
  }
  return ticks;
}

/**
 * Starts watching a phase; the returned function gives the share of all cores that work outside
 * the benchmark's own process tree kept busy meanwhile (percent), i.e. how much the figures were
 * disturbed by whatever else runs on the machine.
 */
export function watchForeignLoad(): () => number {
  const before = { cpu: cpuTimes(), own: ownTreeTicks() };
  return () => {
    const cpu = cpuTimes();
    const own = ownTreeTicks() - before.own;
    const total = cpu.total - before.cpu.total;
    const busy = total - (cpu.idle - before.cpu.idle);
    return total > 0 ? Math.max(0, Math.round((100 * (busy - own)) / total)) : 0;
  };
}
