/**
 * Render capacity: how many documents this process produces at once, who waits for a turn, and who
 * is told to come back later.
 *
 * One process has one browser and a few cores; past a few documents at once every document only
 * gets slower, until all of them time out together. So a process has `slots` render slots
 * (RENDER_CONCURRENCY) and a bounded wait queue (MAX_QUEUED_RENDERS, MAX_QUEUE_WAIT_MS):
 * - A request the queue cannot take is refused at once with `ServiceBusyError` (503 `service_busy`
 *   with an estimate of when to retry), before anything is charged.
 * - Waiting documents are served per key, round-robin: each key has a queue of its own and the keys
 *   take turns, so a key that sends hundreds of requests gets one slot in turn like any other, and
 *   a batch's items (its key's work) are not starved by another key's singles.
 * - When the queue is full, a key with less than its fair share of it (the queue divided among the
 *   keys with work in it) is still admitted, and a key with nothing admitted always gets one request
 *   in: one key's flood fills the queue with its own work only, and never locks another key out.
 * - A document that waited `maxQueueWaitMs` without a slot is dropped (ServiceBusyError), as is one
 *   whose caller gave up (its signal): nothing of it has run, so nothing was charged for it. Work
 *   with more time than a request (an asynchronous job's documents) waits as long as it says.
 * - A key renders at most its tier's `maxConcurrentRenders` documents at once, and never takes every
 *   slot: past that its documents wait in its own line while other keys' documents take the free
 *   slots. So one key's slow or never-ready documents (a readiness condition that never holds holds
 *   its slot for the whole render time limit) cannot stop anyone else.
 *
 * Admission and the slot are two steps. A request is admitted (or refused) before its quota is
 * reserved: `admitRender` for a single document, `admitBatch` for a whole batch, whose items are
 * places promised to its key, counted against the queue and taken up as its render invocations
 * arrive. The slot is taken by the render itself (`takeRenderSlot`, in lib/render/render.ts) and held
 * only while the browser works: waiting for the stores (quota, records, objects) holds no slot, so
 * slow stores under load never idle the browser. A document that waited too long is dropped before
 * it renders and its reserved quota is given back (503, or a failed batch item).
 *
 * In AWS a Lambda container serves one request at a time, so its slots are never all taken and
 * nothing ever waits; the batch function's admission there is against an idle process and always
 * passes (its items run in render functions of their own). Locally one process serves everything,
 * and this is what keeps it answering under any load.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { settings } from '#lib/settings.ts';
import { DocumentError } from './errors.ts';

/** The queue cannot take the work now (or it waited too long): retry after `retryAfterSeconds`. */
export class ServiceBusyError extends Error {
  override readonly name = 'ServiceBusyError';
  /** Whole seconds, at least 1: an estimate of when the work queued now will have started. */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface CapacityLimits {
  /** Documents produced at once. */
  readonly slots: number;
  /** Documents admitted and waiting for a slot (batch items promised included) before refusing. */
  readonly maxQueued: number;
  /** Longest a document waits for a slot before it is dropped. */
  readonly maxQueueWaitMs: number;
}

/** A render slot held by one document; free it once the document is done (or let `using` do it). */
export interface RenderSlot extends Disposable {
  release(): void;
}

/**
 * Places promised to admitted work (one document, or a batch's items); whatever was not taken up is
 * given back on release (or by `using`).
 */
export interface Admission extends Disposable {
  /** A slot for one of the admitted documents: it is not refused, only made to wait its key's turn. */
  acquire(options?: KeyShare & { readonly signal?: AbortSignal }): Promise<RenderSlot>;
  release(): void;
}

/** How much of the renderer one key may hold, and how long its documents may wait for it. */
export interface KeyShare {
  /** The key's documents rendered at once at most (its tier's `maxConcurrentRenders`). */
  readonly maxRunning?: number;
  /** Longest its documents wait for a slot, instead of `maxQueueWaitMs` (Infinity: until the signal). */
  readonly maxWaitMs?: number;
}

export interface AcquireOptions extends KeyShare {
  /** The caller gave up: a document still waiting is dropped. */
  readonly signal?: AbortSignal;
  /** A batch item: it takes up a place promised to its key's batch, if there is one. */
  readonly batchItem?: boolean;
}

interface Waiter {
  readonly grant: (slot: RenderSlot) => void;
  /** Stops its timer and its abort listener. */
  readonly cleanup: () => void;
}

/** The places promised to one admission that its documents have not taken up yet. */
interface PromisedPlaces {
  remaining: number;
  /** A batch's places, taken up by its items as they arrive (`acquire` with `batchItem`). */
  readonly forBatchItems: boolean;
}

interface KeyWork {
  readonly waiting: Waiter[];
  /** Documents admitted and not yet asking for a slot, per admission (oldest first). */
  readonly admissions: PromisedPlaces[];
  promised: number;
  /** Its documents holding a slot now. */
  running: number;
  /** Its documents rendered at once at most (the latest share it asked with). */
  maxRunning: number;
}

/** Service time assumed before any document was measured, for the first retry estimates. */
const INITIAL_SERVICE_MS = 500;
/** Weight of the newest measurement in the moving average of service times. */
const SERVICE_TIME_WEIGHT = 0.2;
/** The longest retry estimate given: the queue drains or drops its work well within it. */
const MAX_RETRY_AFTER_SECONDS = 60;

export class RenderCapacity {
  readonly #limits: CapacityLimits;
  #running = 0;
  #waitingTotal = 0;
  #promisedTotal = 0;
  /** Work per key, only for keys that have some. */
  readonly #work = new Map<string, KeyWork>();
  /** Keys with documents waiting, in the order they get their next turn. */
  readonly #turns: string[] = [];
  #serviceMs = INITIAL_SERVICE_MS;

