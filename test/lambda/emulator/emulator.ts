/**
 * Lambda, as far as running this stack's functions goes: the functions of a synthesized template
 * (`cdk.out`), each run in execution environments of its own (environment.ts) that are started cold
 * on demand and reused warm, behind the Lambda Invoke API (`RequestResponse` and `Event`), so the
 * batch function fans out to the render function's asset and generate queues the job function's,
 * through the same SDK calls as in AWS.
 *
 * The template's environment is used as synthesized, with its references resolved to the local
 * stand-ins by the caller; the one addition is the `AWS_ENDPOINT_URL_*` variables that point the
 * SDK at those stand-ins (and this Invoke API) instead of AWS.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { functionNameOf, INVOKE_PATH } from '#lib/local/invoke.ts';
import { LambdaEnvironment, type FunctionSpec, type InvokeOutcome } from './environment.ts';

type Intrinsic = string | { Ref: string } | { 'Fn::GetAtt': [string, string] } | Record<string, unknown>;

interface TemplateResource {
  readonly Type: string;
  readonly Metadata?: Record<string, string>;
  readonly Properties?: {
    readonly Handler?: string;
    readonly MemorySize?: number;
    readonly Timeout?: number;
    readonly EphemeralStorage?: { readonly Size: number };
    readonly Layers?: readonly { readonly Ref: string }[];
    readonly Environment?: { readonly Variables?: Record<string, Intrinsic> };
    readonly FunctionName?: { readonly Ref: string };
    readonly MaximumRetryAttempts?: number;
  };
}

export interface Template {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
}

/** What a reference to a resource of the template is here (`Ref`, or `Fn::GetAtt` of its `Arn`): a stand-in's name or ARN. */
export type ResolveRef = (logicalId: string, type: string, attribute?: 'Arn') => string;

export interface EmulatorOptions {
  /** The synthesized cloud assembly directory. */
  readonly outdir: string;
  readonly template: Template;
  /** The directory environments mount their function into (environment.ts makeStage). */
  readonly stage: string;
  readonly resolveRef: ResolveRef;
  /** Added to every function's environment: region, credentials and the stand-ins' endpoints (the Invoke API's is added by the emulator). */
  readonly platformVariables: Readonly<Record<string, string>>;
  /** Environments of one function alive at once (Lambda would scale further; here they queue). */
  readonly maxEnvironmentsPerFunction?: number;
  /** CPUs every environment is pinned to (`taskset -c`), e.g. "0" for one core. */
  readonly cpus?: string;
}

export interface InvocationRecord {
  readonly functionName: string;
  readonly coldStart: boolean;
  /** The environment's init, for a cold start. */
  readonly initMs?: number;
  readonly durationMs: number;
  readonly outcome: InvokeOutcome;
}

/** The environments of one function: an idle one is reused, or a new one started up to the limit. */
class FunctionPool {
  private readonly environments: LambdaEnvironment[] = [];
  private readonly queue: (() => void)[] = [];

  readonly spec: FunctionSpec;
  private readonly options: { stage: string; max: number; cpus?: string };

  constructor(spec: FunctionSpec, options: { stage: string; max: number; cpus?: string }) {
    this.spec = spec;
    this.options = options;
  }

  async invoke(event: unknown): Promise<InvocationRecord> {
    for (;;) {
      const idle = this.environments.find((environment) => !environment.busy && !environment.isStopped);
      if (idle) return this.run(idle, event, false);
      const alive = this.environments.filter((environment) => !environment.isStopped);
      if (alive.length < this.options.max) {
        const environment = new LambdaEnvironment(this.spec, { stage: this.options.stage, ...(this.options.cpus && { cpus: this.options.cpus }) });
        this.environments.splice(0, this.environments.length, ...alive, environment);
        environment.busy = true; // reserved while it starts
        try {
          await environment.start();
        } catch (error) {
          await environment.stop();
          this.release();
          throw error;
        }
        environment.busy = false;
        return this.run(environment, event, true);
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    }
  }

  private async run(environment: LambdaEnvironment, event: unknown, coldStart: boolean): Promise<InvocationRecord> {
    try {
      const { outcome, durationMs } = await environment.invoke(event);
      return { functionName: this.spec.name, coldStart, ...(coldStart && { initMs: environment.initMs }), durationMs, outcome };
    } finally {
      this.release();
    }
  }

  private release(): void {
    this.queue.shift()?.();
  }

  /** Stops every environment: the next invocation starts cold. */
  async retire(): Promise<void> {
    await Promise.all(this.environments.map((environment) => environment.stop()));
    this.environments.length = 0;
  }

  /** What the function printed, in every environment it had. */
  output(): string {
    return this.environments.map((environment) => environment.output.join('')).join('\n');
  }
}

export class LambdaEmulator {
  /** Every invocation made, in the order they ended. */
  readonly invocations: InvocationRecord[] = [];
  private readonly pools = new Map<string, FunctionPool>();
  private readonly retryAttempts = new Map<string, number>();
  private readonly background = new Set<Promise<unknown>>();
  private server: Server | undefined;
  private stopped = false;
  private readonly options: EmulatorOptions;

  constructor(options: EmulatorOptions) {
    this.options = options;
  }

