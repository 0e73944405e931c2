/**
 * One Lambda execution environment: a Node process running AWS's runtime interface client
 * (aws-lambda-ric, with its native HTTP client) against a Runtime API served here, in a sandbox
 * made as Lambda makes one:
 *
 * - the function's asset, unzipped, is the task root, mounted read-only;
 * - its layer is mounted read-only at a root of its own, reached only through NODE_PATH (and the
 *   ES-module resolution over it that Lambda's Node runtimes give, node-path-hooks.mjs);
 * - `/tmp` is a fresh tmpfs of the function's ephemeral storage size, and the rest of the file
 *   system is not writable by the function: it runs as Lambda's non-root uid when started as root;
 * - the environment is Lambda's own variables plus the function's, nothing inherited.
 *
 * The sandbox is a private mount namespace (`unshare`, as root or in a user namespace). Where
 * neither is allowed, the closest honest emulation runs instead (same process layout, no
 * read-only mounts, no private /tmp, the caller's uid) and `isolation` says so.
 *
 * Between invocations the environment is frozen, as Lambda freezes one: from the moment the runtime,
 * its answer posted to the Runtime API, asks for its next event (the Next request that ends Lambda's
 * invoke phase) until it is handed that event, every process it started (Chromium's included, which
 * puts itself in a process group of its own) is stopped with SIGSTOP, so work left running at the
 * answer resumes only inside the next invocation. Freezing at the answer itself would stop the
 * runtime between its answer and its Next request, which Lambda never does: the runtime client's
 * connection timers (curl's, a second to connect) would run across the freeze.
 *
 * Lambda's Extensions API is served beside the Runtime API, as Lambda serves it at the same
 * AWS_LAMBDA_RUNTIME_API: an extension registers during init (`POST /2020-01-01/extension/register`,
 * its name in `Lambda-Extension-Name`, the events it wants, INVOKE and SHUTDOWN, in the body) and is
 * answered its `Lambda-Extension-Identifier`; `GET /2020-01-01/extension/event/next` with that
 * identifier long-polls for its next event. Init ends once the runtime and every extension have asked
 * for their next event; each INVOKE event is handed to the runtime and to every extension registered
 * for it at once; and the environment freezes only when the runtime has posted its answer and asked
 * again *and* every extension has asked again. The time from the runtime's answer to the last
 * extension's request is reported as the invocation's post-runtime extension time
 * (PostRuntimeExtensionsDuration), part of its Duration and billed; the caller has the answer at
 * the runtime's answer. Registered from the runtime's own process, an extension is an internal one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { keepIdleConnections } from '#lib/local/invoke.ts';

/** What Lambda knows of a function: from the synthesized template. */
export interface FunctionSpec {
  /** Its name as the Invoke API knows it. */
  readonly name: string;
  /** `<file>.<export>`, relative to the task root. */
  readonly handler: string;
  /** The unzipped asset. */
  readonly codeDir: string;
  /** Its layer's unzipped asset, if it has one. */
  readonly layerDir?: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly ephemeralMb: number;
  /** The function's own variables (the template's, resolved). */
  readonly variables: Readonly<Record<string, string>>;
}

export type InvokeOutcome =
  | { readonly ok: true; readonly payload: unknown }
  | { readonly ok: false; readonly errorType: string; readonly errorMessage: string };

export interface Invocation {
  readonly outcome: InvokeOutcome;
  /** From the invocation's start (the environment thawed, its event ready for the runtime) to the function's answer: the runtime's part of the duration. */
  readonly durationMs: number;
  /**
   * Lambda's report of the invocation (its REPORT line), once every extension has asked for its next
   * event after the answer; answered at once for an invocation that ended without one (a timeout, a crash).
   */
  readonly report: Promise<InvocationReport>;
}

/** What Lambda reports of an invocation. */
export interface InvocationReport {
  /** The runtime's part: start to answer. */
  readonly runtimeDurationMs: number;
  /** The runtime's answer to the last extension's Next request (PostRuntimeExtensionsDuration). */
  readonly postRuntimeExtensionsDurationMs: number;
  /** Lambda's Duration: both. */
  readonly durationMs: number;
  /** Lambda's Billed Duration: the duration rounded up to the millisecond. */
  readonly billedDurationMs: number;
}

