/**
 * How long this process's event loop was held: the delay a timer saw before it could run
 * (`perf_hooks.monitorEventLoopDelay`). Every request of a process is served by its one loop, so a
 * delay here is a delay for every customer at once; customer code runs in workers
 * (lib/customer-code/pool.ts) to keep it small. Reported by /health and as a metric.
 *
 * Measured in windows of WINDOW_MS: what is reported is the worse of the last whole window and the
 * current one, so a stall is seen for at least one window after it ends, and at once while it lasts.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

/** Length of a measuring window. */
export const EVENT_LOOP_WINDOW_MS = 10_000;

export interface EventLoopDelay {
  /** 99th percentile of the delay, in ms. */
  readonly p99Ms: number;
  /** Longest delay, in ms. */
  readonly maxMs: number;
}

let histogram: IntervalHistogram | undefined;
let windowStarted = 0;
let lastWindow: EventLoopDelay = { p99Ms: 0, maxMs: 0 };

const readout = (h: IntervalHistogram): EventLoopDelay =>
  h.count === 0 ? { p99Ms: 0, maxMs: 0 } : { p99Ms: Math.round(h.percentile(99) / 1e6), maxMs: Math.round(h.max / 1e6) };

/** The event loop's delay lately (see above). Starts measuring on first call. */
export function eventLoopDelay(): EventLoopDelay {
  const now = performance.now();
  if (!histogram) {
    // A 10 ms resolution: a stall shorter than that is not one a customer would notice.
    histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    windowStarted = now;
  }
  if (now - windowStarted >= EVENT_LOOP_WINDOW_MS) {
    lastWindow = readout(histogram);
    histogram.reset();
    windowStarted = now;
  }
  const current = readout(histogram);
  return { p99Ms: Math.max(current.p99Ms, lastWindow.p99Ms), maxMs: Math.max(current.maxMs, lastWindow.maxMs) };
}
