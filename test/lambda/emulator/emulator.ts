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
 *
 * Lambda's limits hold here as in AWS (shared/spec/beyond.md "Lambda's limits, locally"): every
 * invocation, the API-driven ones included, counts against the account's concurrent executions
 * (`LAMBDA_ACCOUNT_CONCURRENCY`, 1000 unless set) and against its function's reserved concurrency
 * (the template's `ReservedConcurrentExecutions`), through the local stack's own accounting
 * (lib/local/lambda-concurrency.ts). An invoke past a limit is refused as the Lambda API refuses it:
 * 429 `TooManyRequestsException` with its `Reason`. A throttled Event invoke stays in Lambda's queue
 * and is tried again, one second later and then twice as long each time up to five minutes, until
 * it runs or outlives the function's `MaximumEventAgeInSeconds` (six hours unless set). An Event
 * invoke given up (its retries spent, or too old) goes to its function's failure destination as
 * Lambda sends it there: to an SQS queue of the template, whose event source mapping invokes its
 * consumer with the record (the job function's given-up runs reach the reconcile function so, which
 * ends their jobs). Warm environments are reused, new ones start cold, and each is frozen between
 * its invocations (environment.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { functionNameOf, INVOKE_PATH, keepIdleConnections } from '#lib/local/invoke.ts';
import { FunctionThrottledError, LambdaConcurrency, throttledInvokeAnswer, type ThrottleReason } from '#lib/local/lambda-concurrency.ts';
import { EnvironmentGoneError, LambdaEnvironment, type FunctionSpec, type InvocationReport, type InvokeOutcome } from './environment.ts';

type Intrinsic = string | { Ref: string } | { 'Fn::GetAtt': [string, string] } | Record<string, unknown>;

/** The logical id an `Fn::GetAtt` of an `Arn` names, if `value` is one. */
function arnOf(value: unknown): string | undefined {
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && getAtt[1] === 'Arn' ? String(getAtt[0]) : undefined;
}

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
    readonly MaximumEventAgeInSeconds?: number;
    readonly ReservedConcurrentExecutions?: number;
    readonly DestinationConfig?: { readonly OnFailure?: { readonly Destination?: Intrinsic } };
    readonly EventSourceArn?: Intrinsic;
    readonly FunctionResponseTypes?: readonly string[];
    readonly RedrivePolicy?: { readonly maxReceiveCount?: number };
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
  /** The account's concurrent executions; `LAMBDA_ACCOUNT_CONCURRENCY` or 1000 when not given. */
  readonly accountConcurrency?: number;
  /** Whether environments are frozen between invocations, as Lambda freezes them (default true). */
  readonly freeze?: boolean;
  /** How a throttled Event invoke waits in the queue: Lambda's first wait and longest (1 s and 5 min) unless given. */
  readonly throttledEventBackoff?: { readonly firstMs: number; readonly maxMs: number };
}

/** Lambda's refusal of an invoke past a concurrency limit (the Invoke API answers it 429, a gateway 503). */
export class TooManyRequestsException extends FunctionThrottledError {
  override readonly name = 'TooManyRequestsException';
}

/** An Event invoke Lambda gave up on: what it sends the function's failure destination. */
export interface GivenUpEvent {
  readonly functionName: string;
  readonly requestContext: { readonly condition: 'RetriesExhausted' | 'EventAgeExceeded'; readonly approximateInvokeCount: number };
  readonly requestPayload: unknown;
}

/** A record Lambda sent a failure destination (an SQS queue), and what became of it there. */
export interface DestinationDelivery {
  /** The queue's logical id. */
  readonly queue: string;
  /** The function its event source mapping invokes, if any reads the queue. */
  readonly consumer: string | undefined;
  /** The destination record, as the queue's message body holds it. */
  readonly record: Record<string, unknown>;
  /** Taken off the queue by its consumer; moved to the dead-letter queue after its receives; or still waiting (no consumer). */
  status: 'waiting' | 'consumed' | 'dead-lettered';
  receiveCount: number;
}

/** Lambda's own defaults for an asynchronous invoke: two retries after a failure, kept six hours. */
const DEFAULT_RETRY_ATTEMPTS = 2;
const DEFAULT_MAX_EVENT_AGE_SECONDS = 6 * 60 * 60;
/** The account the emulation's ARNs name. */
const ACCOUNT_ID = '000000000000';
/** How long a failed queue message waits before it is received again (the template's visibility timeout is minutes; a test waits less). */
const QUEUE_VISIBILITY_TIMEOUT_MS = 1_000;
/** The account's concurrent executions in AWS, unless LAMBDA_ACCOUNT_CONCURRENCY says otherwise. */
const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

export interface InvocationRecord {
  readonly functionName: string;
  readonly coldStart: boolean;
  /** The environment's init, for a cold start. */
  readonly initMs?: number;
  /** Start to the runtime's answer (the caller has the answer then). */
  readonly durationMs: number;
  readonly outcome: InvokeOutcome;
  /** Lambda's report (post-runtime extension time, billed duration), once the extensions are done; absent for an environment that could not start. */
  readonly report?: Promise<InvocationReport>;
}

/** The environments of one function: an idle one is reused, or a new one started up to the limit. */
class FunctionPool {
  private readonly environments: LambdaEnvironment[] = [];
  private readonly queue: (() => void)[] = [];

  readonly spec: FunctionSpec;
  readonly options: { stage: string; max: number; cpus?: string; freeze: boolean };

  constructor(spec: FunctionSpec, options: { stage: string; max: number; cpus?: string; freeze: boolean }) {
    this.spec = spec;
    this.options = options;
  }

  async invoke(event: unknown): Promise<InvocationRecord> {
    for (;;) {
      // One whose extensions have finished the last invocation's work first; Lambda would not hand an
      // environment still in that work an event at all (it starts another), here the event waits for it.
      const free = this.environments.filter((environment) => !environment.busy && !environment.isStopped);
      const idle = free.find((environment) => !environment.settling) ?? free[0];
      if (idle) {
        try {
          return await this.run(idle, event, false);
        } catch (error) {
          // Its runtime ended before taking the event: another environment runs it.
          if (error instanceof EnvironmentGoneError) continue;
          throw error;
        }
      }
      const alive = this.environments.filter((environment) => !environment.isStopped);
      if (alive.length < this.options.max) {
        const environment = new LambdaEnvironment(this.spec, { stage: this.options.stage, freeze: this.options.freeze, ...(this.options.cpus && { cpus: this.options.cpus }) });
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
      const { outcome, durationMs, report } = await environment.invoke(event);
      return { functionName: this.spec.name, coldStart, ...(coldStart && { initMs: environment.initMs }), durationMs, outcome, report };
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

  /** Its environments alive now. */
  alive(): readonly LambdaEnvironment[] {
    return this.environments.filter((environment) => !environment.isStopped);
  }

  /** What the function printed, in every environment it had. */
  output(): string {
    return this.environments.map((environment) => environment.output.join('')).join('\n');
  }
}

export class LambdaEmulator {
  /** Every invocation made, in the order they ended. */
  readonly invocations: InvocationRecord[] = [];
  /** Every invoke refused past a concurrency limit, in order. */
  readonly throttles: { readonly functionName: string; readonly reason: ThrottleReason; readonly invocationType: 'RequestResponse' | 'Event' }[] = [];
  /** Event invokes given up (their retries spent, or too old), with the record a failure destination gets. */
  readonly givenUp: GivenUpEvent[] = [];
  /** Records sent to failure destinations, in order. */
  readonly destinationDeliveries: DestinationDelivery[] = [];
  private readonly pools = new Map<string, FunctionPool>();
  private readonly asyncConfig = new Map<string, { retryAttempts: number; maxEventAgeSeconds: number; onFailure?: string }>();
  /** The template's SQS queues an event source mapping reads: its function, and the queue's receives before its dead-letter queue. */
  private readonly queueConsumers = new Map<string, { functionName: string; reportsItemFailures: boolean }>();
  private readonly queueReceives = new Map<string, number>();
  private readonly background = new Set<Promise<unknown>>();
  /** Waits of queued Event invokes, ended early when the emulator stops. */
  private readonly sleepers = new Set<() => void>();
  private concurrency!: LambdaConcurrency;
  private server: Server | undefined;
  private stopped = false;
  private reserved: Readonly<Record<string, number>> = {};
  private readonly options: EmulatorOptions;

  constructor(options: EmulatorOptions) {
    this.options = options;
  }

  /**
   * Starts the Lambda Invoke API and reads the functions, whose environment points at it
   * (`AWS_ENDPOINT_URL_LAMBDA`) beside the platform's variables. Answers its endpoint.
   */
  async start(): Promise<string> {
    this.server = keepIdleConnections(createServer(async (request, response) => {
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
        // Accepted into Lambda's queue whatever the concurrency: throttling delays it there.
        this.invokeEvent(name, payload);
        response.writeHead(202).end();
        return;
      }
      let outcome: InvokeOutcome;
      try {
        ({ outcome } = await this.invokeByName(name, payload));
      } catch (error) {
        if (error instanceof TooManyRequestsException) {
          const answer = throttledInvokeAnswer(error.reason);
          response.writeHead(429, answer.headers).end(answer.body);
        } else {
          // An environment that could not start: Lambda answers its init error as the function's.
          response.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' });
          response.end(JSON.stringify({ errorType: 'Runtime.InitError', errorMessage: (error as Error).message.split('\n')[0] }));
        }
        return;
      }
      if (outcome.ok) {
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(outcome.payload));
      } else {
        response.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' });
        response.end(JSON.stringify({ errorType: outcome.errorType, errorMessage: outcome.errorMessage }));
      }
    }));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.load({ ...this.options.platformVariables, AWS_ENDPOINT_URL_LAMBDA: endpoint });
    return endpoint;
  }

  /** Reads every function of the template, with its asset, its layer, its resolved environment and its limits. */
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
    const reserved: Record<string, number> = {};
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::Lambda::EventInvokeConfig') {
        const target = resource.Properties?.FunctionName?.Ref;
        const onFailure = arnOf(resource.Properties?.DestinationConfig?.OnFailure?.Destination);
        if (target) {
          this.asyncConfig.set(target, {
            retryAttempts: resource.Properties?.MaximumRetryAttempts ?? DEFAULT_RETRY_ATTEMPTS,
            maxEventAgeSeconds: resource.Properties?.MaximumEventAgeInSeconds ?? DEFAULT_MAX_EVENT_AGE_SECONDS,
            ...(onFailure && { onFailure }),
          });
        }
      }
      if (resource.Type === 'AWS::Lambda::EventSourceMapping') {
        const queue = arnOf(resource.Properties?.EventSourceArn);
        const consumer = resource.Properties?.FunctionName?.Ref;
        if (queue && consumer) this.queueConsumers.set(queue, { functionName: consumer, reportsItemFailures: resource.Properties?.FunctionResponseTypes?.includes('ReportBatchItemFailures') ?? false });
      }
      if (resource.Type === 'AWS::SQS::Queue' && resource.Properties?.RedrivePolicy?.maxReceiveCount !== undefined) {
        this.queueReceives.set(id, resource.Properties.RedrivePolicy.maxReceiveCount);
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
      this.pools.set(
        id,
        new FunctionPool(spec, { stage: this.options.stage, max: this.options.maxEnvironmentsPerFunction ?? 2, freeze: this.options.freeze ?? true, ...(this.options.cpus && { cpus: this.options.cpus }) }),
      );
      if (properties.ReservedConcurrentExecutions !== undefined) reserved[id] = properties.ReservedConcurrentExecutions;
    }
    this.concurrency = new LambdaConcurrency({ account: this.accountConcurrency, reserved });
    this.reserved = reserved;
  }

  /** The account's concurrent executions this emulator allows. */
  get accountConcurrency(): number {
    const fromEnv = process.env.LAMBDA_ACCOUNT_CONCURRENCY;
    const value = this.options.accountConcurrency ?? (fromEnv ? Number(fromEnv) : DEFAULT_ACCOUNT_CONCURRENCY);
    if (!Number.isInteger(value) || value < 1) throw new Error(`LAMBDA_ACCOUNT_CONCURRENCY must be a positive integer, not ${fromEnv}`);
    return value;
  }

  /** The function's reserved concurrency from the template, if it has one. */
  reservedConcurrency(name: string): number | undefined {
    this.pool(name);
    return this.reserved[name];
  }

  /** Invocations running now, all functions together (the account's concurrent executions in use). */
  get running(): number {
    return this.concurrency.state.running;
  }

  /**
   * How environments are frozen from their next answers: at the answer, as Lambda freezes them
   * (once the runtime and every extension have asked for their next event); the same ignoring the
   * extensions (`ignoring-extensions`: their work left for the next thaw, as before they were
   * modelled); once the work left running at the answer has ended (`after-tail`, see
   * LambdaEnvironment freezeAfterTail); or not at all. Switched between invocations, the gap before
   * an invocation is frozen or not (the bench alternates them that way).
   */
  set freezing(mode: 'at-answer' | 'ignoring-extensions' | 'after-tail' | 'off') {
    for (const pool of this.pools.values()) {
      pool.options.freeze = mode !== 'off';
      for (const environment of pool.alive()) {
        environment.freezes = mode !== 'off';
        environment.freezeAfterTail = mode === 'after-tail';
        // After a tail models a streaming handler, which finishes its work before it returns: no extension.
        environment.freezeIgnoringExtensions = mode === 'ignoring-extensions' || mode === 'after-tail';
      }
    }
  }

  /** The function's environments alive now (warm or running), for a test that looks at their processes. */
  environments(name: string): readonly LambdaEnvironment[] {
    return this.pool(name).alive();
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

  /**
   * A synchronous invoke (`RequestResponse`) of the function with this logical id, as the Invoke API
   * or API Gateway makes one: it holds one of the account's concurrent executions (and of the
   * function's reserved ones) until it answers, or is refused (TooManyRequestsException).
   */
  async invokeByName(name: string, event: unknown, invocationType: 'RequestResponse' | 'Event' = 'RequestResponse'): Promise<InvocationRecord> {
    const pool = this.pool(name);
    const started = this.concurrency.tryStart(name);
    if ('throttled' in started) {
      this.throttles.push({ functionName: name, reason: started.throttled, invocationType });
      throw new TooManyRequestsException(name, started.throttled);
    }
    const startedAt = performance.now();
    try {
      const record = await pool.invoke(event);
      this.invocations.push(record);
      return record;
    } catch (error) {
      // An environment that could not start: a failed invocation too, as Lambda reports its init error.
      const errorMessage = (error as Error).message.split('\n')[0] ?? '';
      this.invocations.push({ functionName: name, coldStart: true, durationMs: performance.now() - startedAt, outcome: { ok: false, errorType: 'Runtime.InitError', errorMessage } });
      throw error;
    } finally {
      started.release();
    }
  }

  /** A synchronous invoke that must succeed: its record and payload, or an error carrying the function's logs. */
  async invokeOk(name: string, event: unknown): Promise<{ record: InvocationRecord; payload: unknown }> {
    const record = await this.invokeByName(name, event);
    if (!record.outcome.ok) throw new Error(this.describeFailure(name, record.outcome));
    return { record, payload: record.outcome.payload };
  }

  /**
   * An asynchronous invoke (`Event`): run in the background, tried again after a failure as the
   * function's async config says; a throttled try is no failure: it waits in the queue (backing off
   * as Lambda does) until the function has room or the event is older than its maximum age.
   */
  private invokeEvent(name: string, event: unknown): void {
    const { retryAttempts, maxEventAgeSeconds } = this.asyncConfig.get(name) ?? { retryAttempts: DEFAULT_RETRY_ATTEMPTS, maxEventAgeSeconds: DEFAULT_MAX_EVENT_AGE_SECONDS };
    const backoff = this.options.throttledEventBackoff ?? { firstMs: 1_000, maxMs: 5 * 60_000 };
    const expires = Date.now() + maxEventAgeSeconds * 1000;
    const run = (async () => {
      let tries = 0;
      let throttledFor = 0;
      let lastError: { errorType: string; errorMessage: string } | undefined;
      while (!this.stopped) {
        if (Date.now() >= expires) return this.giveUp(name, event, 'EventAgeExceeded', tries, lastError);
        let outcome: InvokeOutcome;
        try {
          outcome = (await this.invokeByName(name, event, 'Event')).outcome;
        } catch (error) {
          // An environment that could not start is a failed try, as Lambda counts an init error.
          if (!(error instanceof TooManyRequestsException)) outcome = { ok: false, errorType: 'Runtime.InitError', errorMessage: (error as Error).message.split('\n')[0] ?? '' };
          else {
            const wait = Math.min(backoff.maxMs, backoff.firstMs * 2 ** throttledFor++);
            await this.sleep(Math.min(wait, Math.max(0, expires - Date.now())));
            continue;
          }
        }
        tries++;
        if (outcome.ok) return;
        lastError = { errorType: outcome.errorType, errorMessage: outcome.errorMessage };
        if (tries > retryAttempts) return this.giveUp(name, event, 'RetriesExhausted', tries, lastError);
        await this.sleep(500);
      }
    })();
    this.background.add(run);
    void run.finally(() => this.background.delete(run));
  }

  private async giveUp(
    functionName: string,
    requestPayload: unknown,
    condition: GivenUpEvent['requestContext']['condition'],
    tries: number,
    lastError: { errorType: string; errorMessage: string } | undefined,
  ): Promise<void> {
    this.givenUp.push({ functionName, requestContext: { condition, approximateInvokeCount: tries }, requestPayload });
    const queue = this.asyncConfig.get(functionName)?.onFailure;
    if (!queue) return;
    // The record Lambda sends an on-failure destination (its invocation record, version 1.0).
    const region = this.options.platformVariables.AWS_REGION ?? 'us-east-1';
    const record = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: { requestId: randomUUID(), functionArn: `arn:aws:lambda:${region}:${ACCOUNT_ID}:function:${functionName}:$LATEST`, condition, approximateInvokeCount: tries },
      requestPayload,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', ...(lastError && { functionError: 'Unhandled' }) },
      ...(lastError && { responsePayload: lastError }),
    };
    await this.sendToQueue(queue, record);
  }

  /**
   * A message on one of the template's SQS queues, as its event source mapping delivers it: its
   * function is invoked with an SQS event of that one record, and the message is received again
   * (after a short visibility timeout here) while the invocation fails or reports it among its
   * `batchItemFailures`, until the queue's `maxReceiveCount` moves it to the dead-letter queue.
   */
  private async sendToQueue(queue: string, record: Record<string, unknown>): Promise<void> {
    const consumer = this.queueConsumers.get(queue);
    const delivery: DestinationDelivery = { queue, consumer: consumer?.functionName, record, status: 'waiting', receiveCount: 0 };
    this.destinationDeliveries.push(delivery);
    if (!consumer) return;
    const region = this.options.platformVariables.AWS_REGION ?? 'us-east-1';
    const body = JSON.stringify(record);
    const messageId = randomUUID();
    const sent = Date.now();
    const maxReceives = this.queueReceives.get(queue) ?? Number.POSITIVE_INFINITY;
    while (!this.stopped) {
      delivery.receiveCount++;
      const message = {
        messageId,
        receiptHandle: randomUUID(),
        body,
        attributes: { ApproximateReceiveCount: String(delivery.receiveCount), SentTimestamp: String(sent), SenderId: 'AROA000000000000000:awslambda', ApproximateFirstReceiveTimestamp: String(sent) },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${region}:${ACCOUNT_ID}:${queue}`,
        awsRegion: region,
      };
      let consumed = false;
      try {
        const { outcome } = await this.invokeByName(consumer.functionName, { Records: [message] });
        const failures = outcome.ok && consumer.reportsItemFailures ? ((outcome.payload as { batchItemFailures?: { itemIdentifier: string }[] } | null)?.batchItemFailures ?? []) : [];
        consumed = outcome.ok && !failures.some((failure) => failure.itemIdentifier === messageId);
      } catch {
        // Throttled, or the consumer could not start: the message stays on the queue.
        delivery.receiveCount--;
      }
      if (consumed) return void (delivery.status = 'consumed');
      if (delivery.receiveCount >= maxReceives) return void (delivery.status = 'dead-lettered');
      await this.sleep(QUEUE_VISIBILITY_TIMEOUT_MS);
    }
  }

  /** Waits `ms`, or until the emulator stops. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  /** Stops every environment of the function: its next invocation is a cold start. */
  retire(name: string): Promise<void> {
    return this.pool(name).retire();
  }

  /** A failed invocation as a failing test shows it: the function, Lambda's error and the function's last output. */
  describeFailure(name: string, outcome: Extract<InvokeOutcome, { ok: false }>): string {
    return `${name} failed: ${outcome.errorType}: ${outcome.errorMessage}\n${this.output(name).slice(-4000)}`;
  }

  /** What a function printed (its logs), for a failing test's message. */
  output(name: string): string {
    return this.pool(name).output();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.sleepers]) wake();
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