/** A step of an environment's life, in the order it happened (a test asserts the order). */
export type LifecycleStep =
  | { readonly step: 'extension-registered'; readonly extension: string }
  | { readonly step: 'init-done' }
  | { readonly step: 'invoke'; readonly requestId: string }
  | { readonly step: 'runtime-answered'; readonly requestId: string }
  | { readonly step: 'runtime-next' }
  | { readonly step: 'extension-next'; readonly extension: string }
  | { readonly step: 'frozen' }
  | { readonly step: 'thawed' };

/** An extension registered with the environment's Extensions API. */
interface Extension {
  readonly id: string;
  readonly name: string;
  readonly events: ReadonlySet<string>;
  /** Its Next request, held until its next event. */
  waiting?: ServerResponse;
  /** Events handed out while it was not asking. */
  readonly queued: object[];
  /** Whether it has asked for its next event since the last one it was handed. */
  asked: boolean;
}

/** The events an extension may register for. */
const EXTENSION_EVENTS = new Set(['INVOKE', 'SHUTDOWN']);
/** Steps of an environment's life kept (the latest). */
const LIFECYCLE_KEPT = 200;

export interface EnvironmentOptions {
  /** The directory environments mount their function into (makeStage). */
  readonly stage: string;
  /** CPUs the environment is pinned to (`taskset -c`). */
  readonly cpus?: string;
  /** Whether it is frozen between invocations, as Lambda freezes one (default true). */
  readonly freeze?: boolean;
}

/** How an environment is isolated on this machine. */
export type Isolation = 'mount-namespace' | 'mount-namespace-in-user-namespace' | 'none';

/** Lambda's user and group for function code (`sbx_user1051`). */
const LAMBDA_UID = 993;
const LAMBDA_GID = 990;
/**
 * Lambda's limit on an on-demand environment's init phase. An init that outlasts it is not an
 * error: Lambda runs the init again within the first invocation, under the function's timeout.
 * Here the init goes on instead of starting over (on these shared cores a second start would
 * only be slower), and its time past the limit is taken from the first invocation's timeout.
 */
const INIT_TIMEOUT_MS = 10_000;
/** Longest a freeze waits for every process to have acted on its SIGSTOP. */
const FREEZE_WAIT_MS = 2_000;
/** Process states (/proc/<pid>/stat) of a process not yet stopped: running, sleeping, in disk wait, idle. */
const RUNNING_STATES = new Set(['R', 'S', 'D', 'I', 'W', 'P']);
/** Quiet, for a tail (freezeAfterTail): under this share of one CPU, sampled this often, so many samples in a row; a tail ends by TAIL_MAX_MS at the latest. */
const QUIET_CPU_SHARE = 0.1;
const QUIET_POLL_MS = 10;
const QUIET_SAMPLES = 5;
const TAIL_MAX_MS = 5_000;
/** Node's major version as Lambda names its runtime and the layer paths. */
const NODE_MAJOR = process.versions.node.split('.')[0];
const RIC_DIR = join(import.meta.dirname, '..', '..', '..', 'node_modules', 'aws-lambda-ric');

let detected: Isolation | undefined;