  constructor(limits: CapacityLimits) {
    if (!Number.isInteger(limits.slots) || limits.slots < 1) throw new Error('slots must be a positive integer');
    if (!Number.isInteger(limits.maxQueued) || limits.maxQueued < 0) throw new Error('maxQueued must be a non-negative integer');
    if (!(limits.maxQueueWaitMs > 0)) throw new Error('maxQueueWaitMs must be positive');
    this.#limits = limits;
  }

  /** What is going on now (tests, health). */
  get state(): { readonly slots: number; readonly running: number; readonly waiting: number; readonly promised: number } {
    return { slots: this.#limits.slots, running: this.#running, waiting: this.#waitingTotal, promised: this.#promisedTotal };
  }

  /** The documents of `keyId` holding a slot now. */
  runningFor(keyId: string): number {
    return this.#work.get(keyId)?.running ?? 0;
  }

  /**
   * The most slots one key may hold: a key with a share (every customer's key) gets at most its
   * share and never every slot, one being always left for the other keys (unless this process has
   * only one); work without a share (internal work) may take them all.
   */
  #capOf(work: KeyWork): number {
    if (!Number.isFinite(work.maxRunning)) return this.#limits.slots;
    return Math.max(1, Math.min(work.maxRunning, this.#limits.slots - 1));
  }

  /**
   * A render slot for one document of `keyId`: at once when one is free and nobody waits, else
   * after waiting its key's turn. Refused (ServiceBusyError, decided at once) when the queue cannot
   * take it; dropped (ServiceBusyError) when it waits longer than allowed or its caller gives up.
   */
  acquire(keyId: string, options: AcquireOptions = {}): Promise<RenderSlot> {
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const promised = options.batchItem === true && this.#takeBatchPlace(keyId);
    if (!promised) {
      const refusal = this.#refusal(keyId, 1);
      if (refusal) return Promise.reject(refusal);
    }
    return this.#slotFor(keyId, options);
  }

  /** A slot at once if one is free, nobody waits and the key is below its share, else a place in its key's queue. */
  #slotFor(keyId: string, options: KeyShare & { readonly signal?: AbortSignal | undefined }): Promise<RenderSlot> {
    const work = this.#workOf(keyId);
    if (options.maxRunning !== undefined) work.maxRunning = options.maxRunning;
    if (this.#running < this.#limits.slots && this.#waitingTotal === 0 && work.running < this.#capOf(work)) return Promise.resolve(this.#grant(keyId, work));
    const maxWaitMs = options.maxWaitMs ?? this.#limits.maxQueueWaitMs;
    return new Promise<RenderSlot>((resolve, reject) => this.#enqueue(keyId, resolve, reject, options.signal, maxWaitMs));
  }

  /**
   * Admits `count` documents of `keyId` as a whole, or refuses them at once (ServiceBusyError) when
   * the queue cannot take them. They take up their places with the admission's `acquire` (a batch's
   * items, arriving separately, with `acquire(keyId, { batchItem: true })`); release the admission
   * when the work is done.
   */
  admit(keyId: string, count: number, { forBatchItems = false }: { forBatchItems?: boolean } = {}): Admission {
    const refusal = this.#refusal(keyId, count);
    if (refusal) throw refusal;
    const work = this.#workOf(keyId);
    const places: PromisedPlaces = { remaining: count, forBatchItems };
    work.admissions.push(places);
    work.promised += count;
    this.#promisedTotal += count;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#takeUp(work, places, places.remaining);
      work.admissions.splice(work.admissions.indexOf(places), 1);
      this.#forgetIfIdle(keyId);
    };
    const acquire = (options: KeyShare & { readonly signal?: AbortSignal } = {}): Promise<RenderSlot> => {
      if (released || places.remaining === 0) return this.acquire(keyId, options);
      if (options.signal?.aborted) return Promise.reject(options.signal.reason);
      this.#takeUp(work, places, 1);
      return this.#slotFor(keyId, options);
    };
    return { acquire, release, [Symbol.dispose]: release };
  }

  /** Admits a whole batch of `count` documents: its items take up the places as they arrive. */
  admitBatch(keyId: string, count: number): Admission {
    return this.admit(keyId, count, { forBatchItems: true });
  }

  /** Whole seconds until the work admitted now will have started, at least 1. */
  retryAfterSeconds(): number {
    const queued = this.#waitingTotal + this.#promisedTotal;
    const seconds = Math.ceil((queued * this.#serviceMs) / this.#limits.slots / 1000);
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
  }

  /** Why `count` more documents of `keyId` cannot be admitted now, if they cannot. */
  #refusal(keyId: string, count: number): ServiceBusyError | undefined {
    const queued = this.#waitingTotal + this.#promisedTotal;
    if (queued + count <= this.#limits.maxQueued) return undefined;
    const work = this.#work.get(keyId);
    const held = work ? work.waiting.length + work.promised : 0;
    // A key with nothing admitted always gets one request in, whatever others have queued.
    if (held === 0) return undefined;
    // Below its fair share of the queue, a key is admitted even though others filled it.
    if (held + count <= Math.ceil(this.#limits.maxQueued / this.#keysHoldingWork())) return undefined;
    const retryAfter = this.retryAfterSeconds();
    return new ServiceBusyError(`The service is busy: too many documents are waiting to be rendered. Retry in ${retryAfter} s.`, retryAfter);
  }

  #keysHoldingWork(): number {
    let keys = 0;
    for (const work of this.#work.values()) if (work.waiting.length + work.promised > 0) keys++;
    return Math.max(1, keys);
  }

  /** Takes up a place promised to one of the key's batches, if there is one. */
  #takeBatchPlace(keyId: string): boolean {
    const work = this.#work.get(keyId);
    const batch = work?.admissions.find((candidate) => candidate.forBatchItems && candidate.remaining > 0);
    if (!work || !batch) return false;
    this.#takeUp(work, batch, 1);
    return true;
  }

  #takeUp(work: KeyWork, places: PromisedPlaces, count: number): void {
    places.remaining -= count;
    work.promised -= count;
    this.#promisedTotal -= count;
  }

  #workOf(keyId: string): KeyWork {
    let work = this.#work.get(keyId);
    if (!work) {
      work = { waiting: [], admissions: [], promised: 0, running: 0, maxRunning: Number.POSITIVE_INFINITY };
      this.#work.set(keyId, work);
    }
    return work;
  }

  #forgetIfIdle(keyId: string): void {
    const work = this.#work.get(keyId);
    if (work && work.waiting.length === 0 && work.admissions.length === 0 && work.running === 0) this.#work.delete(keyId);
  }

  #enqueue(
    keyId: string,
    resolve: (slot: RenderSlot) => void,
    reject: (error: unknown) => void,
    signal: AbortSignal | undefined,
    maxWaitMs: number,
  ): void {
    const work = this.#workOf(keyId);
    const leave = () => {
      const index = work.waiting.indexOf(waiter);
      if (index < 0) return false;
      work.waiting.splice(index, 1);
      this.#waitingTotal--;
      if (work.waiting.length === 0) this.#turns.splice(this.#turns.indexOf(keyId), 1);
      this.#forgetIfIdle(keyId);
      waiter.cleanup();
      return true;
    };
    const onAbort = () => {
      if (leave()) reject(signal?.reason);
    };
    const timer = Number.isFinite(maxWaitMs)
      ? setTimeout(() => {
          if (!leave()) return;
          const retryAfter = this.retryAfterSeconds();
          reject(new ServiceBusyError(`The service is busy: the document waited ${maxWaitMs} ms for its turn. Retry in ${retryAfter} s.`, retryAfter));
        }, maxWaitMs)
      : undefined;
    const waiter: Waiter = {
      grant: resolve,
      cleanup: () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      },
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (work.waiting.length === 0) this.#turns.push(keyId);
    work.waiting.push(waiter);
    this.#waitingTotal++;
    this.#dispatch();
  }

  /**
   * Gives free slots to waiting documents, one key's turn after another. A key at its share keeps
   * its place in the turns and is passed over until one of its documents is done.
   */
  #dispatch(): void {
    while (this.#running < this.#limits.slots) {
      const turn = this.#turns.findIndex((keyId) => {
        const work = this.#work.get(keyId) as KeyWork;
        return work.running < this.#capOf(work);
      });
      if (turn < 0) return;
      const [keyId] = this.#turns.splice(turn, 1) as [string];
      const work = this.#work.get(keyId) as KeyWork;
      const waiter = work.waiting.shift() as Waiter;
      this.#waitingTotal--;
      // Its next document, if any, waits for the key's next turn, behind every other key's.
      if (work.waiting.length > 0) this.#turns.push(keyId);
      waiter.cleanup();
      waiter.grant(this.#grant(keyId, work));
    }
  }

