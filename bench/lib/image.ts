/**
 * Phase `image` (issue #44): what a picture costs against a PDF of the same page. The local stack
 * as a child process over HTTP; the corpus's one-page letter sent in turns, interleaved so both see
 * the same machine, as `POST /v1/image/generate` (PNG at the default 800 x 600 viewport, and a full
 * page) and as `POST /v1/pdf/generate`. Client-side latency of the request (stored, linked, charged),
 * and the server's own generation_time_ms; every file is downloaded and its type checked outside the
 * timed part.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageSize } from 'image-size';
import { download } from './api-client.ts';
import { corpusDocument } from './corpus.ts';
import { createBenchKey, startStackProcess, stopStackProcess } from './stack-process.ts';
import { summarize, type LatencySummary } from './stats.ts';

export interface ImageBenchRow {
  readonly kind: string;
  readonly latency: LatencySummary;
  readonly serverGenerationMs: LatencySummary;
  readonly bytes: number;
}

/** The document pictured and printed: one page, so "the same page" on both sides. */
export const IMAGE_BENCH_DOCUMENT = 'letter';

const KINDS = [
  { kind: 'PDF', path: '/v1/pdf/generate', body: (html: string, options: Record<string, unknown>) => ({ html, ...options }) },
  { kind: 'PNG 800 x 600', path: '/v1/image/generate', body: (html: string) => ({ html }) },
  { kind: 'PNG full page', path: '/v1/image/generate', body: (html: string) => ({ html, image: { full_page: true } }) },
  { kind: 'JPEG 800 x 600, quality 80', path: '/v1/image/generate', body: (html: string) => ({ html, image: { format: 'jpeg', quality: 80 } }) },
] as const;

export async function runImageBench(runs: number, warmup: number, log: (line: string) => void): Promise<ImageBenchRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdf-api-bench-image-'));
  const stack = await startStackProcess(dataDir);
  try {
    const key = await createBenchKey(dataDir);
    const document = corpusDocument(IMAGE_BENCH_DOCUMENT);
    const send = async (kind: (typeof KINDS)[number]) => {
      const started = performance.now();
      const response = await fetch(`${stack.info.apiUrl}${kind.path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key.apiKey}` },
        body: JSON.stringify(kind.body(document.html, document.options as Record<string, unknown>)),
      });
      const text = await response.text();
      const ms = performance.now() - started;
      if (response.status !== 200) throw new Error(`${kind.path} answered ${response.status}: ${text.slice(0, 300)}`);
      const record = JSON.parse(text) as { url: string; size: number; generation_time_ms: number; content_type: string };
      return { ms, record };
    };
    const samples = new Map<string, { ms: number[]; server: number[]; bytes: number }>(KINDS.map((kind) => [kind.kind, { ms: [], server: [], bytes: 0 }]));
    for (let round = 0; round < warmup + runs; round += 1) {
      for (const kind of KINDS) {
        const { ms, record } = await send(kind);
        if (round < warmup) continue;
        const sample = samples.get(kind.kind)!;
        sample.ms.push(ms);
        sample.server.push(record.generation_time_ms);
        sample.bytes = record.size;
        if (round === warmup) {
          // Outside the timed part: the file is what its record says.
          const bytes = await download(record.url);
          if (bytes.byteLength !== record.size) throw new Error(`${kind.kind}: downloaded ${bytes.byteLength} bytes, the record says ${record.size}`);
          if (record.content_type !== 'application/pdf') imageSize(bytes);
        }
      }
    }
    return KINDS.map((kind) => {
      const sample = samples.get(kind.kind)!;
      const row = { kind: kind.kind, latency: summarize(sample.ms), serverGenerationMs: summarize(sample.server), bytes: sample.bytes };
      log(`${kind.kind}: p50 ${row.latency.p50} ms (server ${row.serverGenerationMs.p50} ms), ${row.bytes} bytes`);
      return row;
    });
  } finally {
    await stopStackProcess(stack);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
