/**
 * Batch orchestration (lib/documents/batch.ts) with the render function replaced by an injected
 * port: order, shape checks, concurrency bound, per-item timeout, crashes and the batch deadline.
 */
import { describe, expect, it } from 'vitest';
import { RenderThrottledError, runBatch, type BatchRun, type RenderInvocation, type RenderOutcome } from '#lib/documents/batch.ts';
import type { PdfRecord } from '#lib/storage/pdfs.ts';

const record = (id: string, pages = 1): PdfRecord => ({
  id,
  keyId: 'key_x',
  objectKey: `retention/7d/key_x/${id}.pdf`,
  size: 1000 + pages,
  pages,
  format: 'A4',
  generationTimeMs: 5,
  createdAt: '2026-11-21T00:00:00.000Z',
  expiresAt: '2026-11-28T00:00:00.000Z',
  reservationId: 'res_x',
});

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

function batch(items: unknown[], invokeRender: BatchRun['invokeRender'], overrides: Partial<BatchRun> = {}): Promise<unknown[]> {
  return runBatch({
    items,
    owner: { keyId: 'key_x', tier: 'pro' },
    reservationId: 'res_x',
    invokeRender,
    commit: async (record) => record,
    linkFor: (r) => `https://api.example/v1/files/${r.id}`,
    concurrency: 4,
    itemTimeoutMs: 1_000,
    deadlineAt: Date.now() + 60_000,
    ...overrides,
  });
}

