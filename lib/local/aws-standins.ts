/**
 * Real local implementations of the AWS APIs the service uses: dynalite speaks DynamoDB's API,
 * s3rver speaks S3's, lib/local/sqs-standin.ts speaks SQS's. All three persist under the data directory and listen on free loopback ports, on
 * a worker thread of this process (lib/local/standins-worker.ts).
 *
 * The thread is supervised: if it exits or fails, it is started again on the same data directories
 * and the same ports, so the AWS SDK endpoints the stack set in the environment stay valid. While
 * it is down, requests to the stores fail (and /health answers 503). If it cannot be brought back
 * (a port taken by another process, a start that keeps failing, a crash loop), `onLost` is called:
 * the local stack then stops, loudly, rather than serve on half-dead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { componentLogger, errorFields } from '#lib/observability/logger.ts';
import type { StandInsWorkerData, StandInsWorkerMessage } from './standins-worker.ts';

/** Waits before each attempt to start the stand-ins again after they stopped (about 18 s in all). */
export const STANDINS_RESTART_DELAYS_MS: readonly number[] = [100, 250, 500, 1_000, 2_000, 4_000, 5_000, 5_000];
/** More crashes than this within `STANDINS_CRASH_WINDOW_MS` is a crash loop: the stand-ins are given up. */
export const STANDINS_MAX_CRASHES = 5;
export const STANDINS_CRASH_WINDOW_MS = 60_000;

export type StandInsState = 'up' | 'restarting' | 'lost';

export interface StandIns {
  readonly dynamodbEndpoint: string;
  readonly s3Endpoint: string;
  readonly sqsEndpoint: string;
  /** `restarting` from a crash until they answer again; `lost` once given up. */
  readonly state: StandInsState;
  /** The thread running them now, if any (terminating it is what a crash of the thread looks like). */
  readonly worker: Worker | undefined;
  close(): Promise<void>;
}

export interface StandInsOptions {
  /** Called once if the stand-ins stopped and could not be started again; they stay down. */
  readonly onLost?: (error: Error) => void;
}

interface Directories {
  readonly dynamo: string;
  readonly s3: string;
  readonly sqs: string;
}

const portOf = (endpoint: string) => Number(new URL(endpoint).port);
const logger = componentLogger('aws-standins');

/**
 * The stand-ins thread's old generation, at most. V8 sizes a busy thread's heap lazily: serving a
 * bulk job of 1,500 lines it grew from 60 to 200 MB, mostly garbage (after its collections 20 to
 * 35 MB were live; capped at 64 MB the same job ran through), so the stack's memory grew with the
 * job for no use. Well above what the stand-ins hold at once: they stream objects to and from disk,
 * and DynamoDB requests and answers are at most a few MB.
 */
const STANDINS_HEAP_MB = 96;

/** Starts a worker and resolves once both stand-ins listen; rejects if the thread fails or exits first. */
function startWorker(data: StandInsWorkerData): Promise<{ worker: Worker; endpoints: { dynamodbEndpoint: string; s3Endpoint: string; sqsEndpoint: string } }> {
  const worker = new Worker(new URL('./standins-worker.ts', import.meta.url), { workerData: data, resourceLimits: { maxOldGenerationSizeMb: STANDINS_HEAP_MB } });
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    const onMessage = (message: StandInsWorkerMessage) => {
      if (message.type !== 'ready') return;
      settle();
      resolve({ worker, endpoints: { dynamodbEndpoint: message.dynamodbEndpoint, s3Endpoint: message.s3Endpoint, sqsEndpoint: message.sqsEndpoint } });
    };
    const onError = (error: Error) => (failure = error);
    const onExit = (code: number) => {
      settle();
      reject(failure ?? new Error(`The stand-ins' thread exited with code ${code} while starting`));
    };
    const settle = () => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

export async function startStandIns(directories: Directories, options: StandInsOptions = {}): Promise<StandIns> {
  const first = await startWorker({
    dynamoDirectory: directories.dynamo,
    s3Directory: directories.s3,
    sqsDirectory: directories.sqs,
    dynamoPort: 0,
    s3Port: 0,
    sqsPort: 0,
  });
  const { dynamodbEndpoint, s3Endpoint, sqsEndpoint } = first.endpoints;
  // Restarts reuse these ports: the SDK clients and stack.json already point at them.
  const data: StandInsWorkerData = {
    dynamoDirectory: directories.dynamo,
    s3Directory: directories.s3,
    sqsDirectory: directories.sqs,
    dynamoPort: portOf(dynamodbEndpoint),
    s3Port: portOf(s3Endpoint),
    sqsPort: portOf(sqsEndpoint),
  };
  let worker: Worker | undefined;
  let state: StandInsState = 'up';
  let closing = false;
  const stopWaiting = new AbortController();
  const crashes: number[] = [];

  const lose = (error: Error) => {
    state = 'lost';
    logger.critical('AWS stand-ins (dynalite, s3rver) are down and could not be restarted', {
      dynamodb_port: data.dynamoPort,
      s3_port: data.s3Port,
      ...errorFields(error),
    });
    options.onLost?.(error);
  };

  const restart = async (cause: Error) => {
    for (const delay of STANDINS_RESTART_DELAYS_MS) {
      await sleep(delay, undefined, { signal: stopWaiting.signal }).catch(() => undefined);
      if (closing) return;
      try {
        const started = await startWorker(data);
        if (closing) return void (await started.worker.terminate());
        supervise(started.worker);
        state = 'up';
        logger.info('AWS stand-ins restarted on the same ports', { dynamodb_port: data.dynamoPort, s3_port: data.s3Port });
        return;
      } catch (error) {
        cause = error instanceof Error ? error : new Error(String(error));
        logger.error('AWS stand-ins could not be restarted yet', errorFields(cause));
      }
    }
    lose(cause);
  };

  function supervise(current: Worker): void {
    worker = current;
    let failure: Error | undefined;
    current.on('error', (error) => (failure = error));
    current.once('exit', (code) => {
      worker = undefined;
      if (closing) return;
      state = 'restarting';
      const cause = failure ?? new Error(`The stand-ins' thread exited with code ${code}`);
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && crashes[0]! < now - STANDINS_CRASH_WINDOW_MS) crashes.shift();
      if (crashes.length > STANDINS_MAX_CRASHES) return lose(new Error(`${crashes.length} crashes within ${STANDINS_CRASH_WINDOW_MS / 1000} s`, { cause }));
      logger.error('AWS stand-ins (dynalite, s3rver) stopped; restarting them on the same ports', {
        dynamodb_port: data.dynamoPort,
        s3_port: data.s3Port,
        ...errorFields(cause),
      });
      void restart(cause);
    });
  }
  supervise(first.worker);

  return {
    dynamodbEndpoint,
    s3Endpoint,
    sqsEndpoint,
    get state() {
      return state;
    },
    get worker() {
      return worker;
    },
    async close() {
      if (closing) return;
      closing = true;
      stopWaiting.abort();
      const current = worker;
      if (!current) return;
      const closed = new Promise<void>((resolve) => {
        current.on('message', (message: StandInsWorkerMessage) => message.type === 'closed' && resolve());
        current.once('exit', () => resolve());
      });
      current.postMessage('close');
      await closed;
      await current.terminate();
    },
  };
}