  #grant(keyId: string, work: KeyWork): RenderSlot {
    this.#running++;
    work.running++;
    const started = performance.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#running--;
      work.running--;
      this.#forgetIfIdle(keyId);
      this.#serviceMs += SERVICE_TIME_WEIGHT * (performance.now() - started - this.#serviceMs);
      this.#dispatch();
    };
    return { release, [Symbol.dispose]: release };
  }
}

let processCapacity: RenderCapacity | undefined;

/** This process's render capacity, sized by the settings on first use. */
export function renderCapacity(): RenderCapacity {
  processCapacity ??= new RenderCapacity({
    slots: settings.renderConcurrency,
    maxQueued: settings.maxQueuedRenders,
    maxQueueWaitMs: settings.maxQueueWaitMs,
  });
  return processCapacity;
}

/** Whose work the current request is, and how its render takes its turn (see takeRenderSlot). */
interface RenderTurn extends KeyShare {
  readonly keyId: string;
  /** A single document's own admission. */
  readonly admission?: Admission;
  /** A batch item (the local Invoke endpoint): it takes up a place promised to its key's batch. */
  readonly batchItem?: boolean;
  /** The caller gave up: a render still waiting is dropped. */
  readonly signal?: AbortSignal;
}

const currentTurn = new AsyncLocalStorage<RenderTurn>();
/** The signal of the current request's caller leaving, where the server knows it (the local gateway). */
const callerLeft = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs a request's handler knowing when its caller leaves (the local gateway): its document, if it
 * is still waiting for its turn then, is dropped (and its reserved quota given back).
 */
