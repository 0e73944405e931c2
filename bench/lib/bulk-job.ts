/**
 * A bulk job as the bench sends one (issue #32), shared by the phases `bulk` (the local stack),
 * `bulk-lambda` (the Lambda emulation), `bulk-crash` and `bulk-fairness`: the customer's input (a
 * JSON Lines upload of invoices, every fourth line a template line, every hundredth invalid and
 * skipped, `archive: true`), its submission and the wait for its end (or, for a phase that does other
 * things meanwhile, its polls), and, outside the timed part, the checks that it was exact.
 *
 * Every call through the API is tried again while it answers 503 (after its Retry-After): a
 * customer's client does that, and at a small account concurrency the gateway answers 503 whenever
 * Lambda throttles the API's own function. The 503s are counted.
 */

const invoice = (n: number) =>
  `<!doctype html><html lang="en"><h1>Invoice INV-${1000 + n}</h1><p>Billed to: Customer ${n}</p>` +
  `<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr><tr><td>Consulting</td><td>${(n % 7) + 1}</td><td>${((n % 7) + 1) * 120}.00</td></tr></table>`;
const INVOICE_TEMPLATE =
  '<!doctype html><html lang="en"><h1>Invoice {{ number }}</h1><p>Billed to: {{ customer }}</p>' +
  '<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>{% for line in lines %}<tr><td>{{ line.item }}</td><td>{{ line.qty }}</td><td>{{ line.price }}</td></tr>{% endfor %}</table>';

/** Line n (from 1) is invalid: an unknown field, refused at submission and skipped. */
const isInvalid = (n: number) => n % 100 === 0;

/** Every fourth line names the template; every hundredth is invalid. */
function inputLine(n: number, templateId: string): unknown {
  if (isInvalid(n)) return { html: '<p>x</p>', colour: 'red' };
  if (n % 4 === 0) return { template_id: templateId, data: { number: `INV-${1000 + n}`, customer: `Customer ${n}`, lines: [{ item: 'Consulting', qty: (n % 7) + 1, price: ((n % 7) + 1) * 120 }] }, metadata: { n } };
  return { html: invoice(n), metadata: { n } };
}

/** What a job of `lines` lines holds: its invalid lines and its (valid) template lines. */
export const bulkMix = (lines: number) => ({ invalid: Math.floor(lines / 100), templateLines: Math.floor(lines / 4) - Math.floor(lines / 100) });

export interface ApiAnswer {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tries of one call while it answers 503; past them the 503 is the answer. */
const BUSY_TRIES = 60;

/** One customer's view of the API: its calls with the key, and the 503s they met on the way. */
export class BulkClient {
  /** 503 answers met (each tried again after its Retry-After). */
  busyAnswers = 0;
  readonly apiUrl: string;
  readonly #apiKey: string;

  constructor(apiUrl: string, apiKey: string) {
    this.apiUrl = apiUrl;
    this.#apiKey = apiKey;
  }

