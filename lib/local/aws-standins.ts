/**
 * Real local implementations of the AWS APIs the service uses: dynalite speaks DynamoDB's API,
 * s3rver speaks S3's, lib/local/sqs-standin.ts speaks SQS's. All three persist under the data directory and listen on free loopback ports, in
 * a child process of this one (lib/local/standins-process.ts), apart from the service as AWS's are.
 *
 * The process is supervised: if it exits or fails, it is started again on the same data directories
 * and the same ports, so the AWS SDK endpoints the stack set in the environment stay valid. While
 * it is down, requests to the stores fail (and /health answers 503). If it cannot be brought back
 * (a port taken by another process, a start that keeps failing, a crash loop), `onLost` is called:
 * the local stack then stops, loudly, rather than serve on half-dead.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { componentLogger, errorFields } from '#lib/observability/logger.ts';
import type { StandInsMessage, StandInsSettings } from './standins-process.ts';

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
  /** The process running them now, if any (killing it is what a crash of the stand-ins looks like). */
  readonly process: ChildProcess | undefined;
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
 * The stand-ins' old generation, at most. V8 sizes a busy heap lazily: serving a bulk job of 1,500
 * lines it grew from 60 to 200 MB, mostly garbage (after its collections 20 to 35 MB were live;
 * capped at 64 MB the same job ran through). Well above what the stand-ins hold at once: they
 * stream objects to and from disk, and DynamoDB requests and answers are at most a few MB.
 */
const STANDINS_HEAP_MB = 96;
const STANDINS_FILE = fileURLToPath(new URL('./standins-process.ts', import.meta.url));

/** Starts the stand-ins' process and resolves once the three listen; rejects if it fails or exits first. */
function startProcess(data: StandInsSettings): Promise<{ child: ChildProcess; endpoints: { dynamodbEndpoint: string; s3Endpoint: string; sqsEndpoint: string } }> {
  // Its own Node flags only (not the caller's: a profiler's or a test runner's are for the service).
  const child = fork(STANDINS_FILE, [JSON.stringify(data)], { execArgv: [`--max-old-space-size=${STANDINS_HEAP_MB}`], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    const onMessage = (message: StandInsMessage) => {
      if (message.type === 'failed') failure = new Error(message.message);
      if (message.type !== 'ready') return;
      settle();
      resolve({ child, endpoints: { dynamodbEndpoint: message.dynamodbEndpoint, s3Endpoint: message.s3Endpoint, sqsEndpoint: message.sqsEndpoint } });
    };
    const onError = (error: Error) => (failure = error);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      settle();
      reject(failure ?? new Error(`The stand-ins' process exited with ${signal ?? `code ${code}`} while starting`));
    };
    const settle = () => {
      child.off('message', onMessage).off('error', onError).off('exit', onExit);
    };
    child.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

export async function startStandIns(directories: Directories, options: StandInsOptions = {}): Promise<StandIns> {
  const first = await startProcess({
    dynamoDirectory: directories.dynamo,
    s3Directory: directories.s3,
    sqsDirectory: directories.sqs,
    dynamoPort: 0,
    s3Port: 0,
    sqsPort: 0,
  });
  const { dynamodbEndpoint, s3Endpoint, sqsEndpoint } = first.endpoints;
  // Restarts reuse these ports: the SDK clients and stack.json already point at them.
  const data: StandInsSettings = {
    dynamoDirectory: directories.dynamo,
    s3Directory: directories.s3,
    sqsDirectory: directories.sqs,
    dynamoPort: portOf(dynamodbEndpoint),
    s3Port: portOf(s3Endpoint),
    sqsPort: portOf(sqsEndpoint),
  };
  let child: ChildProcess | undefined;
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
        const started = await startProcess(data);
        if (closing) return void started.child.kill('SIGKILL');
        supervise(started.child);
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

  function supervise(current: ChildProcess): void {
    child = current;
    let failure: Error | undefined;
    current.on('error', (error) => (failure = error));
    current.once('exit', (code, signal) => {
      child = undefined;
      if (closing) return;
      state = 'restarting';
      const cause = failure ?? new Error(`The stand-ins' process exited with ${signal ?? `code ${code}`}`);
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
  supervise(first.child);

  return {
    dynamodbEndpoint,
    s3Endpoint,
    sqsEndpoint,
    get state() {
      return state;
    },
    get process() {
      return child;
    },
    async close() {
      if (closing) return;
      closing = true;
      stopWaiting.abort();
      const current = child;
      if (!current) return;
      const exited = new Promise<void>((resolve) => (current.exitCode !== null || current.signalCode !== null ? resolve() : current.once('exit', () => resolve())));
      const closed = new Promise<void>((resolve) => {
        current.on('message', (message: StandInsMessage) => message.type === 'closed' && resolve());
        void exited.then(resolve);
      });
      if (current.connected) current.send('close');
      await closed;
      current.kill('SIGKILL');
      await exited;
    },
  };
}
