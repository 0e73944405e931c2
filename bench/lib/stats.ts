/** Small statistics over timings, in milliseconds unless said otherwise. */

export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

/** The q-quantile (0..1) with linear interpolation between order statistics (numpy's default). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const a = sorted[lower] as number;
  const b = sorted[upper] as number;
  return a + (b - a) * (position - lower);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function summarize(values: readonly number[]): LatencySummary {
  return {
    n: values.length,
    p50: round(quantile(values, 0.5)),
    p95: round(quantile(values, 0.95)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    mean: round(values.reduce((sum, v) => sum + v, 0) / values.length),
  };
}

/** Rounds to `digits` decimals (1 by default): enough for milliseconds and documents per second. */
export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Times one async call. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}