/** The strongest sandbox this machine allows, probed once. */
export function isolationAvailable(): Isolation {
  if (detected) return detected;
  const root = process.getuid?.() === 0;
  const tries: [Isolation, string[]][] = [
    ...(root ? [['mount-namespace', ['--mount', '--fork']] as [Isolation, string[]]] : []),
    ['mount-namespace-in-user-namespace', ['--map-root-user', '--mount', '--fork']],
  ];
  for (const [isolation, flags] of tries) {
    const probe = spawnSync('unshare', [...flags, 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /tmp && echo ok'], { encoding: 'utf8' });
    if (probe.status === 0 && probe.stdout.trim() === 'ok') return (detected = isolation);
  }
  return (detected = 'none');
}

/**
 * The directory every environment of one emulator mounts its function into: `task`, `opt` and
 * `runtime` under it. Outside /tmp (each environment gets a /tmp of its own) and outside the
 * project (so nothing resolves from the project's node_modules).
 */
export function makeStage(root: string): string {
  for (const dir of ['task', 'opt', 'runtime']) mkdirSync(join(root, dir), { recursive: true, mode: 0o755 });
  // The runtime: AWS's runtime interface client with its native client, and the resolution hooks.
  for (const file of ['index.mjs', 'rapid-client.node']) copyFileSync(join(RIC_DIR, file), join(root, 'runtime', file));
  copyFileSync(join(import.meta.dirname, 'node-path-hooks.mjs'), join(root, 'runtime', 'node-path-hooks.mjs'));
  // Lambda's function user exists in its /etc/passwd (the SDK reads the home directory of the
  // user it runs as): the machine's accounts and that one, mounted over /etc/passwd in the sandbox.
  const passwd = readFileSync('/etc/passwd', 'utf8').trimEnd();
  writeFileSync(join(root, 'passwd'), `${passwd}\nsbx_user1051:x:${LAMBDA_UID}:${LAMBDA_GID}::/home/sbx_user1051:/sbin/nologin\n`, { mode: 0o644 });
  return root;
}

interface Layout {
  readonly task: string;
  readonly opt: string;
  readonly runtime: string;
}

/** Lambda's environment for a function laid out at `layout` whose Runtime API is at `runtimeApi`. */
function lambdaVariables(spec: FunctionSpec, { task, opt, runtime }: Layout, runtimeApi: string): Record<string, string> {
  return {
    ...spec.variables,
    AWS_LAMBDA_FUNCTION_NAME: spec.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${spec.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `emulated/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_RUNTIME_API: runtimeApi,
    AWS_EXECUTION_ENV: `AWS_Lambda_nodejs${NODE_MAJOR}.x`,
    LAMBDA_TASK_ROOT: task,
    LAMBDA_RUNTIME_DIR: runtime,
    _HANDLER: spec.handler,
    NODE_PATH: [`${opt}/nodejs/node${NODE_MAJOR}/node_modules`, `${opt}/nodejs/node_modules`, `${runtime}/node_modules`, runtime, task].join(':'),
    PATH: `/usr/local/bin:/usr/bin/:/bin:${opt}/bin`,
    LD_LIBRARY_PATH: `/lib64:/usr/lib64:${runtime}:${runtime}/lib:${task}:${task}/lib:${opt}/lib`,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
  };
}

/**
 * The shell that builds the sandbox in its new namespace, then becomes the runtime: its arguments
 * are the stage, the code, the layer, the ephemeral size, whether to drop to Lambda's uid, and
 * then the runtime's command line.
 */
const SANDBOX_SCRIPT = `
set -e
stage="$1"; code="$2"; layer="$3"; ephemeral_mb="$4"; drop="$5"; shift 5
mount --make-rprivate /
mount --bind "$code" "$stage/task" && mount -o remount,bind,ro "$stage/task"
if [ -n "$layer" ]; then mount --bind "$layer" "$stage/opt" && mount -o remount,bind,ro "$stage/opt"; fi
mount --bind "$stage/runtime" "$stage/runtime" && mount -o remount,bind,ro "$stage/runtime"
mount -t tmpfs -o "size=\${ephemeral_mb}m,mode=1777" tmpfs /tmp
cd "$stage/task"
if [ "$drop" = yes ]; then
  mount --bind "$stage/passwd" /etc/passwd
  exec setpriv --reuid=${LAMBDA_UID} --regid=${LAMBDA_GID} --clear-groups "$@"
fi
exec "$@"
`;

interface Pending {
  readonly id: string;
  readonly event: unknown;
  readonly deadline: number;
  /** When the invocation started: the environment thawed, the event ready for the runtime. */
  readonly startedAt: number;
  sentAt?: number;
  readonly settle: (invocation: Invocation) => void;
}

/** An environment picked for an event whose runtime ended before it was handed the event. */
export class EnvironmentGoneError extends Error {
  constructor(functionName: string) {
    super(`the runtime of ${functionName} ended before it was handed its event`);
  }
}

/** One execution environment: started cold, then invoked one event at a time until it is stopped. */
export class LambdaEnvironment {
  readonly spec: FunctionSpec;
  /** Spawn to the runtime's first request for an event: Lambda's init duration. */
  initMs: number | undefined;
  /** The init's time past Lambda's limit, taken from the first invocation's timeout (INIT_TIMEOUT_MS). */
  private initOverrunMs = 0;
  busy = false;
  private readonly stage: string;
  private readonly cpus: string | undefined;
  /** Whether it is frozen at its next answer (a bench compares, switching it between invocations). */
  freezes: boolean;
  /** The processes stopped while the environment is frozen; empty while it runs. */
  private frozen: number[] = [];
  /**
   * Whether a freeze first waits for the work left running at the answer to end (the environment's
   * processes quiet), and records how long that took in `lastTailMs`: what a function that answers
   * first and finishes that work before its handler returns would be billed beyond its answer (the
   * bench weighs that against freezing at the answer). Off by default: Lambda freezes at the answer (once
   * the runtime asks for its next event, right after it).
   */
  freezeAfterTail = false;
  /**
   * Whether a freeze ignores the extensions (freezing once the runtime asks, their work left for the
   * next thaw): how the environment froze before Lambda's extensions were modelled, for the bench's
   * before-and-after in one run. Off by default: Lambda waits for every extension.
   */
  freezeIgnoringExtensions = false;
  /** Answer to quiet, at the last freeze that waited for it. */
  lastTailMs: number | undefined;
  /** The processes stopped at the last freeze. */
  private lastFrozen: number[] = [];
  /** The report of the last answered invocation, once its extensions have asked for their next event. */
  private postRuntime: Promise<InvocationReport> | undefined;
  /** The freeze under way, from the answer until every process has stopped. */
  private freezing: Promise<void> | undefined;
  /** Resolves the wait of a freeze for the runtime's Next request after its answer. */
  private askedForNext: (() => void) | undefined;
  /** Whether its runtime was waiting for its next event (its Next request held) when its last freeze began. */
  frozeWithRuntimeWaiting = false;
  /** Extensions registered during init, by identifier. */
  private readonly extensions = new Map<string, Extension>();
  /** Resolves the wait of a freeze for every extension's Next request after the answer. */
  private extensionsAsked: (() => void) | undefined;
  /** Whether the runtime has asked for its first event: registration is closed then. */
  private runtimeStarted = false;
  /** The last steps of its life, oldest first (LIFECYCLE_KEPT). */
  readonly lifecycle: LifecycleStep[] = [];
  private server!: Server;
  private child: ChildProcess | undefined;
  private waiting: ServerResponse | undefined;
  private pending: Pending | undefined;
  private spawnedAt = 0;
  private ready!: Promise<void>;
  private markReady!: () => void;
  private failInit!: (error: Error) => void;
  private stopped = false;
  /** What the function printed: its logs, for a test that fails. */
  readonly output: string[] = [];

  constructor(spec: FunctionSpec, options: EnvironmentOptions) {
    this.spec = spec;
    this.stage = options.stage;
    this.cpus = options.cpus;
    this.freezes = options.freeze ?? true;
  }

  /** Starts the environment (a cold start); resolves once its init is done. */
  async start(): Promise<void> {
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.failInit = reject;
    });
    // Lambda's Runtime API keeps the runtime's connections however long it is frozen (see keepIdleConnections).
    this.server = keepIdleConnections(createServer((request, response) => void this.onRuntimeRequest(request, response)));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const runtimeApi = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const isolation = isolationAvailable();
    const runtime = join(this.stage, 'runtime');
    const layout: Layout =
      isolation === 'none'
        ? { task: this.spec.codeDir, opt: this.spec.layerDir ?? join(this.stage, 'opt'), runtime }
        : { task: join(this.stage, 'task'), opt: join(this.stage, 'opt'), runtime };
    const env = lambdaVariables(this.spec, layout, runtimeApi);
    // AWS's runtime interface client, with the ES-module resolution over NODE_PATH.
    const runtimeCommand = [process.execPath, '--import', join(runtime, 'node-path-hooks.mjs'), join(runtime, 'index.mjs')];
    const drop = isolation === 'mount-namespace' ? 'yes' : 'no';
    const sandboxArgs = ['sh', '-c', SANDBOX_SCRIPT, 'sandbox', this.stage, this.spec.codeDir, this.spec.layerDir ?? '', String(this.spec.ephemeralMb), drop, ...runtimeCommand];
    const unshareFlags = ['--mount', '--fork', '--kill-child', ...(isolation === 'mount-namespace' ? [] : ['--map-root-user'])];
    // Without a namespace: the same runtime, from the asset's own directories.
    const command = isolation === 'none' ? runtimeCommand : ['unshare', ...unshareFlags, ...sandboxArgs];
    const pinned = this.cpus ? ['taskset', '-c', this.cpus, ...command] : command;
    this.spawnedAt = performance.now();
    // A process group of its own: stopping the environment kills the runtime under unshare too.
    const child = spawn(pinned[0]!, pinned.slice(1), { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...(isolation === 'none' && { cwd: this.spec.codeDir }) });
    this.child = child;
    child.stdout!.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => this.output.push(chunk.toString()));
    child.once('exit', (code, signal) => this.onExit(code, signal));
    const initLimitMs = INIT_TIMEOUT_MS + this.spec.timeoutSeconds * 1000;
    const initTimer = setTimeout(() => this.failInit(new Error(`init of ${this.spec.name} took over ${initLimitMs} ms:\n${this.output.join('')}`)), initLimitMs);
    try {
      await this.ready;
    } finally {
      clearTimeout(initTimer);
    }
  }

  /** Runs one event; a function that outlives its timeout is stopped, as Lambda stops it. */
  async invoke(event: unknown): Promise<Invocation> {
    if (this.busy || this.stopped) throw new Error(`environment of ${this.spec.name} is ${this.stopped ? 'stopped' : 'busy'}`);
    this.busy = true;
    // A freeze still under way (the previous answer was just sent) ends before the thaw.
    await this.freezing;
    // Its runtime ended meanwhile (before asking for its next event): the event was never its;
    // the pool runs it in another environment, as Lambda would.
    if (this.stopped) {
      this.busy = false;
      throw new EnvironmentGoneError(this.spec.name);
    }
    this.thaw();
    // At least a millisecond: an init that used up the whole timeout leaves the event none to run in.
    const timeoutMs = Math.max(1, this.spec.timeoutSeconds * 1000 - this.initOverrunMs);
    this.initOverrunMs = 0;
    return new Promise<Invocation>((resolve) => {
      const deadline = Date.now() + timeoutMs;
      const pending: Pending = {
        id: randomUUID(),
        event,
        deadline,
        startedAt: performance.now(),
        settle: (invocation) => {
          clearTimeout(timer);
          this.pending = undefined;
          this.busy = false;
          resolve(invocation);
        },
      };
      const timer = setTimeout(() => {
        pending.settle({ outcome: { ok: false, errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${this.spec.timeoutSeconds} seconds${pending.sentAt === undefined ? ' (the runtime never asked for the event)' : ''}` }, durationMs: timeoutMs, report: Promise.resolve(plainReport(timeoutMs)) });
        void this.stop();
      }, timeoutMs);
      this.pending = pending;
      this.handOut();
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.nextAsked();
    this.extensionsAsked?.();
    this.extensionsAsked = undefined;
    this.waiting?.destroy();
    this.waiting = undefined;
    for (const extension of this.extensions.values()) extension.waiting?.destroy();
    if (this.child?.pid !== undefined) {
      const exited = this.child.exitCode === null && this.child.signalCode === null ? new Promise((resolve) => this.child!.once('exit', resolve)) : undefined;
      // Its whole tree, frozen or not: Chromium has a process group of its own, and a stopped
      // browser would not notice its parent's end.
      const tree = await this.processIds();
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
      for (const pid of tree) signal(pid, 'SIGKILL');
      this.frozen = [];
      await exited;
    }
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Whether it is between an answer and its freeze (its extensions' post-runtime work, then the freeze itself). */
  get settling(): boolean {
    return this.freezing !== undefined;
  }

  /** Whether the environment is frozen now (between invocations). */
  get isFrozen(): boolean {
    return this.frozen.length > 0;
  }

  /** Resolves once a freeze under way (after an answer) has stopped every process. */
  async whenFrozen(): Promise<void> {
    await this.freezing;
  }

  /** Every process of the environment: the runtime's launcher and all its descendants. */
  async processIds(): Promise<number[]> {
    const root = this.child?.pid;
    return root === undefined ? [] : treeOf(root, await parents());
  }

  /**
   * Stops every process of the environment, parents before children (a stopped process forks no
   * more, so the walk ends with the whole tree stopped), and waits until each one has stopped: a
   * signal is acted on when its process is next scheduled, not when it is sent.
   */
  private async freeze(): Promise<void> {
    const root = this.child?.pid;
    if (!this.freezes || this.stopped || root === undefined || this.frozen.length > 0) return;
    this.frozeWithRuntimeWaiting = this.waiting !== undefined;
    // At once, the processes it had at its last freeze (most of them, a warm environment's tree
    // changes little); then the tree is walked again until no process is new: one forked between
    // a walk and its parent's stop is found by the next walk (its parent, stopped now, forks no more).
    const stopped = new Set<number>();
    if (signal(root, 'SIGSTOP')) stopped.add(root);
    // Parents first; one whose parent is not ours is not the process it was (its id was reused).
    for (const pid of this.lastFrozen) if (stopped.has(parentOf(pid) ?? -1) && signal(pid, 'SIGSTOP')) stopped.add(pid);
    this.frozen = [...stopped];
    for (let walk = 0; walk < 20; walk++) {
      const fresh = treeOf(root, await parents()).filter((pid) => !stopped.has(pid));
      if (fresh.length === 0) break;
      for (const pid of fresh) if (signal(pid, 'SIGSTOP')) stopped.add(pid);
      this.frozen = [...stopped];
    }
    this.lastFrozen = this.frozen;
    this.step({ step: 'frozen' });
    for (const waitUntil = performance.now() + FREEZE_WAIT_MS; performance.now() < waitUntil; ) {
      if (this.frozen.every((pid) => !RUNNING_STATES.has(processState(pid) ?? 'X'))) return;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /**
   * Waits until the environment's processes have used next to no CPU for QUIET_SAMPLES samples in a
   * row; answers the time from `since` to the last busy sample (at most TAIL_MAX_MS).
   */
  private async untilQuiet(since: number): Promise<number> {
    const sample = async () => ({ at: performance.now(), ns: (await this.processIds()).reduce((sum, pid) => sum + cpuTimeNs(pid), 0) });
    let last = await sample();
    let busyAt = since;
    for (let quiet = 0; quiet < QUIET_SAMPLES && performance.now() - since < TAIL_MAX_MS; ) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
      const now = await sample();
      if (now.ns - last.ns > (now.at - last.at) * 1e6 * QUIET_CPU_SHARE) {
        busyAt = now.at;
        quiet = 0;
      } else quiet++;
      last = now;
    }
    return Math.min(busyAt - since, TAIL_MAX_MS);
  }

  /** Resumes every process stopped by freeze(), before the environment is handed its next event. */
  private thaw(): void {
    if (this.frozen.length > 0) this.step({ step: 'thawed' });
    for (const pid of this.frozen) signal(pid, 'SIGCONT');
    this.frozen = [];
  }

  private handOut(): void {
    const pending = this.pending;
    const response = this.waiting;
    if (!pending || !response || pending.sentAt !== undefined) return;
    this.waiting = undefined;
    pending.sentAt = performance.now();
    this.step({ step: 'invoke', requestId: pending.id });
    const invokedFunctionArn = `arn:aws:lambda:us-east-1:000000000000:function:${this.spec.name}`;
    const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Sampled=0`;
    // Every extension registered for INVOKE gets the event as the runtime does, and must ask for its next one again before the freeze.
    for (const extension of this.extensions.values()) {
      if (!extension.events.has('INVOKE')) continue;
      extension.queued.push({ eventType: 'INVOKE', deadlineMs: pending.deadline, requestId: pending.id, invokedFunctionArn, tracing: { type: 'X-Amzn-Trace-Id', value: traceId } });
      extension.asked = false;
      this.handToExtension(extension);
    }
    response.writeHead(200, {
      'Content-Type': 'application/json',
      'Lambda-Runtime-Aws-Request-Id': pending.id,
      'Lambda-Runtime-Deadline-Ms': String(pending.deadline),
      'Lambda-Runtime-Invoked-Function-Arn': invokedFunctionArn,
      'Lambda-Runtime-Trace-Id': traceId,
    });
    response.end(JSON.stringify(pending.event));
  }

  private async onRuntimeRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '';
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (request.method === 'GET' && path === '/2018-06-01/runtime/invocation/next') {
      this.step({ step: 'runtime-next' });
      this.nextAsked();
      this.runtimeStarted = true;
      this.waiting = response;
      this.initDoneIfReady();
      this.handOut();
      return;
    }
    if (path.startsWith('/2020-01-01/extension/')) {
      this.onExtensionRequest(request, response, path, body);
      return;
    }
    const answered = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(path);
    if (request.method === 'POST' && answered) {
      response.writeHead(202).end('{"status":"OK"}');
      const pending = this.pending;
      if (!pending || pending.id !== decodeURIComponent(answered[1]!) || pending.sentAt === undefined) return;
      const durationMs = performance.now() - pending.startedAt;
      // The answer is sent: once the runtime and every extension ask for their next event, Lambda
      // freezes the environment until its next invocation. The caller has its answer meanwhile; the
      // next invocation waits for the freeze to end (whenFrozen).
      const answeredAt = performance.now();
      this.step({ step: 'runtime-answered', requestId: pending.id });
      this.frozeWithRuntimeWaiting = false;
      const tail = this.freezes && this.freezeAfterTail ? this.untilQuiet(answeredAt).then((ms) => void (this.lastTailMs = ms)) : Promise.resolve();
      // A runtime that never asks (hung after its answer) is frozen anyway once its timeout has
      // passed, so its next invocation is not held forever: it waits that long, then its own
      // timeout for the runtime (twice the timeout in all; a hung runtime is not worth more care).
      const askedForNext = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.spec.timeoutSeconds * 1000);
        this.askedForNext = () => (clearTimeout(timer), resolve());
      });
      // Extensions still at work after the answer hold the freeze (at most until the invocation's deadline, then
      // it freezes anyway, as for a hung runtime); that time is the invocation's post-runtime extension time.
      const extensionsAsked = this.freezeIgnoringExtensions || [...this.extensions.values()].every((extension) => extension.asked)
        ? Promise.resolve(answeredAt)
        : new Promise<number>((resolve) => {
            const timer = setTimeout(() => resolve(performance.now()), Math.max(0, pending.deadline - Date.now()));
            this.extensionsAsked = () => (clearTimeout(timer), resolve(performance.now()));
          });
      this.postRuntime = extensionsAsked.then((lastAskedAt) => {
        const postRuntimeExtensionsDurationMs = lastAskedAt - answeredAt;
        const total = durationMs + postRuntimeExtensionsDurationMs;
        return { runtimeDurationMs: durationMs, postRuntimeExtensionsDurationMs, durationMs: total, billedDurationMs: Math.ceil(total) };
      });
      const freezing = Promise.all([tail, askedForNext, extensionsAsked]).then(() => this.freeze()).finally(() => {
        if (this.freezing === freezing) this.freezing = undefined;
      });
      this.freezing = freezing;
      const report = this.postRuntime;
      if (answered[2] === 'response') {
        pending.settle({ outcome: { ok: true, payload: body ? JSON.parse(body) : null }, durationMs, report });
      } else {
        const error = JSON.parse(body || '{}') as { errorType?: string; errorMessage?: string };
        pending.settle({ outcome: { ok: false, errorType: error.errorType ?? 'Error', errorMessage: error.errorMessage ?? '' }, durationMs, report });
      }
      return;
    }
    if (request.method === 'POST' && path === '/2018-06-01/runtime/init/error') {
      response.writeHead(202).end('{"status":"OK"}');
      this.failInit(new Error(`init of ${this.spec.name} failed: ${body}\n${this.output.join('')}`));
      return;
    }
    response.writeHead(404).end();
  }

  /** Init is done once the runtime and every extension have asked for their next event (Lambda's init phase). */
  private initDoneIfReady(): void {
    if (this.initMs !== undefined || !this.runtimeStarted || [...this.extensions.values()].some((extension) => !extension.asked)) return;
    this.initMs = performance.now() - this.spawnedAt;
    this.initOverrunMs = Math.max(0, this.initMs - INIT_TIMEOUT_MS);
    this.step({ step: 'init-done' });
    this.markReady();
  }

  /** The Extensions API: register (during init only) and event/next. */
  private onExtensionRequest(request: IncomingMessage, response: ServerResponse, path: string, body: string): void {
    const refuse = (status: number, errorType: string, errorMessage: string): void =>
      void response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ errorMessage, errorType }));
    if (request.method === 'POST' && path === '/2020-01-01/extension/register') {
      const name = request.headers['lambda-extension-name'];
      if (typeof name !== 'string' || name === '') return refuse(400, 'InvalidRequest', 'Lambda-Extension-Name is required');
      // Lambda takes registrations during init only, before the runtime asks for its first event.
      if (this.runtimeStarted) return refuse(403, 'Extension.RegistrationClosed', 'extensions register during init');
      let events: unknown;
      try {
        events = (JSON.parse(body || '{}') as { events?: unknown }).events;
      } catch {
        return refuse(400, 'InvalidRequest', 'the body is not JSON');
      }
      if (!Array.isArray(events) || !events.every((event) => typeof event === 'string' && EXTENSION_EVENTS.has(event))) {
        return refuse(400, 'InvalidRequest', `events must be some of ${[...EXTENSION_EVENTS].join(', ')}`);
      }
      const extension: Extension = { id: randomUUID(), name, events: new Set(events as string[]), queued: [], asked: false };
      this.extensions.set(extension.id, extension);
      this.step({ step: 'extension-registered', extension: name });
      response.writeHead(200, { 'Content-Type': 'application/json', 'Lambda-Extension-Identifier': extension.id });
      response.end(JSON.stringify({ functionName: this.spec.name, functionVersion: '$LATEST', handler: this.spec.handler }));
      return;
    }
    if (request.method === 'GET' && path === '/2020-01-01/extension/event/next') {
      const extension = this.extensions.get(String(request.headers['lambda-extension-identifier'] ?? ''));
      if (!extension) return refuse(403, 'Extension.UnknownExtensionIdentifier', 'Lambda-Extension-Identifier is missing or unknown');
      extension.waiting = response;
      if (extension.queued.length > 0) return this.handToExtension(extension);
      extension.asked = true;
      this.step({ step: 'extension-next', extension: extension.name });
      this.initDoneIfReady();
      if ([...this.extensions.values()].every((each) => each.asked)) {
        this.extensionsAsked?.();
        this.extensionsAsked = undefined;
      }
      return;
    }
    response.writeHead(404).end();
  }

  /** Hands an extension its next queued event, on its held Next request. */
  private handToExtension(extension: Extension): void {
    const response = extension.waiting;
    const event = extension.queued.shift();
    if (!response || !event) return;
    extension.waiting = undefined;
    extension.asked = false;
    response.writeHead(200, { 'Content-Type': 'application/json', 'Lambda-Extension-Event-Identifier': randomUUID() });
    response.end(JSON.stringify(event));
  }

  private step(step: LifecycleStep): void {
    this.lifecycle.push(step);
    if (this.lifecycle.length > LIFECYCLE_KEPT) this.lifecycle.splice(0, this.lifecycle.length - LIFECYCLE_KEPT);
  }

  /** The runtime asked for its next event: a freeze waiting for that goes on (and one for a runtime gone, which freezes nothing). */
  private nextAsked(): void {
    this.askedForNext?.();
    this.askedForNext = undefined;
  }

  private onExit(code: number | null, signalName: NodeJS.Signals | null): void {
    const why = `the runtime of ${this.spec.name} exited (${signalName ?? `code ${code}`})`;
    // In its logs, where a failing test looks: an environment gone without being stopped.
    if (!this.stopped) this.output.push(`[emulator] ${why}\n`);
    this.nextAsked();
    this.extensionsAsked?.();
    this.extensionsAsked = undefined;
    this.failInit(new Error(`${why} before its init finished:\n${this.output.join('')}`));
    // Whether the runtime had asked for the event tells a crash in the handler from one on the way to it.
    const when = this.pending?.sentAt === undefined ? ', before it asked for the event' : ', while handling the event';
    this.pending?.settle({ outcome: { ok: false, errorType: 'Runtime.ExitError', errorMessage: why + when }, durationMs: 0, report: Promise.resolve(plainReport(0)) });
    if (!this.stopped) void this.stop();
  }
}

/** The report of an invocation that ended with no post-runtime extension time. */
function plainReport(durationMs: number): InvocationReport {
  return { runtimeDurationMs: durationMs, postRuntimeExtensionsDurationMs: 0, durationMs, billedDurationMs: Math.ceil(durationMs) };
}

/** Sends a signal to one process; false if it is gone. */
function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

/** Each process's parent, from /proc (this kernel has no /proc/<pid>/task/<tid>/children). */
async function parents(): Promise<Map<number, number>> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const parentOf = new Map<number, number>();
  await Promise.all(
    pids.map(async (entry) => {
      try {
        parentOf.set(Number(entry), Number(statFields(await readFile(`/proc/${entry}/stat`, 'utf8'))[1]));
      } catch {
        // it ended meanwhile
      }
    }),
  );
  return parentOf;
}

/** `root` and its descendants, parents before their children. */
function treeOf(root: number, parentOf: ReadonlyMap<number, number>): number[] {
  if (!parentOf.has(root)) return [];
  const childrenOf = new Map<number, number[]>();
  for (const [pid, ppid] of parentOf) childrenOf.set(ppid, [...(childrenOf.get(ppid) ?? []), pid]);
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(childrenOf.get(tree[i]!) ?? []));
  return tree;
}

/** The fields of /proc/<pid>/stat after the command ("pid (comm) state ppid ..."): comm may hold spaces and parentheses. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** A process's parent, or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    return Number(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[1]);
  } catch {
    return undefined;
  }
}

/** The CPU time a process has used, in nanoseconds (/proc/<pid>/schedstat), 0 once it is gone. */
function cpuTimeNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

/** A process's state letter from /proc/<pid>/stat (`T` when stopped), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    return statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[0];
  } catch {
    return undefined;
  }
}
