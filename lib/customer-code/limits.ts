/**
 * What one piece of customer code (a stored template filled with data, a data_schema compiled or
 * checked) may spend, enforced from outside the code: it runs in a worker thread (./pool.ts) that
 * is terminated at its time limit and cannot grow its heap past its memory limit. Nothing here
 * depends on the code checking a clock; the engine's own CPU budget (lib/templates/engine.ts,
 * RENDER_TIME_LIMIT_MS) only ends a runaway loop sooner, with a more precise message.
 *
 * Documented for customers in docs/templates.md ("Limits").
 */

/**
 * Wall-clock time a template may take to fill with its data, its filters and codes included,
 * counted from when its worker starts on it. A 5,000-line invoice (about 100 pages) takes 100 to
 * 150 ms on an idle core and under 1 s beside Chromium on a crowded one; a filter call that works
 * over data the template built itself can take forever, and is ended here.
 */
export const TEMPLATE_FILL_TIME_LIMIT_MS = 5_000;

/**
 * Wall-clock time checking a document's data against its template's data_schema may take (the
 * schema is compiled once per version and worker, within the same time). Real data checks in
 * under 5 ms; a catastrophically backtracking `pattern` over long data never ends.
 */
export const DATA_CHECK_TIME_LIMIT_MS = 2_000;

/**
 * Wall-clock time checking a template when it is saved may take: its Liquid parsed, its
 * data_schema compiled and its sample_data checked against it. A real schema compiles in 20 to
 * 150 ms.
 */
export const TEMPLATE_SAVE_CHECK_TIME_LIMIT_MS = 5_000;

/**
 * Wall-clock time reading a large html document may take (lib/render/html.ts: its structure
 * checked, what it needs to print found). 5 MB of table markup, the worst real case measured,
 * takes 2 s of CPU; the limit leaves room for a core shared with Chromium.
 */
export const HTML_INSPECTION_TIME_LIMIT_MS = 10_000;

/**
 * Html shorter than this is read on the calling thread: at most about 25 ms of CPU, less than
 * handing it to a worker and back would cost with its copy.
 */
export const INLINE_HTML_INSPECTION_CHARS = 64 * 1024;

/**
 * The JavaScript heap of a worker, in MB (V8's old generation; the young one is a few MB more). A
 * 5 MB data object, its frozen copy and a 10 MB document being written fit several times over;
 * a template that builds gigabytes, or a schema that compiles to them, ends the worker here.
 */
export const CUSTOMER_CODE_HEAP_MB = 256;

/**
 * The JavaScript heap of a worker that reads html documents, in MB: parse5's tree of 5 MB of table
 * markup (the API's largest body) takes 330 to 400 MB, so these workers get a pool of their own
 * with more room than the template workers (lib/customer-code/pool.ts, documentReadingPool).
 */
export const HTML_READING_HEAP_MB = 768;

/** V8's young generation of a worker, in MB: room for the short-lived strings a render makes. */
export const CUSTOMER_CODE_YOUNG_HEAP_MB = 32;