describe('runBatch', () => {
  it('keeps input order whatever order items finish in, and echoes metadata as sent', async () => {
    // Prepare: later items finish first.
    const items = [0, 1, 2, 3, 4].map((i) => ({ html: `<p>${i}</p>`, metadata: { reference_id: `ref-${i}`, n: i } }));
    const invoke = async (inv: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> => {
      const i = Number(/\d/.exec(String(inv.item.html))?.[0]);
      await sleep((5 - i) * 20, signal);
      return { ok: true, record: record(`pdf_${i}`, i + 1) };
    };

    // Act
    const results = await batch(items, invoke);

    // Assess
    expect(results).toEqual(
      items.map((item, i) => ({
        success: true,
        pdf_id: `pdf_${i}`,
        download_url: `https://api.example/v1/files/pdf_${i}`,
        pages: i + 1,
        size_bytes: 1001 + i,
        metadata: item.metadata,
        content_type: 'application/pdf',
      })),
    );
  });

  it('reports shape problems without invoking the render function', async () => {
    // Prepare
    let invocations = 0;
    const invoke = async (): Promise<RenderOutcome> => {
      invocations++;
      return { ok: true, record: record('pdf_ok') };
    };
    const items = [
      'not an object',
      { html: '<p>x</p>', colour: 'red' },
      { html: '<p>x</p>', metadata: 'tag' },
      { html: '<p>x</p>', metadata: { filename: 7 } },
      { url: 42 },
      { html: '<p>x</p>', url: 'https://example.com/' },
      { html: '<p>fine</p>' },
    ];

    // Act
    const results = (await batch(items, invoke)) as { success: boolean; error?: { code: string; message: string } }[];

    // Assess
    expect(results.map((r) => r.error?.code ?? 'OK')).toEqual([
      'INVALID_HTML',
      'INVALID_OPTIONS',
      'INVALID_OPTIONS',
      'INVALID_OPTIONS',
      'URL_NOT_ALLOWED',
      'INVALID_OPTIONS',
      'OK',
    ]);
    expect(results[1]?.error?.message).toContain('colour');
    expect(results[3]?.error?.message).toContain('metadata.filename');
    expect(invocations).toBe(1);
  });

  it('passes document failures through as item errors, with no pdf_id or download_url', async () => {
    // Prepare
    const invoke = async (): Promise<RenderOutcome> => ({ ok: false, code: 'INVALID_HTML', message: 'html is malformed: x' });

    // Act
    const [result] = await batch([{ html: '<div' }], invoke);

    // Assess
    expect(result).toEqual({ success: false, error: { code: 'INVALID_HTML', message: 'html is malformed: x' } });
  });

  it('turns a crashed render function into a failed item, not a failed batch', async () => {
    // Prepare
    const invoke = async (inv: RenderInvocation): Promise<RenderOutcome> => {
      if (inv.item.html === 'crash') throw new Error('Runtime.ExitError');
      return { ok: true, record: record('pdf_fine') };
    };

    // Act
    const results = (await batch([{ html: 'crash' }, { html: 'fine' }], invoke)) as { success: boolean; error?: { code: string } }[];

    // Assess
    expect(results[0]).toEqual({ success: false, error: { code: 'RENDER_FAILED', message: expect.any(String) } });
    expect(results[1]?.success).toBe(true);
  });

  it('gives up on a hung item after its own timeout while the others finish', async () => {
    // Prepare
    const invoke = async (inv: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> => {
      await sleep(inv.item.html === 'hang' ? 60_000 : 10, signal);
      return { ok: true, record: record('pdf_fine') };
    };
    const started = Date.now();

    // Act
    const results = (await batch([{ html: 'hang' }, { html: 'a' }, { html: 'b' }], invoke, { itemTimeoutMs: 200 })) as {
      success: boolean;
      error?: { code: string };
    }[];

    // Assess
    expect(results.map((r) => r.error?.code ?? 'OK')).toEqual(['RENDER_TIMEOUT', 'OK', 'OK']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('never has more invocations in flight than its concurrency', async () => {
    // Prepare
    let inFlight = 0;
    let peak = 0;
    const invoke = async (_inv: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> => {
      peak = Math.max(peak, ++inFlight);
      await sleep(5, signal);
      inFlight--;
      return { ok: true, record: record('pdf_x') };
    };

    // Act
    const results = await batch(Array.from({ length: 30 }, () => ({ html: 'x' })), invoke, { concurrency: 3 });

    // Assess
    expect(results).toHaveLength(30);
    expect(peak).toBe(3);
  });

  it('fails the items left when the batch deadline passes, so the batch still answers', async () => {
    // Prepare
    let calls = 0;
    const invoke = async (_inv: RenderInvocation, signal: AbortSignal): Promise<RenderOutcome> => {
      await sleep(++calls === 1 ? 10 : 1_000, signal); // the deadline passes while the second item renders
      return { ok: true, record: record(`pdf_${calls}`) };
    };

    // Act
    const results = (await batch([{ html: 'a' }, { html: 'b' }, { html: 'c' }], invoke, {
      concurrency: 1,
      deadlineAt: Date.now() + 300,
    })) as { success: boolean; error?: { code: string } }[];

    // Assess
    expect(results.map((r) => r.error?.code ?? 'OK')).toEqual(['OK', 'RENDER_TIMEOUT', 'RENDER_TIMEOUT']);
  });

  it('writes the record of an item done in time, never of one that came back after its time', async () => {
    // Prepare: the second item's render ignores its signal and answers late, as a render function still running would
    const committed: string[] = [];
    const invoke = async (inv: RenderInvocation): Promise<RenderOutcome> => {
      const late = inv.item.html === 'late';
      await sleep(late ? 150 : 10);
      return { ok: true, record: record(late ? 'pdf_late' : 'pdf_on_time') };
    };

    // Act
    const results = (await batch([{ html: 'on time' }, { html: 'late' }], invoke, {
      itemTimeoutMs: 100,
      commit: async (r) => (committed.push(r.id), r),
    })) as { success: boolean; error?: { code: string } }[];

    // Assess
    expect(results.map((r) => r.error?.code ?? 'OK')).toEqual(['OK', 'RENDER_TIMEOUT']);
    expect(committed).toEqual(['pdf_on_time']);
  });

  it('an item whose record cannot be written fails, and is not reported as made', async () => {
    // Act
    const results = (await batch([{ html: 'a' }], async () => ({ ok: true, record: record('pdf_a') }), {
      commit: async () => {
        throw new Error('DynamoDB unavailable');
      },
    })) as { success: boolean; error?: { code: string } }[];

    // Assess
    expect(results).toEqual([{ success: false, error: { code: 'RENDER_FAILED', message: 'The PDF could not be stored; nothing was charged for it' } }]);
  });

  it('an asynchronous job run again renders only what an earlier run did not store, under the ids the job decides', async () => {
    // Prepare: item 1 was stored by a run that died; every item's id comes from the job.
    const invoked: { pdfId?: string; renderTimeoutMs?: number }[] = [];
    const invoke = async (inv: RenderInvocation): Promise<RenderOutcome> => {
      invoked.push({ ...(inv.pdfId && { pdfId: inv.pdfId }), ...(inv.renderTimeoutMs && { renderTimeoutMs: inv.renderTimeoutMs }) });
      return { ok: true, record: record(inv.pdfId ?? 'pdf_random') };
    };
    const items = [0, 1, 2].map((i) => ({ html: `<p>${i}</p>` }));

    // Act
    const results = (await batch(items, invoke, {
      madeBefore: {
        pdfIdOf: (index) => `pdf_job_${index}`,
        recordOf: async (index) => (index === 1 ? record('pdf_job_1', 3) : undefined),
        renderTimeoutMs: 600_000,
      },
    })) as { success: boolean; pdf_id: string; pages: number }[];

    // Assess: item 1 reused as it was (3 pages), items 0 and 2 rendered under their job ids.
    expect(results.map((r) => [r.success, r.pdf_id, r.pages])).toEqual([
      [true, 'pdf_job_0', 1],
      [true, 'pdf_job_1', 3],
      [true, 'pdf_job_2', 1],
    ]);
    expect(invoked).toEqual([
      { pdfId: 'pdf_job_0', renderTimeoutMs: 600_000 },
      { pdfId: 'pdf_job_2', renderTimeoutMs: 600_000 },
    ]);
  });

  it('a request retried under its Idempotency-Key adopts what its dead run stored, and reports one deleted since as PDF_GONE without making it again', async () => {
    // Prepare: the dead run stored items 0 and 1; the customer deleted item 1 before retrying.
    const invoked: RenderInvocation[] = [];
    const invoke = async (inv: RenderInvocation): Promise<RenderOutcome> => {
      invoked.push(inv);
      return { ok: true, record: record(inv.pdfId ?? 'pdf_random') };
    };
    const items = [0, 1, 2].map((i) => ({ html: `<p>${i}</p>` }));

    // Act
    const results = (await batch(items, invoke, {
      madeBefore: {
        pdfIdOf: (index) => `pdf_req_${index}`,
        recordOf: async (index) => (index === 0 ? record('pdf_req_0', 2) : index === 1 ? 'gone' : undefined),
      },
    })) as { success: boolean; pdf_id?: string; error?: { code: string } }[];

    // Assess: only item 2 is rendered, under its id, with the request's own render time limit.
    expect(results.map((r) => (r.success ? r.pdf_id : r.error?.code))).toEqual(['pdf_req_0', 'PDF_GONE', 'pdf_req_2']);
    expect(invoked.map((inv) => [inv.pdfId, inv.renderTimeoutMs])).toEqual([['pdf_req_2', undefined]]);
  });
});

describe('runBatch under Lambda throttling', () => {
  /** A render function behind an account with `limit` concurrent executions: past it, invokes are throttled. */
  function throttlingAccount(initialLimit: number, renderMs = 10) {
    let limit = initialLimit;
    let running = 0;
    const seen = { throttled: 0, invocations: 0, groups: [] as number[], maxRunning: 0 };
    const admit = async <T>(work: () => Promise<T>): Promise<T> => {
      if (running >= limit) {
        seen.throttled++;
        throw new RenderThrottledError('throttled');
      }
      running++;
      seen.invocations++;
      seen.maxRunning = Math.max(seen.maxRunning, running);
      try {
        return await work();
      } finally {
        running--;
      }
    };
    const one = (inv: RenderInvocation): RenderOutcome => ({ ok: true, record: record(`pdf_${String(inv.item.html).replace(/\D/g, '')}`) });
    const invokeRender: BatchRun['invokeRender'] = (inv, signal) => admit(async () => (await sleep(renderMs, signal), one(inv)));
    const renderGroup: NonNullable<BatchRun['renderGroup']> = (inv, signal) =>
      admit(async () => {
        seen.groups.push(inv.items.length);
        const outcomes: RenderOutcome[] = [];
        for (const item of inv.items) {
          await sleep(renderMs, signal);
          outcomes.push(one({ ...inv, ...item }));
        }
        return outcomes;
      });
    return { invokeRender, renderGroup, seen, setLimit: (to: number) => void (limit = to), running: () => running };
  }

  it('renders every item of a batch of 100 with 3 concurrent executions, grouping items once throttled, none failed', async () => {
    // Prepare
    const account = throttlingAccount(3);
    const items = Array.from({ length: 100 }, (_, i) => ({ html: `<p>${i}</p>` }));
    const committed: string[] = [];

    // Act
    const results = (await batch(items, account.invokeRender, {
      renderGroup: account.renderGroup,
      concurrency: 100,
      itemTimeoutMs: 5_000,
      deadlineAt: Date.now() + 20_000,
      commit: async (r) => (committed.push(r.id), r),
    })) as { success: boolean; pdf_id?: string }[];

    // Assess
    expect(results.every((r) => r.success)).toBe(true);
    expect(results.map((r) => r.pdf_id)).toEqual(items.map((_, i) => `pdf_${i}`));
    expect(committed).toHaveLength(100);
    expect(account.seen.throttled).toBeGreaterThan(0);
    expect(account.seen.maxRunning).toBeLessThanOrEqual(3);
    expect(Math.max(...account.seen.groups)).toBeGreaterThan(1);
    expect(account.seen.invocations).toBeLessThan(100);
  });

  it('fails only the items that could not start before the deadline, SERVICE_BUSY, and charges none of them', async () => {
    // Prepare: an account that never has room
    const account = throttlingAccount(0);
    const committed: string[] = [];

    // Act
    const results = (await batch(
      Array.from({ length: 5 }, (_, i) => ({ html: `<p>${i}</p>` })),
      account.invokeRender,
      { renderGroup: account.renderGroup, deadlineAt: Date.now() + 300, commit: async (r) => (committed.push(r.id), r) },
    )) as { success: boolean; error?: { code: string; message: string } }[];

    // Assess
    expect(results.map((r) => r.error?.code)).toEqual(Array(5).fill('SERVICE_BUSY'));
    expect(results[0]!.error!.message).toMatch(/Nothing was charged.*async/);
    expect(committed).toEqual([]);
    expect(account.seen.throttled).toBeGreaterThan(1);
  });
  it('widens again when the account has room again: a fan-out narrowed to one invocation grows back', async () => {
    // Prepare: the account has room for 2 at first (another function's burst), for 8 a little later.
    const account = throttlingAccount(2, 20);
    const widthsAfterRoom: number[] = [];
    const items = Array.from({ length: 100 }, (_, i) => ({ html: `<p>${i}</p>` }));
    setTimeout(() => {
      account.setLimit(8);
      const sample = setInterval(() => widthsAfterRoom.push(account.running()), 10);
      setTimeout(() => clearInterval(sample), 1_500);
    }, 150);

    // Act
    const results = (await batch(items, account.invokeRender, {
      renderGroup: account.renderGroup,
      concurrency: 100,
      itemTimeoutMs: 5_000,
      deadlineAt: Date.now() + 20_000,
    })) as { success: boolean }[];

    // Assess: every item made, and the fan-out used the room it got back (well past the 1 it had narrowed to).
    expect(results.every((r) => r.success)).toBe(true);
    expect(account.seen.throttled).toBeGreaterThan(0);
    expect(Math.max(...widthsAfterRoom)).toBeGreaterThanOrEqual(5);
  });

  it('puts the items a group did not start back in line, and renders each once', async () => {
    // Prepare: a render function that takes at most 2 items of a group and says it did not start the rest.
    const account = throttlingAccount(3);
    const rendered: string[] = [];
    const committed: string[] = [];
    const answerWithin: number[] = [];
    const renderGroup: NonNullable<BatchRun['renderGroup']> = async (inv, signal) => {
      answerWithin.push(inv.answerWithinMs!);
      const outcomes = await account.renderGroup({ ...inv, items: inv.items.slice(0, 2) }, signal);
      rendered.push(...inv.items.slice(0, 2).map((item) => String(item.item.html)));
      return [...outcomes, ...inv.items.slice(2).map(() => ({ notStarted: true as const }))];
    };
    const items = Array.from({ length: 40 }, (_, i) => ({ html: `<p>${i}</p>` }));

    // Act
    const results = (await batch(items, account.invokeRender, {
      renderGroup,
      concurrency: 40,
      deadlineAt: Date.now() + 20_000,
      commit: async (r) => (committed.push(r.id), r),
    })) as { success: boolean; pdf_id?: string }[];

    // Assess: all made, in order, none twice; a group was told the time it had, less what its answer needs.
    expect(results.map((r) => r.pdf_id)).toEqual(items.map((_, i) => `pdf_${i}`));
    expect(new Set(committed).size).toBe(40);
    expect(committed).toHaveLength(40);
    expect(answerWithin.length).toBeGreaterThan(0);
    expect(Math.max(...answerWithin)).toBeLessThan(20_000);
  });
});