  /**
   * Starts the Lambda Invoke API and reads the functions, whose environment points at it
   * (`AWS_ENDPOINT_URL_LAMBDA`) beside the platform's variables. Answers its endpoint.
   */
  async start(): Promise<string> {
    this.server = createServer(async (request, response) => {
      const match = INVOKE_PATH.exec(new URL(request.url ?? '/', 'http://x').pathname);
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const name = match ? functionNameOf(match[1]!) : '';
      if (!this.pools.has(name)) {
        response.writeHead(404, { 'Content-Type': 'application/json', 'X-Amzn-ErrorType': 'ResourceNotFoundException' });
        response.end(JSON.stringify({ Type: 'User', Message: `Function not found: ${name}` }));
        return;
      }
      const payload = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : {};
      if (String(request.headers['x-amz-invocation-type'] ?? '').toLowerCase() === 'event') {
        this.invokeEvent(name, payload);
        response.writeHead(202).end();
        return;
      }
      const { outcome } = await this.invokeByName(name, payload);
      if (outcome.ok) {
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(outcome.payload));
      } else {
        response.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' });
        response.end(JSON.stringify({ errorType: outcome.errorType, errorMessage: outcome.errorMessage }));
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.load({ ...this.options.platformVariables, AWS_ENDPOINT_URL_LAMBDA: endpoint });
    return endpoint;
  }

  /** Reads every function of the template, with its asset, its layer and its resolved environment. */
  private load(platformVariables: Readonly<Record<string, string>>): void {
    const { template, outdir, resolveRef } = this.options;
    const assetDir = (logicalId: string) => join(outdir, template.Resources[logicalId]!.Metadata!['aws:asset:path']!);
    const resolve = (value: Intrinsic, where: string): string => {
      if (typeof value === 'string') return value;
      if ('Ref' in value && typeof value.Ref === 'string') return resolveRef(value.Ref, template.Resources[value.Ref]?.Type ?? 'unknown');
      const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
      if (Array.isArray(getAtt) && getAtt[1] === 'Arn') return resolveRef(String(getAtt[0]), template.Resources[String(getAtt[0])]?.Type ?? 'unknown', 'Arn');
      throw new Error(`${where}: the emulator resolves plain values, Refs and ARNs only, not ${JSON.stringify(value)}`);
    };
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::Lambda::EventInvokeConfig') {
        const target = resource.Properties?.FunctionName?.Ref;
        if (target) this.retryAttempts.set(target, resource.Properties?.MaximumRetryAttempts ?? 2);
      }
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const properties = resource.Properties ?? {};
      const layers = properties.Layers ?? [];
      // Lambda extracts every layer into /opt; one layer is one read-only mount here.
      if (layers.length > 1) throw new Error(`${id}: the emulator mounts one layer per function, not ${layers.length}`);
      const variables = Object.fromEntries(
        Object.entries(properties.Environment?.Variables ?? {}).map(([name, value]) => [name, resolve(value, `${id} ${name}`)]),
      );
      const spec: FunctionSpec = {
        name: id,
        handler: properties.Handler ?? 'index.handler',
        codeDir: assetDir(id),
        ...(layers[0] && { layerDir: assetDir(layers[0].Ref) }),
        memoryMb: properties.MemorySize ?? 128,
        timeoutSeconds: properties.Timeout ?? 3,
        ephemeralMb: properties.EphemeralStorage?.Size ?? 512,
        variables: { ...variables, ...platformVariables },
      };
      this.pools.set(id, new FunctionPool(spec, { stage: this.options.stage, max: this.options.maxEnvironmentsPerFunction ?? 2, ...(this.options.cpus && { cpus: this.options.cpus }) }));
    }
  }

  /** The function's spec as read from the template. */
  spec(name: string): FunctionSpec {
    return this.pool(name).spec;
  }

  private pool(name: string): FunctionPool {
    const pool = this.pools.get(name);
    if (!pool) throw new Error(`no function ${name} in the template (${[...this.pools.keys()].join(', ')})`);
    return pool;
  }

  /** A synchronous invoke (`RequestResponse`) of the function with this logical id. */
  async invokeByName(name: string, event: unknown): Promise<InvocationRecord> {
    const record = await this.pool(name).invoke(event);
    this.invocations.push(record);
    return record;
  }

  /** A synchronous invoke that must succeed: its record and payload, or an error carrying the function's logs. */
  async invokeOk(name: string, event: unknown): Promise<{ record: InvocationRecord; payload: unknown }> {
    const record = await this.invokeByName(name, event);
    if (!record.outcome.ok) throw new Error(`${name} failed: ${record.outcome.errorType}: ${record.outcome.errorMessage}\n${this.output(name).slice(-4000)}`);
    return { record, payload: record.outcome.payload };
  }

  /** An asynchronous invoke (`Event`): run in the background, tried again as the function's async config says. */
  private invokeEvent(name: string, event: unknown): void {
    const attempts = 1 + (this.retryAttempts.get(name) ?? 2);
    const run = (async () => {
      for (let attempt = 1; attempt <= attempts && !this.stopped; attempt++) {
        const record = await this.invokeByName(name, event).catch((error: Error) => ({ outcome: { ok: false, errorMessage: error.message } }));
        if (record.outcome.ok) return;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    this.background.add(run);
    void run.finally(() => this.background.delete(run));
  }

  /** Stops every environment of the function: its next invocation is a cold start. */
  retire(name: string): Promise<void> {
    return this.pool(name).retire();
  }

  /** What a function printed (its logs), for a failing test's message. */
  output(name: string): string {
    return this.pool(name).output();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    await Promise.all([...this.pools.values()].map((pool) => pool.retire()));
    // Event invocations still retrying end with their environments: none outlives the emulator.
    await Promise.allSettled(this.background);
  }
}

/** The template of a synthesized stack. */
export function readTemplate(outdir: string, stackName: string): Template {
  return JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), 'utf8')) as Template;
}