  /** A fetch tried again while it answers 503; redirects are followed unless `redirect: 'manual'`. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(url, init);
      if (response.status !== 503 || attempt === BUSY_TRIES) return response;
      this.busyAnswers++;
      await response.arrayBuffer();
      await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
    }
  }

  async call(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const response = await this.fetch(this.apiUrl + path, {
      method,
      redirect: 'manual',
      headers: { Authorization: `Bearer ${this.#apiKey}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) };
  }

  /** The file a route of the API redirects to (the manifest, the archive). */
  async redirected(path: string): Promise<Response> {
    const answer = await this.call('GET', path);
    const location = answer.headers.get('location');
    if (answer.status !== 302 || !location) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return fetch(location);
  }
}

/** The template the job's template lines name, and the job's input uploaded (POST /v1/uploads, then its PUT): the upload's id. */
export async function uploadBulkInput(client: BulkClient, lines: number): Promise<string> {
  const template = await client.call('POST', '/v1/templates', { name: 'Invoice', html: INVOICE_TEMPLATE });
  if (template.status !== 201) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`);
  const file = Array.from({ length: lines }, (_, i) => JSON.stringify(inputLine(i + 1, template.body.template_id)) + '\n').join('');
  const upload = await client.call('POST', '/v1/uploads');
  if (upload.status !== 201) throw new Error(`upload: ${upload.status} ${JSON.stringify(upload.body)}`);
  const put = await fetch(upload.body.url, { method: 'PUT', body: file });
  if (put.status !== 200) throw new Error(`upload PUT: ${put.status}`);
  return upload.body.upload_id as string;
}

export interface FinishedJob {
  readonly jobId: string;
  /** The job as GET /v1/jobs/{id} answered it once it had ended. */
  readonly job: any;
  /** POST /v1/pdf/bulk (the upload already PUT) to the job's end, as polled once a second. */
  readonly seconds: number;
  /** POST /v1/pdf/bulk's answer: every line read and checked, the quota reserved, the chunks queued. */
  readonly submitMs: number;
}

/** A job's figures from submission to its end, as the bulk phases report them. */
export interface BulkJobFigures {
  readonly lines: number;
  readonly invalid: number;
  readonly templateLines: number;
  /** POST /v1/pdf/bulk (the upload already PUT) to the job's end, as polled once a second. */
  readonly seconds: number;
  readonly linesPerSecond: number;
  /** POST /v1/pdf/bulk's answer: every line read and checked, the quota reserved, the chunks queued. */
  readonly submitMs: number;
  readonly status: string;
  readonly succeeded: number;
  readonly failed: number;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export function jobFigures(lines: number, finished: FinishedJob): BulkJobFigures {
  const { job, seconds, submitMs } = finished;
  return {
    lines,
    ...bulkMix(lines),
    seconds: round1(seconds),
    linesPerSecond: round1(lines / seconds),
    submitMs: Math.round(submitMs),
    status: job.status,
    succeeded: job.succeeded,
    failed: job.failed,
  };
}

export interface SubmittedJob {
  readonly jobId: string;
  /** performance.now() just before POST /v1/pdf/bulk. */
  readonly startedAt: number;
  /** POST /v1/pdf/bulk's answer: every line read and checked, the quota reserved, the chunks queued. */
  readonly submitMs: number;
}

/** POST /v1/pdf/bulk of an upload (skip_invalid, archive), `extra` added to the body (a webhook_url); timed. */
export async function submitBulk(client: BulkClient, uploadId: string, extra: Record<string, unknown> = {}): Promise<SubmittedJob> {
  const startedAt = performance.now();
  const accepted = await client.call('POST', '/v1/pdf/bulk', { upload_id: uploadId, skip_invalid: true, archive: true, ...extra });
  if (accepted.status !== 202) throw new Error(`bulk: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return { jobId: accepted.body.job_id as string, startedAt, submitMs: performance.now() - startedAt };
}

/** The job as GET /v1/jobs/{id} shows it; undefined while nothing answers (a stack restarting). */
export async function jobNow(client: BulkClient, jobId: string): Promise<any> {
  const answer = await client.call('GET', `/v1/jobs/${jobId}`).catch(() => undefined);
  if (answer && answer.status !== 200) throw new Error(`GET /v1/jobs/${jobId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer?.body;
}

/** Lines done (succeeded + failed; lines refused at submission count as failed from the start). */
export const linesDone = (job: any): number => (job.succeeded as number) + (job.failed as number);

/** A job whose progress has not moved for this long is taken for stuck, and the phase fails rather than wait for ever. */
const STALLED_MS = 10 * 60_000;

/** Tells a stuck job: `see` every poll of it, and it throws once the job has not moved for STALLED_MS. */
export class StallWatch {
  #progress = '';
  #movedAt = performance.now();
  readonly #what: string;

  constructor(what: string) {
    this.#what = what;
  }

  see(job: any): void {
    const now = job ? `${job.status} ${job.succeeded} ${job.failed}` : this.#progress;
    if (now !== this.#progress) [this.#progress, this.#movedAt] = [now, performance.now()];
    else if (performance.now() - this.#movedAt > STALLED_MS) throw new Error(`${this.#what} has not moved for ${STALLED_MS / 60_000} minutes: ${JSON.stringify(job)}`);
  }
}

/** Timed: the job submitted (skip_invalid, archive) and polled once a second until it has ended (or stalled); progress logged every 30 s. */
export async function submitAndWait(client: BulkClient, uploadId: string, lines: number, log: (line: string) => void): Promise<FinishedJob> {
  const { jobId, startedAt: started, submitMs } = await submitBulk(client, uploadId);
  const stall = new StallWatch(`the job of ${lines} lines`);
  let job: any;
  for (let lastLog = performance.now(); ; await sleep(1_000)) {
    const polled = await client.call('GET', `/v1/jobs/${jobId}`);
    // Still busy after the client's tries (the job's workers can hold every execution of a small
    // account): no news, as a customer's poller takes it; the stall watch still ends a job that stops.
    if (polled.status === 503) {
      stall.see(undefined);
      continue;
    }
    if (polled.status !== 200) throw new Error(`GET /v1/jobs/${jobId}: ${polled.status} ${JSON.stringify(polled.body)}`);
    job = polled.body;
    if (job.completed_at) break;
    stall.see(job);
    if (performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      log(`${lines} lines: ${job.succeeded + job.failed} of ${lines} done after ${Math.round((performance.now() - started) / 1000)} s`);
    }
  }
  return { jobId, job, seconds: (performance.now() - started) / 1000, submitMs };
}

/** Every PDF id the key's PDF list shows, page by page. */
export async function listedPdfIds(client: BulkClient): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.call('GET', `/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (page.status !== 200) throw new Error(`GET /v1/pdf: ${page.status} ${JSON.stringify(page.body)}`);
    ids.push(...(page.body.data as { id: string }[]).map((record) => record.id));
    cursor = page.body.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** Entries of a ZIP, from its end of central directory record (no comment; below 65,535 entries). */
function zipEntries(bytes: Uint8Array): number {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = view.length - 22;
  if (end < 0 || view.readUInt32LE(end) !== 0x06054b50) throw new Error('no end of central directory record where expected');
  return view.readUInt16LE(end + 10);
}

export interface BulkCounts {
  readonly quotaUsed: number;
  readonly listed: number;
  readonly downloadable: number;
  readonly manifestSuccesses: number;
  readonly archiveEntries: number;
}

export interface BulkCheck {
  /** quota used, PDFs listed, downloadable, manifest successes, ZIP entries: all equal when exact. */
  readonly counts: BulkCounts;
  /** One manifest line per input line, in input order. */
  readonly manifestInOrder: boolean;
  /**
   * Manifest in order, every success listed and downloadable, every count equal, the job's own
   * succeeded too, the job ended succeeded and every invalid line refused.
   */
  readonly exact: boolean;
  /** What was not exact, in words (empty when exact). */
  readonly problems: readonly string[];
  /**
   * Valid lines the job reported failed (uncharged, unlisted: exact all the same), with their codes:
   * none when every valid line is a PDF.
   */
  readonly failedValidLines: number;
  readonly failedValidCodes: Record<string, number>;
  /** The first of them, in words. */
  readonly failedValidShown: readonly string[];
}

/**
 * After the job (untimed): manifest lines == input lines in order, quota used == PDFs listed ==
 * downloadable (every one fetched through its link) == manifest successes == ZIP entries; and
 * which valid lines failed, if any, and why.
 */
export async function checkBulkJob(client: BulkClient, finished: FinishedJob, lines: number): Promise<BulkCheck> {
  const { jobId, job } = finished;
  const manifestLines = (await (await client.redirected(`/v1/jobs/${jobId}/manifest`)).text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { line: number; success: boolean; pdf_id?: string; download_url?: string; error?: { code: string; message: string } });
  const successes = manifestLines.filter((line) => line.success);
  const listed = new Set(await listedPdfIds(client));
  const usage = await client.call('GET', '/v1/usage');
  if (usage.status !== 200) throw new Error(`GET /v1/usage: ${usage.status} ${JSON.stringify(usage.body)}`);
  const quotaUsed = usage.body.quota_used as number;
  let downloadable = 0;
  const notDownloaded: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < successes.length) {
        const line = successes[next++]!;
        const response = await client.fetch(line.download_url!);
        const bytes = Buffer.from(await response.arrayBuffer());
        if (bytes.subarray(0, 5).toString() === '%PDF-') downloadable++;
        else notDownloaded.push(`line ${line.line}: ${response.status} ${bytes.subarray(0, 300).toString()}`);
      }
    }),
  );
  const archiveEntries = zipEntries(new Uint8Array(await (await client.redirected(`/v1/jobs/${jobId}/archive`)).arrayBuffer()));
  const counts = { quotaUsed, listed: listed.size, downloadable, manifestSuccesses: successes.length, archiveEntries };

  const problems: string[] = [];
  const manifestInOrder = manifestLines.length === lines && manifestLines.every((line, i) => line.line === i + 1);
  if (!manifestInOrder) problems.push(`the manifest has ${manifestLines.length} lines for ${lines}, or not in input order`);
  const unlisted = successes.filter((line) => !listed.has(line.pdf_id!)).length;
  if (unlisted) problems.push(`${unlisted} manifest successes not listed`);
  // Every PDF id once: with quota used == listed == successes, no PDF was charged twice.
  const repeated = successes.length - new Set(successes.map((line) => line.pdf_id)).size;
  if (repeated) problems.push(`${repeated} manifest successes name a PDF id another line names too`);
  if (!Object.values(counts).every((count) => count === successes.length)) problems.push(`counts differ: ${JSON.stringify(counts)}`);
  if (notDownloaded.length) problems.push(`not downloadable through its link: ${notDownloaded.slice(0, 5).join('; ')}`);
  if (successes.length !== job.succeeded) problems.push(`the job says ${job.succeeded} succeeded, the manifest ${successes.length}`);
  if (job.status !== 'succeeded') problems.push(`the job ended ${job.status}`);
  const passedInvalid = manifestLines.filter((line) => line.success && isInvalid(line.line)).map((line) => line.line);
  if (passedInvalid.length) problems.push(`invalid lines ${passedInvalid.join(', ')} succeeded`);
  const failedValid = manifestLines.filter((line) => !line.success && !isInvalid(line.line));
  const failedValidCodes: Record<string, number> = {};
  for (const line of failedValid) failedValidCodes[line.error?.code ?? 'none'] = (failedValidCodes[line.error?.code ?? 'none'] ?? 0) + 1;
  return {
    counts,
    manifestInOrder,
    exact: problems.length === 0,
    problems,
    failedValidLines: failedValid.length,
    failedValidCodes,
    failedValidShown: failedValid.slice(0, 10).map((line) => `line ${line.line}: ${line.error?.code}: ${line.error?.message}`),
  };
}
