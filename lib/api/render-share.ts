/**
 * A request's part of its key's share of the renderers (lib/accounts/render-leases.ts), taken before
 * anything is charged: 503 `service_busy` with `Retry-After` when the key's share is taken.
 */
import { limitsFor, type ApiKey } from '#lib/accounts/keys.ts';
import { isRefusal, leaseRenders, type RenderLease } from '#lib/accounts/render-leases.ts';
import { counterStore } from '#lib/aws/stores.ts';
import { serviceBusy } from './errors.ts';

/**
 * Up to `want` renders for this request, for at most `lifetimeMs` (the function's time left: a
 * lease outliving its function would hold the key's share for nothing), and at least `atLeast`.
 */
export async function takeRenderShare(apiKey: ApiKey, { want, atLeast = 1, lifetimeMs }: { want: number; atLeast?: number; lifetimeMs: number }): Promise<RenderLease> {
  const ceiling = limitsFor(apiKey).maxConcurrentRenders;
  const taken = await leaseRenders(counterStore(), { keyId: apiKey.keyId, want, atLeast, ceiling, lifetimeMs });
  if (!isRefusal(taken)) return taken;
  throw serviceBusy(
    taken.retryAfterSeconds,
    `This key is rendering ${taken.active} documents at once, its ${apiKey.tier} tier's share is ${ceiling}. Nothing was charged; retry in ${taken.retryAfterSeconds} s, or send it with "async": true to wait in line.`,
  );
}
