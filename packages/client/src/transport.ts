/**
 * How every call reaches the API: `fetch` only (Node 18+, Deno, Bun, edge runtimes, browsers), with
 * the behaviour a caller expects of a paid API's client:
 * - retries of 429, 503 and network failures, waiting what `Retry-After` asks or else an exponential
 *   backoff with full jitter (so many clients refused at once do not come back at once);
 * - one `Idempotency-Key` per creating POST, generated unless given, and the same key on every retry
 *   of it, so a retry after a lost answer returns the first PDF instead of charging a second;
 * - a timeout per attempt and the caller's AbortSignal, which stops the request and its retries.
 * A network failure is retried only when repeating the request cannot do a thing twice: reads,
 * deletes, PUTs, and POSTs that carry an idempotency key. A 429 or 503 means nothing ran: always retried.
 */
import { errorFromResponse, PdfApiConnectionError, PdfApiTimeoutError, retryAfterSeconds } from './errors.ts';

export interface RetryOptions {
  /** Retries after the first attempt (2). 0 turns retrying off. */
  readonly maxRetries?: number;
  /** First backoff (500 ms), doubled each retry up to `maxDelayMs` (8 s); the wait is a random part of it. */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** A `Retry-After` longer than this (60 s) is not waited for: the error is thrown with `retry_after` in its details. */
  readonly maxRetryAfterMs?: number;
}

export interface RequestOptions {
  /** Longest wait for each attempt's answer (60 s; a synchronous render may take up to 29 s at the gateway). */
  readonly timeoutMs?: number;
  /** Stops the request and any retry still to come. */
  readonly signal?: AbortSignal;
  /** This call's retries, over the client's. */
  readonly maxRetries?: number;
  /**
   * On the calls that create PDFs (generate, batch, bulk): the key that makes the call safe to
   * repeat (the same key and request within 24 hours answer the first response, charged once).
   * Generated per call when absent, and reused by its retries; `false` sends none.
   */
  readonly idempotencyKey?: string | false;
}

export interface TransportOptions extends RetryOptions {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  readonly fetch?: typeof globalThis.fetch | undefined;
  readonly timeoutMs?: number;
  /** Sent as `User-Agent` where the runtime allows it (not in browsers). */
  readonly userAgent?: string;
}

export interface Call {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly body?: unknown;
  /** Whether the operation takes an `Idempotency-Key` (generate, batch, bulk). */
  readonly idempotent?: boolean;
  /** Sent without the key (download links: their signature is the credential). */
  readonly keyless?: boolean;
  readonly accept?: string;
  /** A URL outside the API's base (a download link), instead of `path`. */
  readonly absoluteUrl?: string;
}

const RETRIED_STATUSES = new Set([429, 503]);

/** A random key per creating call, as Stripe's client makes them. */
export function newIdempotencyKey(): string {
  // Node 18 has no global crypto; a key needs to be unique, not secret.
  const random = globalThis.crypto?.randomUUID?.() ?? Array.from({ length: 4 }, () => Math.random().toString(36).slice(2, 10)).join('-');
  return `pdfapi-${random}`;
}

/** The wait before retry `attempt` (1, 2, …): the answer's Retry-After, else full-jitter exponential backoff. */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, { initialDelayMs = 500, maxDelayMs = 8_000 }: RetryOptions = {}, random = Math.random): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** (attempt - 1));
  // Never less than a tenth of the ceiling: a zero wait would just meet the same overload again.
  return Math.round(ceiling * (0.1 + 0.9 * random()));
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal?.addEventListener('abort', stop, { once: true });
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

export class Transport {
  readonly baseUrl: string;
  readonly #options: TransportOptions;
  readonly #fetch: typeof globalThis.fetch;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Looked up at call time, so a fetch replaced after the client was made (tests, polyfills) is used.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** A URL of the API, with its query (absent values left out). */
  url(path: string, query: Call['query'] = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  /** The successful answer (its body unread), or the API's error thrown, after the retries. */
  async send(call: Call, options: RequestOptions = {}): Promise<Response> {
    const maxRetries = options.maxRetries ?? this.#options.maxRetries ?? 2;
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? 60_000;
    const headers: Record<string, string> = { accept: call.accept ?? 'application/json' };
    if (this.#options.apiKey && !call.keyless) headers.authorization = `Bearer ${this.#options.apiKey}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (this.#options.userAgent && typeof (globalThis as { window?: unknown }).window === 'undefined') headers['user-agent'] = this.#options.userAgent;
    const key = call.idempotent && options.idempotencyKey !== false ? (options.idempotencyKey ?? newIdempotencyKey()) : undefined;
    if (key !== undefined) headers['idempotency-key'] = key;
    // Repeating a request that failed on the way is safe only when it cannot do anything twice.
    const safeToRepeat = call.method !== 'POST' || key !== undefined;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const url = call.absoluteUrl ?? this.url(call.path, call.query);

    for (let attempt = 0; ; attempt += 1) {
      options.signal?.throwIfAborted();
      const attemptController = new AbortController();
      const onAbort = () => attemptController.abort(options.signal!.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        attemptController.abort();
      }, timeoutMs);
      let response: Response;
      try {
        response = await this.#fetch(url, { method: call.method, headers, body, signal: attemptController.signal, redirect: 'follow' });
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        const failure = timedOut
          ? new PdfApiTimeoutError(`no answer from ${call.method} ${call.path} within ${timeoutMs} ms${key ? ` (repeat it with Idempotency-Key ${key} to get its PDF without paying twice)` : ''}`)
          : new PdfApiConnectionError(`cannot reach ${this.baseUrl}: ${describeNetworkError(error)}`, error);
        if (!safeToRepeat || attempt >= maxRetries || (isAbort(error) && !timedOut)) throw failure;
        await sleep(retryDelayMs(attempt + 1, undefined, this.#options), options.signal);
        continue;
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      }
      if (response.ok) return response;
      const error = await errorFromResponse(response);
      if (!RETRIED_STATUSES.has(response.status) || attempt >= maxRetries) throw error;
      const after = retryAfterSeconds(response) ?? (typeof error.details.retry_after === 'number' ? error.details.retry_after : undefined);
      const afterMs = after === undefined ? undefined : after * 1000;
      if (afterMs !== undefined && afterMs > (this.#options.maxRetryAfterMs ?? 60_000)) throw error;
      await sleep(retryDelayMs(attempt + 1, afterMs, this.#options), options.signal);
    }
  }

  /** The answer's JSON. */
  async json<T>(call: Call, options?: RequestOptions): Promise<T> {
    const response = await this.send(call, options);
    return (await response.json()) as T;
  }
}

/** fetch's failure in a few words: its cause's code (ECONNREFUSED, ENOTFOUND, …) when it has one. */
function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
