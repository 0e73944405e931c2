/**
 * V8's memory reducer in the local stack (lib/local/memory-reducer.ts): after work, a quiet Node
 * process runs the reducer's collections (which give the work's garbage and heap pages back) with
 * the workaround, and, on the pinned Node, does not without it. The second case is the workaround's
 * reason to exist: when it fails, Node's V8 has been fixed and the workaround is to be removed.
 *
 * Each case is a Node process of its own that allocates until V8 has run a major collection (what
 * arms the reducer), then rests, printing V8's own account (--trace-memory-reducer). The reducer
 * ticks every 8 s (V8's constant); the first tick comes 1 s after the collection
 * (--gc-memory-reducer-start-delay-ms), so each case takes about 10 s, the two at once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const workaround = fileURLToPath(new URL('../../lib/local/memory-reducer.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'memory-reducer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A plain script file (not `-e`, which Node compiles through `vm` and so allocates on the C++ heap itself). */
const script = join(dir, 'after-work.mjs');
writeFileSync(
  script,
  `
import { PerformanceObserver, constants } from 'node:perf_hooks';
if (process.argv[2] === 'with') (await import(${JSON.stringify(workaround)})).keepMemoryReducerWorking();
let majorCollections = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorCollections++;
}).observe({ entryTypes: ['gc'] });
// Work: objects that live a while (so they reach the old generation), then are dropped, until V8
// has run a major collection; then rest as a quiet service does, a timer keeping the process alive.
let kept = [];
for (let round = 0; majorCollections === 0 && round < 400; round++) {
  kept.push(Array.from({ length: 20_000 }, (_, i) => ({ round, i })));
  if (kept.length > 20) kept = [];
  await new Promise((resolve) => setImmediate(resolve));
}
kept = [];
console.log('work done, major collections: ' + majorCollections);
setInterval(() => {}, 1_000);
`,
);

/** V8's reducer lines of one rest: resolves once `enough` says so (or after `limitMs`), then ends the process. */
function rest(mode: 'with' | 'without', enough: (trace: string) => boolean, limitMs: number): Promise<string> {
  const child = spawn(process.execPath, ['--trace-memory-reducer', '--trace-gc', '--gc-memory-reducer-start-delay-ms=1000', script, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let trace = '';
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      child.kill();
      resolve(trace);
    };
    const timer = setTimeout(end, limitMs);
    child.stdout.on('data', (chunk: Buffer) => {
      trace += chunk.toString();
      if (enough(trace)) end();
    });
    child.once('exit', end);
  });
}

const reducerStarted = (trace: string) => /Memory reducer: started GC/.test(trace);
const ticksAfterWork = (trace: string) => (trace.split('work done')[1]?.match(/Memory reducer: (high|low) alloc/g) ?? []).length;

describe('V8’s memory reducer in a quiet local stack', () => {
  it('runs its collections once the work ends with the workaround, and not without it on the pinned Node', { timeout: 60_000 }, async () => {
    // Act: both rests at once; without the workaround, two ticks after the work (the second is where
    // the reducer starts when it works) are enough to tell.
    const [withIt, withoutIt] = await Promise.all([
      rest('with', reducerStarted, 45_000),
      rest('without', (trace) => reducerStarted(trace) || ticksAfterWork(trace) >= 2, 45_000),
    ]);

    // Assert
    expect(withIt).toMatch(/work done, major collections: [1-9]/);
    expect(withIt).toMatch(/Memory reducer: low alloc/);
    expect(withIt).toMatch(/Memory reducer: started GC/);
    expect(withoutIt).toMatch(/work done, major collections: [1-9]/);
    expect(ticksAfterWork(withoutIt), 'the rest without the workaround ended before two reducer ticks').toBeGreaterThanOrEqual(2);
    expect(
      reducerStarted(withoutIt),
      "this Node's V8 runs the memory reducer by itself now: remove lib/local/memory-reducer.ts and this test",
    ).toBe(false);
  });
});
