/**
 * Which due webhook deliveries a sender starts next, fairly between API keys: a key whose receivers
 * are slow (or never answer) holds at most its own few sender slots, and any other key's due
 * delivery takes the next free one. Pure, so the rule is tested on its own (test/unit/webhook-picking.test.ts).
 */

export interface SenderLoad {
  /** Sender slots free now. */
  readonly freeSlots: number;
  /** Most tries one key may have under way at once. */
  readonly perKeyLimit: number;
  /** Tries under way, by API key. */
  readonly inFlightByKey: ReadonlyMap<string, number>;
}

/**
 * Picks up to `freeSlots` of `due` (soonest first) to try now: round-robin over API keys, keys
 * with the fewest tries under way first (then the one waiting longest), one delivery of each key
 * per turn, none of a key already at `perKeyLimit`. Each key's deliveries keep their order.
 */
export function pickDueDeliveries<T extends { readonly keyId: string }>(due: readonly T[], load: SenderLoad): T[] {
  const queues = new Map<string, { room: number; busy: number; first: number; waiting: T[] }>();
  due.forEach((delivery, position) => {
    let queue = queues.get(delivery.keyId);
    if (!queue) {
      const busy = load.inFlightByKey.get(delivery.keyId) ?? 0;
      queue = { room: load.perKeyLimit - busy, busy, first: position, waiting: [] };
      queues.set(delivery.keyId, queue);
    }
    if (queue.waiting.length < queue.room) queue.waiting.push(delivery);
  });
  const turns = [...queues.values()].filter((queue) => queue.waiting.length > 0).sort((a, b) => a.busy - b.busy || a.first - b.first);
  const picked: T[] = [];
  for (let round = 0; picked.length < load.freeSlots; round++) {
    const before = picked.length;
    for (const queue of turns) {
      if (picked.length >= load.freeSlots) break;
      const next = queue.waiting[round];
      if (next) picked.push(next);
    }
    if (picked.length === before) break;
  }
  return picked;
}
