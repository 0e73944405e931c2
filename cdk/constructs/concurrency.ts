/**
 * Lambda concurrency as a deployment chooses it: none by default, so the stack deploys as it is on
 * a new account (whose concurrency quota is often 10, and which can then reserve none: Lambda keeps
 * at least 100 of an account's concurrency unreserved, and refuses a reservation or a provisioned
 * configuration that would leave less). Three CDK context switches (names fixed by
 * ../shared/spec/beyond.md, "Lambda's limits, locally") turn it on:
 *
 * - `renderReservedConcurrency`: the render function's reserved concurrency, both a floor (no other
 *   function can take it) and a ceiling (past it the batches' render invokes are throttled, which
 *   leaves the rest of the account to generate and the other functions).
 * - `generateProvisionedConcurrency`, `renderProvisionedConcurrency`: environments kept initialised
 *   (no cold start), on an alias of a published version; whoever invokes the function invokes that
 *   alias (API Gateway for generate; the batch and job functions for render), or the provisioned
 *   environments would sit idle while `$LATEST` starts cold ones.
 */
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Node } from 'constructs';
import type { FunctionName, InternalFunctionName } from '#lib/api/routes.ts';

/** The alias that carries provisioned concurrency, and that every caller of such a function invokes. */
export const LIVE_ALIAS = 'live';

export interface FunctionConcurrency {
  /** ReservedConcurrentExecutions of the function. */
  readonly reserved?: number;
  /** ProvisionedConcurrentExecutions of its `live` alias. */
  readonly provisioned?: number;
}

export type ConcurrencySettings = Readonly<Partial<Record<FunctionName | InternalFunctionName, FunctionConcurrency>>>;

/** Each context switch, and the function and setting it governs. */
export const CONCURRENCY_SWITCHES = {
  renderReservedConcurrency: { function: 'render', setting: 'reserved' },
  generateProvisionedConcurrency: { function: 'generate', setting: 'provisioned' },
  renderProvisionedConcurrency: { function: 'render', setting: 'provisioned' },
} as const satisfies Record<string, { function: FunctionName | InternalFunctionName; setting: keyof FunctionConcurrency }>;

export type ConcurrencySwitch = keyof typeof CONCURRENCY_SWITCHES;

/**
 * A switch's value: a positive whole number, as `-c name=20` (a string) or cdk.json (a number)
 * gives it; unset is off. Anything else stops the synth with a message naming the switch.
 */
function switchValue(node: Node, name: ConcurrencySwitch): number | undefined {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined) return undefined;
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < 1) {
    throw new Error(
      `Context ${name} must be a positive whole number of concurrent executions, got ${JSON.stringify(value)}; ` +
        'leave it unset for none (the default, which a new account needs).',
    );
  }
  return parsed;
}

/** The concurrency switches from CDK context, checked (see `checkConcurrency`); `{}` when none is set. */
export function concurrencyFromContext(node: Node): ConcurrencySettings {
  const settings: Partial<Record<FunctionName | InternalFunctionName, { reserved?: number; provisioned?: number }>> = {};
  for (const [name, { function: fn, setting }] of Object.entries(CONCURRENCY_SWITCHES) as [ConcurrencySwitch, (typeof CONCURRENCY_SWITCHES)[ConcurrencySwitch]][]) {
    const value = switchValue(node, name);
    if (value !== undefined) (settings[fn] ??= {})[setting] = value;
  }
  checkConcurrency(settings);
  return settings;
}

/**
 * What Lambda would refuse at deploy time, refused at synth instead: provisioned concurrency beyond
 * the function's reserved concurrency (it is drawn from it). What depends on the account (at least
 * 100 left unreserved) can only be checked by deploying; docs/deploying.md says how to read the quota.
 */
export function checkConcurrency(settings: ConcurrencySettings): void {
  for (const [name, { reserved, provisioned } = {}] of Object.entries(settings)) {
    for (const [what, value] of [['reserved', reserved], ['provisioned', provisioned]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
        throw new Error(`The ${name} function's ${what} concurrency must be a positive whole number, got ${value}`);
      }
    }
    if (reserved !== undefined && provisioned !== undefined && provisioned > reserved) {
      throw new Error(
        `The ${name} function's provisioned concurrency (${provisioned}) cannot exceed its reserved concurrency (${reserved}): ` +
          'Lambda draws provisioned environments from the reservation.',
      );
    }
  }
}

/**
 * What callers of a function invoke: its `live` alias (on the current published version) carrying
 * the provisioned concurrency, or, without provisioned concurrency, the function itself (no version,
 * no alias: the template is the same as without any switch).
 */
export function invocationTarget(fn: NodejsFunction, concurrency: FunctionConcurrency | undefined): IFunction {
  if (!concurrency?.provisioned) return fn;
  return fn.addAlias(LIVE_ALIAS, { provisionedConcurrentExecutions: concurrency.provisioned });
}
