/**
 * What GET /health checks, each with one cheap call under a short timeout, all at once:
 *
 * - `table`: a GetItem of one fixed key that is never written (`HEALTH_PROBE_KEY`);
 * - `bucket`: a listing of one prefix that never holds objects (`HEALTH_PROBE_PREFIX`), at most 1 key;
 * - `browser`: only where this process owns the browser. Locally the whole stack is one process and
 *   registers its browser here (lib/local/stack.ts). In AWS the health function has no browser:
 *   each Chromium function (generate, render) has its own, checked before every document and
 *   relaunched when dead, so this endpoint answers `not_checked` for it.
 *
 * The CDK stack grants the health function exactly these two calls on exactly these keys (the IAM
 * conditions read the same constants), so it can read nothing a customer stored.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { eventLoopDelay, type EventLoopDelay } from './event-loop.ts';
import { errorFields, logger } from './logger.ts';

/** Longest one check may take before it counts as down. */
export const HEALTH_CHECK_TIMEOUT_MS = 2_000;
/** `Retry-After` of a 503 from /health. */
export const HEALTH_RETRY_AFTER_SECONDS = 5;
/** The table item the table check reads. Nothing writes it; the health function may read no other. */
export const HEALTH_PROBE_KEY = { pk: 'HEALTH#probe', sk: 'HEALTH' } as const;
/** The bucket prefix the bucket check lists. Nothing is stored under it; the health function may list no other. */
export const HEALTH_PROBE_PREFIX = 'health/';

export type HealthCheckName = 'browser' | 'table' | 'bucket';
export type CheckStatus = 'ok' | 'down' | 'not_checked';
/** One check: resolves if the dependency answered, rejects (or outlives the timeout) if not. */
export type HealthCheck = (signal: AbortSignal) => Promise<unknown>;

/**
 * How busy this process's renderer is, where it renders for everyone (the local stack): every slot
 * taken with documents waiting is `saturated`. The service is up then (200), but new documents
 * wait their key's turn or are refused with 503 `service_busy`. In AWS each function instance
 * renders one document at a time and Lambda adds instances, so /health has no such figure.
 */
export interface RenderingReport {
  readonly status: 'available' | 'saturated';
  readonly slots: number;
  readonly running: number;
  readonly waiting: number;
}

export interface HealthReport {
  readonly status: 'ok' | 'unavailable';
  readonly checks: Readonly<Record<HealthCheckName, CheckStatus>>;
  readonly rendering?: RenderingReport;
  /** This process's event loop lately (lib/observability/event-loop.ts): what every request it serves waits for. */
  readonly event_loop: { readonly delay_p99_ms: number; readonly delay_max_ms: number };
}

let renderingState: (() => { slots: number; running: number; waiting: number }) | undefined;

/** Makes /health in this process report how busy its renderer is (the local stack). */
export function registerRenderingState(state: () => { slots: number; running: number; waiting: number }): () => void {
  renderingState = state;
  return () => {
    if (renderingState === state) renderingState = undefined;
  };
}

function renderingReport(): RenderingReport | undefined {
  if (!renderingState) return undefined;
  const { slots, running, waiting } = renderingState();
  return { status: running >= slots && waiting > 0 ? 'saturated' : 'available', slots, running, waiting };
}

const CHECK_NAMES: readonly HealthCheckName[] = ['browser', 'table', 'bucket'];

/** Checks of what this process owns besides the stores (the local stack's browser). */
const processChecks = new Map<HealthCheckName, HealthCheck>();

/** Makes /health in this process check `name` too (the local stack, which owns its browser). */
export function registerHealthCheck(name: HealthCheckName, check: HealthCheck): () => void {
  processChecks.set(name, check);
  return () => {
    if (processChecks.get(name) === check) processChecks.delete(name);
  };
}

export const tableCheck =
  (client: DynamoDBDocumentClient, tableName: string): HealthCheck =>
  (signal) =>
    client.send(new GetCommand({ TableName: tableName, Key: HEALTH_PROBE_KEY }), { abortSignal: signal });

export const bucketCheck =
  (client: S3Client, bucketName: string): HealthCheck =>
  (signal) =>
    client.send(new ListObjectsV2Command({ Bucket: bucketName, Prefix: HEALTH_PROBE_PREFIX, MaxKeys: 1 }), { abortSignal: signal });

async function run(name: HealthCheckName, check: HealthCheck, timeoutMs: number): Promise<CheckStatus> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    // Decided after the event loop has read what arrived meanwhile: a process that was itself busy
    // past the deadline does not take its own late timer for a silent dependency.
    timer = setTimeout(
      () =>
        setImmediate(() => {
          const error = new Error(`no answer within ${timeoutMs} ms`);
          error.name = 'HealthCheckTimeout';
          controller.abort(error);
          reject(error);
        }),
      timeoutMs,
    );
  });
  try {
    await Promise.race([check(controller.signal), timedOut]);
    return 'ok';
  } catch (error) {
    // The cause goes to the log only: /health is public and says no more than "down".
    logger.warn('health check failed', { check: name, ...errorFields(error) });
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the given checks and this process's registered ones in parallel; a check not given is `not_checked`. */
export async function checkHealth(
  checks: Partial<Record<HealthCheckName, HealthCheck>>,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<HealthReport> {
  const all = { ...checks, ...Object.fromEntries(processChecks) };
  const results = await Promise.all(
    CHECK_NAMES.map(async (name) => [name, all[name] ? await run(name, all[name], timeoutMs) : 'not_checked'] as const),
  );
  const statuses = Object.fromEntries(results) as Record<HealthCheckName, CheckStatus>;
  const rendering = renderingReport();
  const delay: EventLoopDelay = eventLoopDelay();
  return {
    status: results.some(([, status]) => status === 'down') ? 'unavailable' : 'ok',
    checks: statuses,
    ...(rendering && { rendering }),
    event_loop: { delay_p99_ms: delay.p99Ms, delay_max_ms: delay.maxMs },
  };
}
