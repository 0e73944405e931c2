/**
 * The customer-code pool (lib/customer-code/pool.ts) with real worker threads: templates filled and
 * checked off this thread, each step ended at its limit by terminating its worker (the engine's
 * own clock cannot interrupt one filter call), a key never holding every worker, and this thread
 * free throughout. What is asserted is the outcome and the order of events, never a duration.
 */
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { CustomerCodePool, type Refusal } from '#lib/customer-code/pool.ts';
import { inspectHtml } from '#lib/render/html.ts';
import { ONE_LONG_FILTER_CALL } from '../support/hostile-templates.ts';
import { HTML_READING_HEAP_MB } from '#lib/customer-code/limits.ts';


/** Counts this thread's timer ticks while `work` runs: a blocked event loop would count none. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  try {
    return { value: await work, ticks };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Limits shorter than production's (./limits.ts: fill 5 s, data check 2 s, save 5 s), so that the
 * tests of a limit wait less; still long enough for the small tasks here on a slow, busy host.
 */
const SHORT_LIMITS = { fill: 1_500, 'data-check': 1_000, 'save-check': 1_500 } as const;

describe('the customer-code pool', () => {
  const pool = new CustomerCodePool({ workers: 2, limitsMs: SHORT_LIMITS });
  afterAll(() => pool.close());

  it('fills a template in a worker', async () => {
    // Act
    const filled = await pool.fill('key-a', { sources: { html: '<p>{{ name }}: {{ total | currency: "EUR" }}</p>', footer_html: '{{ pageNumber }}' }, data: { name: 'Ada', total: 12.5 } });

    // Assess
    expect(filled).toEqual({ sources: { html: '<p>Ada: €12.50</p>', footer_html: '{{pageNumber}}' } });
  });

  it('checks the data against the data_schema first, naming the value at fault', async () => {
    // Act
    const filled = await pool.fill('key-a', {
      sources: { html: '{{ total }}' },
      data: { total: 'twelve' },
      schema: { version: 'key-a/tpl@1', dataSchema: { type: 'object', properties: { total: { type: 'number' } } } },
    });

    // Assess
    expect(filled).toEqual({ refusal: 'data', detail: '/total: must be number' });
  });

  it('ends one filter call that would hold its thread for half a minute at the fill limit, this thread free meanwhile, and serves the next task', async () => {
    // Act
    const { value: hostile, ticks } = await ticksDuring(pool.fill('key-a', { sources: { html: ONE_LONG_FILTER_CALL }, data: {} }));
    const next = await pool.fill('key-a', { sources: { html: '<p>{{ 1 | plus: 1 }}</p>' }, data: {} });

    // Assess
    expect(hostile).toMatchObject({ refusal: 'template', detail: expect.stringContaining(`took longer than ${SHORT_LIMITS.fill} ms, its time limit`) });
    expect(ticks).toBeGreaterThan(10);
    expect(next).toEqual({ sources: { html: '<p>2</p>' } });
  }, 60_000);

  it('ends a catastrophically backtracking pattern at the data check limit', async () => {
    // Act
    const filled = await pool.fill('key-b', {
      sources: { html: '{{ code }}' },
      data: { code: 'a'.repeat(64) },
      schema: { version: 'key-b/tpl@1', dataSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+b$' } } } },
    });

    // Assess
    expect(filled).toMatchObject({ refusal: 'data', detail: expect.stringContaining(`took longer than ${SHORT_LIMITS['data-check']} ms`) });
  }, 60_000);

  it('refuses a schema at save when its sample_data takes too long to check', async () => {
    // Act
    const refusal = await pool.check('key-b', {
      sources: { html: '{{ code }}' },
      dataSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+b$' } } },
      sampleData: { code: 'a'.repeat(64) },
    });

    // Assess
    expect(refusal).toMatchObject({ refusal: 'schema', detail: expect.stringContaining(`took longer than ${SHORT_LIMITS['save-check']} ms`) });
  }, 60_000);

  it('leaves a worker for other keys while one key’s templates hold the rest', async () => {
    // Prepare: key A's two hostile fills, only one of them on a worker at a time (of two). The fill
    // limit is production's here: B's small fill (a fresh worker's start included) must end before
    // A's first fill does, which 1.5 s did not leave room for on a busy host (seen at load 20).
    const fair = new CustomerCodePool({ workers: 2 });
    onTestFinished(() => fair.close());
    const events: string[] = [];
    const hostile = [1, 2].map((n) =>
      fair.fill('key-a', { sources: { html: ONE_LONG_FILTER_CALL }, data: {} }).then((outcome: { sources: unknown } | Refusal) => {
        events.push(`A${n}`);
        return outcome;
      }),
    );

    // Act: key B's document, sent after them
    const other = await fair.fill('key-b', { sources: { html: '<p>{{ who }}</p>' }, data: { who: 'B' } });
    events.push('B');

    // Assess: B was served before any of A's ended; A's ended at their limit, one after another
    expect(other).toEqual({ sources: { html: '<p>B</p>' } });
    expect(events[0]).toBe('B');
    for (const outcome of await Promise.all(hostile)) expect(outcome).toMatchObject({ refusal: 'template' });
    expect(fair.state.running).toBe(0);
  }, 120_000);
});

describe('a worker past its heap', () => {
  // A heap far smaller than the production one, so that ordinary data outgrows it.
  const pool = new CustomerCodePool({ workers: 2, heapMb: 16 });
  afterAll(() => pool.close());

  it('ends the task, not the process, and the worker that replaces it serves the next', async () => {
    // Prepare: 40 MB of data (UTF-16), copied and frozen before the render
    const data = { rows: Array.from({ length: 200_000 }, (_, i) => ({ n: i, text: `row ${i} `.repeat(10) })) };

    // Act
    const large = await pool.fill('key-a', { sources: { html: '{{ rows | size }}' }, data });
    const next = await pool.fill('key-a', { sources: { html: '<p>{{ n }}</p>' }, data: { n: 1 } });

    // Assess
    expect(large).toMatchObject({ refusal: 'template', detail: 'filling the template needed more than 16 MB of memory, its limit (a loop or filter that builds too much?)' });
    expect(next).toEqual({ sources: { html: '<p>1</p>' } });
  }, 60_000);
});

describe('reading a large html document', () => {
  // Reading 5 MB takes about 2 s of CPU here: the inspection limit (10 s) would be a speed bound
  // on a slow, busy host; what is checked is where the reading runs and what it finds.
  const pool = new CustomerCodePool({ workers: 2, heapMb: HTML_READING_HEAP_MB, limitsMs: { inspect: 120_000 } });
  afterAll(() => pool.close());

  it('finds what 5 MB of table markup needs in a worker, and the same problems as on this thread', async () => {
    // Prepare: an invoice of 80,000 rows (about 2 s of CPU to read), and one malformed
    const rows = '<tr><td>Item</td><td>12.50</td><td>1</td><td>12.50</td></tr>'.repeat(80_000);
    const large = `<!doctype html><style>@font-face { font-family: X; src: url(x.woff2) }</style><table>${rows}</table><script>window.done = true</script>`;
    const malformed = `<!doctype html><table>${rows}</table><p>${'<'.repeat(5)}/`;

    // Act
    const { value: inspection, ticks } = await ticksDuring(pool.inspectHtml('key-a', large));
    const problem = await pool.inspectHtml('key-a', `${'<div>'.repeat(20_001)}${rows}`);

    // Assess
    expect(inspection).toEqual({ scripted: true, webFonts: true, animated: false });
    expect(ticks).toBeGreaterThan(5);
    expect(problem).toEqual({ problem: 'html nests elements more than 20000 deep' });
    expect(await pool.inspectHtml('key-a', malformed)).toEqual(inspectHtml(malformed));
  }, 60_000);
});
