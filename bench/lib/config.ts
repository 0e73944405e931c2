/**
 * The benchmark's knobs, read once from the environment. Defaults give the full run (about three to
 * four minutes on the 2-core machine); BENCH_QUICK=1 gives a smoke run of well under a minute.
 */
import { MAX_ARCHIVE_LINES } from '../../lib/documents/bulk-request.ts';

export const PHASES = ['decompress', 'floor', 'service', 'naive', 'cli', 'lambda', 'freezing', 'limits', 'burst', 'bulk', 'bulk-lambda', 'bulk-crash', 'bulk-fairness', 'bulk-memory', 'neighbours', 'merge-loop', 'overload', 'cli-start', 'image'] as const;
export type Phase = (typeof PHASES)[number];

export interface BenchConfig {
  readonly quick: boolean;
  /** Phases to run (BENCH_PHASES=floor,service,...); ratios needing a skipped phase show n/a. */
  readonly phases: ReadonlySet<Phase>;
  /** Measured runs per document for single-document latency (floor and service). */
  readonly runs: number;
  /** Unmeasured runs per document before those. */
  readonly warmup: number;
  /** Invoices rendered per concurrency level when looking for the floor's best throughput. */
  readonly floorDocs: number;
  /** Passes over each concurrency level; the best pass counts (the floor is the best this Chromium can do). */
  readonly floorRepeats: number;
  /** Concurrency levels tried for the floor: 1..maxConcurrency pages in parallel. */
  readonly maxConcurrency: number;
  /** Documents in one batch request (the API's maximum is 100). */
  readonly batchSize: number;
  /** Measured batch requests; best and median are reported. */
  readonly batchRepeats: number;
  /** Invoices rendered by the launch-a-browser-per-document approach. */
  readonly naiveDocs: number;
  /** Measured runs per CLI tool (after one warm-up). */
  readonly cliRuns: number;
  /** Phase cli-start: runs of the installed `pdfapi --version` per Node (BENCH_CLI_START_RUNS). */
  readonly cliStartRuns: number;
  /** Interval of the process-tree RSS sampler. */
  readonly rssIntervalMs: number;
  /** Longest wait, before each phase, for other work on the machine to calm down (0: only measure it). */
  readonly waitQuietSeconds: number;
  /** Lines of the bulk job the bulk-lambda phase runs at each account concurrency. */
  readonly bulkLambdaLines: number;
  /** Lines of the bulk job the bulk-crash phase kills the whole stack under, three times. */
  readonly bulkCrashLines: number;
  /** Lines of the bulk-fairness phase's large job (one key) and of its small job (another key, sent right after). */
  readonly bulkFairnessLines: number;
  readonly bulkFairnessSmallLines: number;
  /** The bulk-memory phase: its job's lines, and its warm-up job's. */
  readonly bulkMemoryLines: number;
  readonly bulkMemoryWarmupLines: number;
  /** The neighbours phase: the neighbour's sequential generates per window, and the hostile key's requests in flight. */
  readonly neighboursRequests: number;
  readonly neighboursHostileLanes: number;
  /** The overload phase: generates sent at once by one key, and one client's back-to-back generates before and after. */
  readonly overloadRequests: number;
  readonly overloadBackToBack: number;
}

