/**
 * Lambda's concurrency limits, as the local stack enforces them (shared/spec/beyond.md "Lambda's
 * limits, locally"): every function invocation in flight counts against the account's concurrent
 * executions (`LAMBDA_ACCOUNT_CONCURRENCY`, 1000 as on an established account, 10 on many new
 * ones), API-driven ones included; a function with reserved concurrency has that many of its own
 * and no more, taken out of the account's pool.
 *
 * An invocation past a limit is throttled as Lambda throttles it: the Invoke API answers 429
 * `TooManyRequestsException` with Lambda's `Reason` (lib/local/invoke.ts), API Gateway answers
 * from its INTEGRATION_FAILURE gateway response, 503 `service_busy` (lib/local/gateway.ts, as
 * cdk/constructs/rest-api.ts maps it in AWS), and an asynchronous invoke waits in Lambda's queue.
 */

/** Lambda's own words for why it throttled an invocation (the `Reason` of TooManyRequestsException). */
export type ThrottleReason = 'ConcurrentInvocationLimitExceeded' | 'ReservedFunctionConcurrentInvocationLimitExceeded';

export interface ConcurrencyLimits {
  /** The account's concurrent executions, all functions together. */
  readonly account: number;
  /** Functions with reserved concurrency: at most that many each, out of the account's pool. */
  readonly reserved?: Readonly<Record<string, number>>;
}

export class LambdaConcurrency {
  readonly #limits: ConcurrencyLimits;
  readonly #running = new Map<string, number>();
  /** Invocations in flight that draw on the unreserved pool. */
  #unreservedRunning = 0;
  #throttled = 0;

  constructor(limits: ConcurrencyLimits) {
    if (!Number.isInteger(limits.account) || limits.account < 1) throw new Error('the account concurrency must be a positive integer');
    const reservedTotal = Object.values(limits.reserved ?? {}).reduce((sum, count) => sum + count, 0);
    if (reservedTotal >= limits.account) throw new Error('reserved concurrency must leave part of the account concurrency unreserved');
    this.#limits = limits;
  }

  /** Invocations in flight and throttled so far (tests, the bench). */
  get state(): { readonly running: number; readonly throttled: number } {
    let running = 0;
    for (const count of this.#running.values()) running += count;
    return { running, throttled: this.#throttled };
  }

  /**
   * Starts one invocation of `functionName` if a limit allows it: the release to call when it
   * ends, or the reason it is throttled.
   */
  tryStart(functionName: string): { release: () => void } | { throttled: ThrottleReason } {
    const reserved = this.#limits.reserved?.[functionName];
    const running = this.#running.get(functionName) ?? 0;
    if (reserved !== undefined) {
      if (running >= reserved) return this.#throttle('ReservedFunctionConcurrentInvocationLimitExceeded');
    } else if (this.#unreservedRunning >= this.#unreservedPool()) {
      return this.#throttle('ConcurrentInvocationLimitExceeded');
    }
    this.#running.set(functionName, running + 1);
    if (reserved === undefined) this.#unreservedRunning++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#running.set(functionName, (this.#running.get(functionName) ?? 1) - 1);
        if (reserved === undefined) this.#unreservedRunning--;
      },
    };
  }

  #unreservedPool(): number {
    return this.#limits.account - Object.values(this.#limits.reserved ?? {}).reduce((sum, count) => sum + count, 0);
  }

  #throttle(reason: ThrottleReason): { throttled: ThrottleReason } {
    this.#throttled++;
    return { throttled: reason };
  }
}

/**
 * Lambda refused an invocation past a concurrency limit, as a caller in this process learns it (the
 * Lambda emulation's invoke, test/lambda/emulator): a gateway in front answers it as API Gateway
 * answers a throttled integration (lib/local/gateway.ts).
 */
export class FunctionThrottledError extends Error {
  readonly reason: ThrottleReason;
  constructor(functionName: string, reason: ThrottleReason) {
    super(`Rate Exceeded. (${functionName}: ${reason})`);
    this.reason = reason;
  }
}

/** The body and error type the Lambda Invoke API answers a throttled invocation with (HTTP 429). */
export function throttledInvokeAnswer(reason: ThrottleReason): { headers: Record<string, string>; body: string } {
  return {
    headers: { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'TooManyRequestsException' },
    body: JSON.stringify({ Reason: reason, Type: 'User', message: 'Rate Exceeded.' }),
  };
}
