/**
 * Lets V8's memory reducer work in the long-running local stack, as it did before Node 24.
 *
 * Once a process goes quiet after work, V8's memory reducer is meant to run a collection or two
 * that give back what the work left: garbage not yet collected (the PDFs' buffers among it), the
 * heap's grown old generation, the young generation's pages. It runs only when it sees a low
 * allocation rate on three counts: the young generation, the old generation and the embedder's
 * C++ heap (cppgc). Since V8 13 (Node 24) the embedder's rate of a process that never allocated on
 * that heap is exactly 0, which V8 reads as the highest rate there is, so the reducer answers "high
 * alloc" at every tick and only its 100 s watchdog (postponed by each major collection) ever runs
 * it (nodejs/node#66564, https://issues.chromium.org/issues/570738027; Node 22 floored the rate at
 * 1 byte/ms). Measured on the stack: "high alloc" at every 8 s tick through any rest, and 30 s
 * after a 5,000-line bulk job 9 MiB of dead buffers and the job's heap pages still held.
 *
 * The fix's smallest form: an empty `vm.Script` now and then, which Node allocates on the C++
 * heap, so the embedder's rate is a tiny number instead of 0 and the reducer judges by the two
 * generations again. It forces nothing: V8 still decides when to collect. Its cost is one empty
 * compilation every RATE_SAMPLE_INTERVAL_MS.
 *
 * Not in Lambda: an execution environment is frozen between invocations and its memory is fixed.
 * test/unit/memory-reducer.test.ts fails once the pinned Node's V8 runs the reducer without it: then
 * this file goes.
 */
import { Script } from 'node:vm';

/**
 * Every 30 s: the rate decays to exactly 0 within about 100 s of the last allocation on that heap,
 * and each allocation reads as "high" at the reducer's next 8 s tick, so a rarer one leaves
 * the reducer blind and a more frequent one keeps it waiting.
 */
const RATE_SAMPLE_INTERVAL_MS = 30_000;

/** Keeps the embedder's allocation rate above 0 in this isolate until the returned stop is called. */
export function keepMemoryReducerWorking(): () => void {
  const allocateOnCppHeap = () => void new Script('');
  allocateOnCppHeap();
  const timer = setInterval(allocateOnCppHeap, RATE_SAMPLE_INTERVAL_MS);
  // Never what keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
