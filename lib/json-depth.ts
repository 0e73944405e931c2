/**
 * How deeply a request may nest arrays and objects. No field of the API nests more than a few
 * levels; a deeper value is refused before anything else reads it, so no later step (validation,
 * the batch's echo of an item's metadata, the render invocation's payload, JSON.stringify) can
 * overflow its stack on it.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests deeper than `limit`, found without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
