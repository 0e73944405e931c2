/**
 * The one Chromium of this process (one per Lambda container): launched on first use, reused by
 * every document, replaced when it dies or hangs. A watchdog asks it every few seconds whether it
 * still answers (one small DevTools message); one that does not is killed, so the documents in it
 * fail at once (their workspaces see the browser go, lib/render/workspaces.ts) instead of waiting
 * for their timeouts, and the next document gets a new browser.
 *
 * A browser that goes away without being asked to (it crashed, was killed, or the watchdog discarded
 * it) is replaced at once, not when the next document asks: starting one costs about 0.2 s of launch
 * and more while the cores are busy, and the next document would wait for it. There is still only
 * one browser at a time: the replacement is launched only once the old one has disconnected.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type CDPSession } from 'puppeteer-core';
import { settings } from '#lib/settings.ts';
import { watchRendererMemory } from './memory-budget.ts';
import { chromiumExecutablePath } from './chromium-unpack.ts';
import { fontEnvironment } from './fonts.ts';
import { startEgressGuard, type EgressGuard } from '#lib/egress/guard.ts';
import { BROWSER_CHANNEL_FLAGS } from '#lib/egress/browser-channels.ts';
import { logger } from '#lib/observability/logger.ts';

/**
 * Flags chosen one by one rather than taking @sparticuz/chromium's defaults, which switch off the
 * same-origin policy (--disable-web-security, --allow-running-insecure-content) and run everything
 * in one process (--single-process), where one page's infinite loop freezes every other page and
 * browser contexts break.
 *
 * Each one is kept only if it leaves the PDF as plain Chromium prints it (the fidelity harness,
 * `npm run fidelity`). Two that did not are gone and must not come back:
 * --disable-threaded-compositing stopped requestAnimationFrame, so chart libraries and Paged.js
 * printed blank; --font-render-hinting=none moved line and page breaks (a 203-page book printed
 * 203 pages here and 204 in plain Chromium).
 */
export const CHROMIUM_FLAGS: readonly string[] = [
  // Lambda offers no user namespaces for Chromium's sandbox; isolation comes from the egress
  // guard, per-document browser contexts and site isolation, and from Lambda's own microVM.
  // The zygote stays: every document gets a renderer of its own, and a renderer forked from the
  // zygote costs about 100 ms of CPU where one started from scratch (--no-zygote) cost about 400.
  '--no-sandbox',
  // Lambda's /dev/shm is tiny; shared memory goes to /tmp instead.
  '--disable-dev-shm-usage',
  // Printing needs no GPU; software paths are deterministic and start faster.
  '--disable-gpu',
  // No phoning home: these connections would fail on a closed network and slow every start.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--disable-sync',
  '--no-pings',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-extensions',
  '--disable-print-preview',
  '--mute-audio',
  '--hide-scrollbars',
];

/** A browser being launched or in use. */
interface SharedBrowser {
  readonly promise: Promise<Browser>;
  /** Set once it is launched. */
  browser?: Browser;
  /** When it was launched (performance.now()). */
  launchedAt?: number;
}

/** The browser being launched or in use; cleared when it disconnects, is discarded or closed. */
let shared: SharedBrowser | undefined;

/**
 * A browser that lived less than this is not replaced as soon as it goes away (one that dies on
 * start-up must not loop): the next document launches the next one.
 */
const MIN_LIFE_TO_RELAUNCH_MS = 1_000;

/**
 * Documents get a guard of their own per browser context (lib/render/render.ts). The browser-wide
 * proxy is the backstop for anything outside those contexts: it enforces the same policy, so no
 * request of this browser ever leaves without passing a guard.
 */
let backstopGuard: Promise<EgressGuard> | undefined;