function int(name: string, fallback: number, { min = 1, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function phases(): ReadonlySet<Phase> {
  const raw = process.env.BENCH_PHASES;
  if (!raw) return new Set(PHASES);
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(PHASES as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`BENCH_PHASES: unknown phase(s) ${unknown.join(', ')}; known: ${PHASES.join(', ')}`);
  return new Set(names as Phase[]);
}

export function readConfig(): BenchConfig {
  const quick = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true';
  return {
    quick,
    phases: phases(),
    runs: int('BENCH_RUNS', quick ? 8 : 30),
    warmup: int('BENCH_WARMUP', quick ? 2 : 3, { min: 0 }),
    floorDocs: int('BENCH_FLOOR_DOCS', quick ? 24 : 60),
    floorRepeats: int('BENCH_FLOOR_REPEATS', quick ? 1 : 2),
    maxConcurrency: int('BENCH_MAX_CONCURRENCY', quick ? 4 : 8, { max: 32 }),
    batchSize: int('BENCH_BATCH_SIZE', 100, { max: 100 }),
    batchRepeats: int('BENCH_BATCH_REPEATS', quick ? 1 : 5),
    naiveDocs: int('BENCH_NAIVE_DOCS', quick ? 4 : 10),
    cliRuns: int('BENCH_CLI_RUNS', quick ? 2 : 5),
    cliStartRuns: int('BENCH_CLI_START_RUNS', quick ? 10 : 30),
    rssIntervalMs: int('BENCH_RSS_INTERVAL_MS', 100, { min: 10 }),
    waitQuietSeconds: int('BENCH_WAIT_QUIET_S', 0, { min: 0 }),
    // The job asks for the archive, which larger jobs may not.
    bulkLambdaLines: int('BENCH_BULK_LAMBDA_LINES', quick ? 100 : 2_000, { max: MAX_ARCHIVE_LINES }),
    // Kills at 25, 50 and 75 % with a chunk (10 lines) done between them want 40 lines at least.
    bulkCrashLines: int('BENCH_BULK_CRASH_LINES', quick ? 100 : 2_000, { min: 40, max: MAX_ARCHIVE_LINES }),
    // A large job of few chunks (10 lines each) is done in a few rounds of the bulk workers, too few
    // for the small job, which waits a chunk's time for a worker and then shares the renderers, to
    // end long before it: 200 lines at least.
    bulkFairnessLines: int('BENCH_BULK_FAIRNESS_LINES', quick ? 200 : 2_000, { min: 200, max: MAX_ARCHIVE_LINES }),
    bulkFairnessSmallLines: int('BENCH_BULK_FAIRNESS_SMALL_LINES', quick ? 10 : 20, { max: MAX_ARCHIVE_LINES }),
    bulkMemoryLines: int('BENCH_BULK_MEMORY_LINES', quick ? 500 : 5_000, { max: MAX_ARCHIVE_LINES }),
    bulkMemoryWarmupLines: int('BENCH_BULK_MEMORY_WARMUP_LINES', quick ? 20 : 100, { max: MAX_ARCHIVE_LINES }),
    neighboursRequests: int('BENCH_NEIGHBOURS_REQUESTS', quick ? 10 : 30, { min: 2 }),
    // Each hostile request holds its worker 5 s and the key gets one worker of two on two cores, so
    // 4 in flight wait at most 15 s for it, inside the pool's 20 s wait: all should end 422.
    neighboursHostileLanes: int('BENCH_NEIGHBOURS_HOSTILE_LANES', 4),
    overloadRequests: int('BENCH_OVERLOAD_REQUESTS', 400),
    overloadBackToBack: int('BENCH_OVERLOAD_BACK_TO_BACK', quick ? 10 : 30, { min: 2 }),
  };
}

/** The knobs themselves, for the results file. */
export const KNOB_NAMES = [
  'BENCH_QUICK',
  'BENCH_PHASES',
  'BENCH_RUNS',
  'BENCH_WARMUP',
  'BENCH_FLOOR_DOCS',
  'BENCH_FLOOR_REPEATS',
  'BENCH_MAX_CONCURRENCY',
  'BENCH_BATCH_SIZE',
  'BENCH_BATCH_REPEATS',
  'BENCH_NAIVE_DOCS',
  'BENCH_CLI_RUNS',
  'BENCH_CLI_START_RUNS',
  'BENCH_RSS_INTERVAL_MS',
  'BENCH_WAIT_QUIET_S',
  'BENCH_LAMBDA_CDK_OUT',
  'BENCH_BULK_SIZES',
  'BENCH_BULK_LAMBDA_LINES',
  'BENCH_BULK_CRASH_LINES',
  'BENCH_BULK_FAIRNESS_LINES',
  'BENCH_BULK_FAIRNESS_SMALL_LINES',
  'BENCH_BULK_MEMORY_LINES',
  'BENCH_BULK_MEMORY_WARMUP_LINES',
  'BENCH_NEIGHBOURS_REQUESTS',
  'BENCH_NEIGHBOURS_HOSTILE_LANES',
  'BENCH_OVERLOAD_REQUESTS',
  'BENCH_OVERLOAD_BACK_TO_BACK',
  'BENCH_STACK_NODE_ARGS',
] as const;