export function whileCallerWaits<T>(signal: AbortSignal, work: () => T): T {
  return callerLeft.run(signal, work);
}

/** Renders run outside any request (the local stack's warm-up, tools) wait under this key. */
const INTERNAL_WORK = '(internal)';

/**
 * Admits one document of `keyId` for the rest of this request (503 `service_busy` at once, before
 * anything is charged, when the queue cannot take it): its render then takes its turn under this
 * admission. Release it when the request is answered: `using admission = admitRender(keyId)`.
 */
export function admitRender(keyId: string, share: KeyShare = {}): Admission {
  const admission = renderCapacity().admit(keyId, 1);
  const signal = callerLeft.getStore();
  // The rest of the calling request (its continuations only, never its caller) renders under it.
  currentTurn.enterWith({ keyId, admission, ...share, ...(signal && { signal }) });
  return admission;
}

/** Admits a whole batch of `count` documents for `keyId`, or throws ServiceBusyError (503). */
export function admitBatch(keyId: string, count: number): Admission {
  return renderCapacity().admitBatch(keyId, count);
}

/** Runs `work` as one item of a batch of `keyId`: its render takes up a place of that batch. */
export function asBatchItem<T>(keyId: string, signal: AbortSignal, work: () => T, share: KeyShare = {}): T {
  return currentTurn.run({ keyId, batchItem: true, signal, ...share }, work);
}

/**
 * Runs `work` (a run of an asynchronous job) as `keyId`'s: its documents take their turns in the
 * key's own line, within its share, waiting as long as `share.maxWaitMs` allows rather than a
 * request's few seconds (a job has minutes; only its key's own documents are ahead of it).
 */
export function asKeyWork<T>(keyId: string, share: KeyShare, work: () => T): T {
  return currentTurn.run({ keyId, ...share }, work);
}

/**
 * The render slot of the current work, once its turn comes (lib/render/render.ts, around the
 * browser's part of a document). A single document that waited too long fails with
 * ServiceBusyError (503); a batch item with a failed render of its own (its batch goes on).
 */
export async function takeRenderSlot(): Promise<RenderSlot> {
  const turn = currentTurn.getStore();
  try {
    const share: KeyShare = {
      ...(turn?.maxRunning !== undefined && { maxRunning: turn.maxRunning }),
      ...(turn?.maxWaitMs !== undefined && { maxWaitMs: turn.maxWaitMs }),
    };
    if (turn?.admission) return await turn.admission.acquire({ ...share, ...(turn.signal && { signal: turn.signal }) });
    return await renderCapacity().acquire(turn?.keyId ?? INTERNAL_WORK, {
      ...share,
      ...(turn?.signal && { signal: turn.signal }),
      batchItem: turn?.batchItem === true,
    });
  } catch (error) {
    if (!turn?.batchItem) throw error;
    const reason = error instanceof ServiceBusyError ? error.message : 'its caller gave up while it waited for its turn';
    throw new DocumentError('RENDER_FAILED', `This item was not rendered: ${reason} Nothing was charged for it.`, { cause: error });
  }
}