async function launch(): Promise<Browser> {
  const started = performance.now();
  chromium.setGraphicsMode = false;
  const executablePath = settings.chromePath ?? (await chromiumExecutablePath());
  const unpacked = performance.now();
  backstopGuard ??= startEgressGuard({ allowPrivateHosts: settings.allowPrivateHosts, maxBytes: Number.POSITIVE_INFINITY });
  const guard = await backstopGuard;
  const browser = await puppeteer.launch({
    executablePath,
    headless: 'shell',
    // DevTools over the process's own pipes, not a WebSocket on a loopback port: no other process on
    // the host can connect to the browser, and each protocol message skips the TCP stack and the
    // WebSocket framing (measured: about 1 ms of CPU per document less, on both sides).
    pipe: true,
    args: [...CHROMIUM_FLAGS, ...BROWSER_CHANNEL_FLAGS, `--proxy-server=${guard.proxyServer}`, '--proxy-bypass-list=<-loopback>'],
    // Puppeteer's own default window, as plain Chromium driven by Puppeteer lays pages out: chart
    // libraries size themselves to the window, and a wider one prints them shrunk (the fidelity harness).
    defaultViewport: { width: 800, height: 600 },
    // Only the project's fonts, the same locally and on Lambda (lib/render/fonts.ts).
    env: { ...process.env, ...fontEnvironment() },
    // A readiness condition is one DevTools call that answers when it holds: with Puppeteer's
    // default (180 s) a job's longer wait ended on that instead of its own render time limit, as a
    // passing failure that was tried again. Every document's own deadline is shorter than this.
    protocolTimeout: Math.max(settings.renderTimeoutMs, settings.jobRenderTimeoutMs) + 60_000,
    // The local stack and the Lambda runtime manage the process's signals themselves.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  // Where a cold start's time goes (the bench reads it): unpacking Chromium, then starting it.
  logger.info('browser launched', { unpack_ms: Math.round(unpacked - started), launch_ms: Math.round(performance.now() - unpacked) });
  return browser;
}

/** How often the watchdog asks the browser whether it answers, and how long it has to answer. */
const WATCHDOG_INTERVAL_MS = 5_000;
const WATCHDOG_TIMEOUT_MS = 5_000;

/**
 * Waits for `promise` at most `ms`: its value (or its error), or `{ done: false }` when it took
 * longer. "Too late" is only decided after the event loop has read whatever arrived meanwhile, so a
 * Node process that was itself busy past the deadline (the timer and the answer both due) never
 * takes its own late timer for a silent browser.
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<{ done: true; value: T } | { done: false }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          resolve({ done: false });
        }),
      ms,
    );
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ done: true, value });
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** The steps a freeze-proof deadline is waited in: a freeze, however long, counts as one step at most. */
const RUNNING_TIME_STEP_MS = 250;

/**
 * within(), counting only the time this process ran: the wait is taken in steps of
 * RUNNING_TIME_STEP_MS, and a step counts as its own length however long it took, so a freeze
 * between two Lambda invocations (or a stall of the whole process) uses up one step at most.
 * On Lambda a timer due while the environment was frozen fires at the thaw, before the browser
 * (thawed at the same moment) has had a chance to answer: a plain deadline would take the freeze
 * for a browser that stopped answering.
 */
export async function withinRunningTime<T>(promise: Promise<T>, ms: number): Promise<{ done: true; value: T } | { done: false }> {
  for (let waited = 0; ; ) {
    const step = Math.min(RUNNING_TIME_STEP_MS, ms - waited);
    const outcome = await within(promise, step);
    waited += step;
    if (outcome.done || waited >= ms) return outcome;
  }
}

/**
 * Each browser's own DevTools session for probes. Puppeteer answers browser.version() from a cache
 * after its first call, so asking through it would find every browser answering, a hung one too.
 */
const probeSessions = new WeakMap<Browser, Promise<CDPSession>>();

/** Asks the browser's own process Browser.getVersion, a round trip every time. */
async function askVersion(browser: Browser): Promise<void> {
  let session = probeSessions.get(browser);
  if (!session) {
    session = browser.target().createCDPSession();
    probeSessions.set(browser, session);
    session.catch(() => probeSessions.delete(browser));
  }
  await (await session).send('Browser.getVersion');
}

/**
 * Whether the browser's own process answers a DevTools call (Browser.getVersion) within `ms` of
 * this process's running time: the watchdog's probe in flight when Lambda froze the environment
 * waits for the thawed browser's answer instead of discarding a healthy browser at the thaw.
 */
export async function browserAnswers(browser: Browser, ms: number): Promise<boolean> {
  if (!browser.connected) return false;
  const answer = await withinRunningTime(askVersion(browser), ms).catch(() => ({ done: false as const }));
  return answer.done;
}

/** Kills the browser when it stops answering; ends with it. */
function watch(browser: Browser): void {
  let probing = false;
  const timer = setInterval(() => {
    if (probing || !browser.connected) return;
    probing = true;
    void browserAnswers(browser, WATCHDOG_TIMEOUT_MS)
      .then((answers) => {
        if (answers || !browser.connected) return;
        logger.warn('browser stopped answering; replacing it', { timeout_ms: WATCHDOG_TIMEOUT_MS });
        discardBrowser(browser);
      })
      .finally(() => (probing = false));
  }, WATCHDOG_INTERVAL_MS);
  // The watchdog never keeps a process alive on its own.
  timer.unref();
  browser.once('disconnected', () => clearInterval(timer));
}

/** How long a killed browser may take to disconnect before its replacement is launched anyway. */
const DISCONNECT_TIMEOUT_MS = 5_000;

/** Resolves once the browser has disconnected (at once if it already has), or after DISCONNECT_TIMEOUT_MS. */
function disconnected(browser: Browser): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      logger.warn('a discarded browser did not disconnect in time; launching its replacement anyway', { timeout_ms: DISCONNECT_TIMEOUT_MS });
      resolve();
    }, DISCONNECT_TIMEOUT_MS);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    browser.once('disconnected', done);
    if (!browser.connected) done();
  });
}

