/**
 * Where a bulk job's progress is kept (lib/bulk/bulk-records.ts): chunks dealt to shards in turn, so
 * the chunks that run at once (consecutive ones) write to different partition keys, every chunk in
 * exactly one shard, and no shard past CHUNKS_PER_SHARD; jobs stored before keep their layout.
 */
import { describe, expect, it } from 'vitest';
import { CHUNKS_PER_SHARD, chunksInShard, MIN_SHARDS, shardOf, shardsFor } from '#lib/bulk/bulk-records.ts';

describe('the shards of a bulk job’s progress', () => {
  it.each([1, 2, 31, 32, 33, 999, 10_000, 32_001, 100_000])('%i chunks: each in one shard, the shards’ counts add up, none over its bound', (chunks) => {
    // Arrange
    const layout = { chunks, shards: shardsFor(chunks), spread: true };

    // Act
    const counted = new Array<number>(layout.shards).fill(0);
    for (let chunk = 0; chunk < chunks; chunk++) counted[shardOf(layout, chunk)]! += 1;

    // Assess
    expect(layout.shards).toBe(Math.min(chunks, Math.max(MIN_SHARDS, Math.ceil(chunks / CHUNKS_PER_SHARD))));
    expect(counted).toEqual(counted.map((_, shard) => chunksInShard(layout, shard)));
    expect(Math.max(...counted)).toBeLessThanOrEqual(CHUNKS_PER_SHARD);
    expect(Math.min(...counted)).toBeGreaterThanOrEqual(1);
  });

  it('spreads the chunks that run together: a million lines’ first 1,000 chunks write to all 100 shards, 10 each', () => {
    // Arrange: 100,000 chunks of 10 lines
    const layout = { chunks: 100_000, shards: shardsFor(100_000), spread: true };

    // Act
    const perShard = new Map<number, number>();
    for (let chunk = 0; chunk < 1_000; chunk++) perShard.set(shardOf(layout, chunk), (perShard.get(shardOf(layout, chunk)) ?? 0) + 1);

    // Assess
    expect(layout.shards).toBe(100);
    expect(perShard.size).toBe(100);
    expect(new Set(perShard.values())).toEqual(new Set([10]));
  });

  it('keeps the layout of a job stored before: consecutive chunks, CHUNKS_PER_SHARD a shard', () => {
    // Arrange: 2,500 chunks as jobs were planned before (no `spread`)
    const layout = { chunks: 2_500, shards: 3 };

    // Act / Assess
    expect([0, 999, 1_000, 2_499].map((chunk) => shardOf(layout, chunk))).toEqual([0, 0, 1, 2]);
    expect([0, 1, 2].map((shard) => chunksInShard(layout, shard))).toEqual([1_000, 1_000, 500]);
  });
});
