/**
 * A memory budget per document (issue #29, item 3): a document that makes its renderer hold more
 * than RENDER_MEMORY_BUDGET_MB (here 1 GB) has its renderer killed and fails 422
 * `memory_limit_exceeded`, uncharged, while the whole stack stays under 3 GB and the next document
 * prints at once. The three documents are the ones that took Chromium to 6.4 GB before: a 48 KB PNG
 * of 20000 x 20000 pixels, 3 GiB of typed arrays, and a 60-inch page drawn with a blur.
 *
 * A local stack of this file's own (in this worker's process), so that its process tree (this
 * worker, its browser and the browser's renderers) is what is measured, and no other file's
 * documents share its browser.
 */
import { deflateSync, crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TreeRssSampler } from '../../bench/lib/rss.ts';
import { startPrivateStack, type PrivateStack } from '../support/private-stack.ts';

const BUDGET_MB = 1_024;

/** A PNG of `side` x `side` 1-bit palette pixels, all one colour: tens of KB that decode to side² x 4 bytes. */
function pngBomb(side: number): string {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed) >>> 0);
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([1, 3, 0, 0, 0], 8); // bit depth 1, palette, deflate, no filter method, no interlace
  const rows = Buffer.alloc((1 + Math.ceil(side / 8)) * side);
  const png = Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('PLTE', Buffer.from([200, 30, 30, 0, 0, 0])),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return png.toString('base64');
}

describe(`a memory budget of ${BUDGET_MB} MB per document`, () => {
  let service: PrivateStack;
  let apiKey: string;
  const sampler = new TreeRssSampler();

  beforeAll(async () => {
    service = await startPrivateStack({ RENDER_MEMORY_BUDGET_MB: String(BUDGET_MB), RENDER_TIMEOUT_MS: '30000' });
    apiKey = await service.createKey('pro');
    sampler.start(50);
  }, 120_000);

  afterAll(async () => {
    sampler.stop();
    await service?.stop();
  });

  const hostile: [string, Record<string, unknown>][] = [
    ['an image bomb (48 KB PNG of 20000 x 20000 pixels)', { html: `<h1>Bomb</h1><img src="data:image/png;base64,${pngBomb(20_000)}">` }],
    [
      'a 3 GiB script allocation',
      { html: '<p>allocating</p><script>window.kept = []; for (let i = 0; i < 3; i++) window.kept.push(new Uint8Array(1024 ** 3).fill(1));</script>' },
    ],
    [
      'a giant blurred page (60 x 60 in)',
      {
        html: '<div style="width:58in;height:58in;background:repeating-linear-gradient(45deg,#c33 0 20px,#33c 20px 40px);filter:blur(30px)"></div>',
        width: '60in',
        height: '60in',
      },
    ],
  ];

  it.each(hostile)('%s fails 422 memory_limit_exceeded, uncharged; the stack stays under 3 GB and the next document prints', async (name, body) => {
    // Prepare
    const usedBefore = await service.quotaUsed(apiKey);
    sampler.watch(process.pid, name);

    // Act
    const refused = await service.generate(apiKey, body);
    const started = performance.now();
    const next = await service.generate(apiKey, { html: `<h1>After ${name}</h1>` });
    const nextMs = performance.now() - started;
    sampler.watch(process.pid, 'idle');

    // Assess
    const peakMiB = sampler.peaks()[name]!.peakMiB;
    console.info(`${name}: ${refused.status} ${refused.body?.error?.code}; stack peak ${peakMiB} MiB; next document ${Math.round(nextMs)} ms`);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'memory_limit_exceeded', memory_limit_mb: BUDGET_MB });
    expect(peakMiB).toBeLessThan(3 * 1024);
    // Not handed the refused document's renderer (it would fail too): printed, and charged.
    expect(next.status).toBe(200);
    expect(await service.quotaUsed(apiKey)).toBe(usedBefore + 1);
  }, 90_000);
});