/**
 * Makes a browser the shared one: launched now, or once `after` (the browser it replaces going away)
 * has settled. When it goes away unasked it is replaced at once (see the top of this file).
 */
function share(after?: Promise<void>): SharedBrowser {
  const entry: SharedBrowser = { promise: after ? after.then(launch) : launch() };
  shared = entry;
  entry.promise.then(
    (browser) => {
      entry.browser = browser;
      entry.launchedAt = performance.now();
      browser.once('disconnected', () => {
        // Discarded (its replacement is already on the way) or closed on purpose: nothing to do.
        if (shared !== entry) return;
        shared = undefined;
        const lifeMs = performance.now() - (entry.launchedAt ?? 0);
        if (lifeMs < MIN_LIFE_TO_RELAUNCH_MS) return;
        logger.warn('browser went away; launching its replacement', { life_ms: Math.round(lifeMs) });
        share();
      });
      watch(browser);
      const pid = browser.process()?.pid;
      if (pid !== undefined) browser.once('disconnected', watchRendererMemory(pid, settings.renderMemoryBudgetMb));
    },
    () => {
      // A launch that failed leaves no browser; the next document tries again.
      if (shared === entry) shared = undefined;
    },
  );
  return entry;
}

/** The shared browser, launching it if there is none or the last one died. */
export function getBrowser(): Promise<Browser> {
  return (shared ?? share()).promise;
}

/**
 * Kills a browser that no longer answers. Its replacement is launched as soon as it has gone (never
 * two at once), and the documents that follow wait for that one.
 */
export function discardBrowser(browser: Browser): void {
  if (shared?.browser === browser) share(disconnected(browser));
  browser.process()?.kill('SIGKILL');
}

/** Closes the browser, if any (local stack shutdown, tests). */
export async function closeBrowser(): Promise<void> {
  const entry = shared;
  shared = undefined;
  const browser = await entry?.promise.catch(() => undefined);
  await browser?.close().catch(() => undefined);
  const guard = await backstopGuard?.catch(() => undefined);
  backstopGuard = undefined;
  await guard?.close();
}
