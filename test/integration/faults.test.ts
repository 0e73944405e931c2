/**
 * Crashes (issue #17): the local stack is killed with SIGKILL, its whole process tree at once, at
 * random instants of batches and of single requests, and started again on the same data, over and
 * over. Afterwards a customer is charged for exactly the PDFs they can list and download:
 * quota used == listed PDFs == PDFs whose link downloads, and every PDF handed back before a
 * crash is among them.
 *
 * The stacks here are child processes of their own (`node lib/local/start.ts`, as `npm start`
 * runs), on a data directory of their own: the shared test stack is never touched.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../fidelity/corpus/assets.ts';
import { createBenchKey, killStackProcess, startStackProcess, type BenchKey, type StackProcess } from '../../bench/lib/stack-process.ts';

/**
 * Kill instants: during batches, then during bursts of single requests: eight crashes, each with
 * work in flight (FAULT_SEED=n draws other instants).
 */
const BATCH_ROUNDS = 4;
const SINGLE_ROUNDS = 4;
const BATCH_SIZE = 20;
const SINGLES_PER_ROUND = 8;
/** Instants are drawn from [0, MAX_INSTANT_MS) after the requests are sent, from a fixed seed. */
const MAX_INSTANT_MS = 3_000;
const SEED = Number(process.env.FAULT_SEED ?? 1_717);

const invoice = (n: number) => `<!doctype html><h1>Invoice ${n}</h1><table>${'<tr><td>Item</td><td>12.00</td></tr>'.repeat(20)}</table>`;

/**
 * Item i of n waits (i + 1) / n of the kill window before printing: the round's work ends at different
 * instants, so a kill finds items waiting, rendering and storing, and the last item is still at work
 * at any instant of the window, however fast the machine renders (without it, a fast machine
 * finished rounds before their kill and the test proved less than it says).
 */
const spreadDelay = (i: number, n: number) => Math.round((MAX_INSTANT_MS * (i + 1)) / n);

describe(`kill -9 at random instants (seed ${SEED})`, () => {
  let dataDir: string;
  let stack: StackProcess | undefined;
  let key: BenchKey;
  /** Ids of the PDFs the API handed back (a 200 on generate, a successful batch item) before a crash. */
  const handedBack = new Set<string>();
  const instants: number[] = [];
  /** Rounds whose requests were still running when the stack was killed. */
  let killedMidWork = 0;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-faults-'));
  });

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown) =>
    fetch(`${stack!.info.apiUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

  it(`survives ${BATCH_ROUNDS + SINGLE_ROUNDS} crashes with charged == listed == downloadable`, async () => {
    const next = seededRandom(SEED);
    stack = await startStackProcess(dataDir);
    key = await createBenchKey(dataDir);

    for (let round = 0; round < BATCH_ROUNDS + SINGLE_ROUNDS; round++) {
      if (round > 0) stack = await startStackProcess(dataDir);
      // Prepare: work in flight
      const inFlight: Promise<void>[] = [];
      if (round < BATCH_ROUNDS) {
        const pdfs = Array.from({ length: BATCH_SIZE }, (_, i) => ({ html: invoice(round * 100 + i), options: { wait_delay_ms: spreadDelay(i, BATCH_SIZE) } }));
        inFlight.push(
          post('/v1/pdf/batch', { pdfs }).then(({ status, body }) => {
            if (status !== 200) return;
            for (const result of body.results) if (result.success) handedBack.add(result.pdf_id);
          }),
        );
      } else {
        for (let i = 0; i < SINGLES_PER_ROUND; i++) {
          inFlight.push(
            post('/v1/pdf/generate', { html: invoice(round * 100 + i), wait_delay_ms: spreadDelay(i, SINGLES_PER_ROUND) }).then(({ status, body }) => {
              if (status === 200) handedBack.add(body.id);
            }),
          );
        }
      }
      const instant = Math.floor(next() * MAX_INSTANT_MS);
      instants.push(instant);

      // Act: the crash
      let finished = false;
      const all = Promise.allSettled(inFlight).then(() => (finished = true));
      await new Promise((resolve) => setTimeout(resolve, instant));
      if (!finished) killedMidWork++;
      await killStackProcess(stack);
      await all;
    }
    console.info(`faults: ${instants.length} kills at ${instants.join(', ')} ms (${killedMidWork} mid-work); ${handedBack.size} PDFs handed back before them`);

    // The stack after the last crash: it settles what the dead requests held as it starts.
    stack = await startStackProcess(dataDir);
    const usage = await fetch(`${stack.info.apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${key.apiKey}` } }).then((r) => r.json() as any);
    const listed: { id: string; url: string; size: number }[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100';
      const page = (await fetch(`${stack.info.apiUrl}/v1/pdf${query}`, { headers: { Authorization: `Bearer ${key.apiKey}` } }).then((r) => r.json())) as any;
      listed.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    const downloadable: string[] = [];
    for (const record of listed) {
      const response = await fetch(record.url, { redirect: 'follow' });
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (response.status === 200 && bytes.byteLength === record.size) downloadable.push(record.id);
      else console.info(`faults: ${record.id} (${record.size} bytes) downloads as ${response.status}, ${bytes.byteLength} bytes`);
    }

    console.info(`faults: after the crashes ${usage.quota_used} charged, ${listed.length} listed, ${downloadable.length} downloadable`);

    // Assess
    const listedIds = listed.map((record) => record.id).sort();
    expect({ charged: usage.quota_used, downloadable: downloadable.sort() }).toEqual({ charged: listed.length, downloadable: listedIds });
    expect([...handedBack].filter((id) => !listedIds.includes(id))).toEqual([]);
    // The crashes did hit work in flight, or the test proves nothing.
    expect(killedMidWork).toBeGreaterThanOrEqual(BATCH_ROUNDS + SINGLE_ROUNDS - 1);
  }, 600_000);
});
