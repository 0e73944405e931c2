/**
 * Workspaces: where documents render. A workspace is a browser context (its own cookies, storage,
 * cache and service workers, and its own renderer process) with one page and its own egress guard.
 *
 * Every document gets a fresh workspace, closed after it: no renderer is ever reused between
 * documents, so nothing one document leaves behind (globals, timers, caches, the fonts a renderer
 * picked for a character) can reach or change a later one, the same customer's included.
 *
 * Opening one costs a renderer process start, about four times the CPU of printing an invoice, so
 * a few are prepared ahead, one pool per kind:
 * - static: JavaScript off, for documents that need no scripting (lib/render/html.ts);
 * - live: JavaScript on, for everything else, with Intl's locale data loaded ahead (warmUpScripting).
 * A prepared workspace has run nothing of anyone's, and its guard refuses everything until it is
 * armed for its document. Pools are topped up when a document is done printing (while its PDF is
 * counted, stored and sent), not when one starts: a renderer process starting beside a render
 * competes with it for the cores, which made a scripted document about 25 ms slower on two cores.
 *
 * Self-healing: a workspace knows, from events and without asking, when it can no longer render
 * (its renderer crashed, its page closed, its browser went away); a document in it fails at once
 * rather than at its timeout, and a prepared one is dropped and replaced as it dies, so no document
 * is handed a dead renderer or waits for a new one. One prepared long ago is asked once (a short
 * probe) before it is handed out. Opening a workspace is bounded: a browser that cannot open one in
 * time is replaced (lib/render/browser.ts has the watchdog for a browser that stops answering).
 *
 * On Lambda the environment is frozen from its answer to its next invocation, so a workspace still
 * opening (or closing) at the answer carries on only then, seconds or hours later. Its deadlines
 * count the time this process ran, not the time that passed (withinRunningTime): a timer due while
 * frozen fires at the thaw, before the browser (thawed at the same moment) has had a chance to
 * answer, and would take the freeze for a browser that cannot open a workspace, opening a second.
 */
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { browserAnswers, closeBrowser, discardBrowser, getBrowser, withinRunningTime } from './browser.ts';
import { startEgressGuard, type EgressGuard, type GuardOptions } from '#lib/egress/guard.ts';
import { logger } from '#lib/observability/logger.ts';

/** Static: JavaScript off, for documents that need no scripting. Live: JavaScript on. */
export type WorkspaceKind = 'static' | 'live';

export interface Workspace {
  readonly kind: WorkspaceKind;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly guard: EgressGuard;
  /**
   * Rejects (WorkspaceLostError) as soon as the workspace can no longer render: its renderer
   * crashed, its page closed or its browser went away. Known from events, at no cost.
   */
  readonly lost: Promise<never>;
}

export interface WorkspacePolicy {
  /** Fresh workspaces kept prepared, per kind, for the documents that follow. */
  readonly prepared: number;
}

/** A workspace that can no longer render, or could not be opened in time. */
export class WorkspaceLostError extends Error {
  override readonly name = 'WorkspaceLostError';
}

/** How long a context may take to close before its browser is asked whether it still answers. */
const CONTEXT_CLOSE_GRACE_MS = 5_000;
/** How much longer a browser that answers gets to close it before it is replaced anyway. */
const CONTEXT_CLOSE_LAST_CHANCE_MS = 10_000;
/** How long opening a workspace (context, page, warm-up) may take before its browser is suspected. */
const OPEN_TIMEOUT_MS = 5_000;
/** How long a browser suspected of hanging has to answer a DevTools call. */
const BROWSER_PROBE_TIMEOUT_MS = 2_000;
/** A prepared workspace idle longer than this is asked whether its renderer answers before use. */
const PROBE_AFTER_IDLE_MS = 10_000;
/** How long that renderer has to answer. */
const RENDERER_PROBE_TIMEOUT_MS = 1_000;
/** A prepared workspace lost younger than this is not replaced at once (a browser dying on start-up must not loop). */
const MIN_LIFE_TO_REPLACE_MS = 1_000;
/** What is known of a workspace's health. */
interface Vitals {
  readonly openedAt: number;
  /** When its renderer last answered. */
  answeredAt: number;
  /** Why it can no longer render, once it cannot. */
  lostBecause?: string;
  markLost(reason: string): void;
  /** Stops listening to its browser (on close). */
  unwatch(): void;
}

const vitals = new WeakMap<Workspace, Vitals>();

/** Attaches the events that tell when the workspace can no longer render. */
function watched(parts: Omit<Workspace, 'lost'>): Workspace {
  let rejectLost!: (error: Error) => void;
  const lost = new Promise<never>((_, reject) => (rejectLost = reject));
  lost.catch(() => undefined); // observed by whoever renders in it, if anyone
  const now = performance.now();
  const onDisconnected = () => state.markLost('its browser went away');
  const state: Vitals = {
    openedAt: now,
    answeredAt: now,
    markLost(reason) {
      if (state.lostBecause) return;
      state.lostBecause = reason;
      rejectLost(new WorkspaceLostError(`The workspace can no longer render: ${reason}`));
    },
    unwatch: () => parts.browser.off('disconnected', onDisconnected),
  };
  // 'error' is Puppeteer's event for Inspector.targetCrashed: the renderer died (killed, out of memory).
  parts.page.on('error', () => state.markLost('its renderer crashed'));
  parts.page.on('close', () => state.markLost('its page closed'));
  parts.browser.on('disconnected', onDisconnected);
  const workspace: Workspace = { ...parts, lost };
  vitals.set(workspace, state);
  if (!parts.browser.connected) state.markLost('its browser went away');
  return workspace;
}

/**
 * A renderer pays once for the first use of Intl (number and date formats, collation): loading
 * ICU's locale data took 12 to 16 ms of a fresh renderer's CPU, and a document that builds itself
 * with script very often formats numbers or dates (toLocaleString, Intl.NumberFormat, a chart
 * library's axis labels, a sort with localeCompare). A prepared live workspace pays it ahead, while
 * the cores are free, with this function of ours, before any document is in it. It leaves nothing
 * in the page but warm caches: no global, no storage, no request.
 */
async function warmUpScripting(page: Page): Promise<void> {
  await page.evaluate(() => {
    new Intl.NumberFormat().format(1234.5);
    new Intl.DateTimeFormat().format(0);
    'a'.localeCompare('b');
  });
}

/** Opens a workspace in this browser, unbounded in time (see openWorkspace). */
async function openIn(browser: Browser, kind: WorkspaceKind): Promise<Workspace> {
  const guard = await startEgressGuard();
  let context: BrowserContext | undefined;
  let workspace: Workspace | undefined;
  try {
    context = await browser.createBrowserContext({
      // Every request of the document goes through its guard; `<-loopback>` removes Chromium's
      // implicit bypass for loopback addresses, which would otherwise skip the proxy silently.
      proxyServer: guard.proxyServer,
      proxyBypassList: ['<-loopback>'],
      downloadBehavior: { policy: 'deny' },
    });
    const page = await context.newPage();
    workspace = watched({ kind, browser, context, page, guard });
    if (kind === 'static') await page.setJavaScriptEnabled(false);
    // Popups have no place in a PDF; close any a document opens.
    context.on('targetcreated', (target) => {
      if (target.type() === 'page' && target !== page.target()) void target.page().then((popup) => popup?.close());
    });
    // Nobody is there to answer alert(), confirm() or prompt(): they are declined at once, as a user
    // would (confirm gives false, prompt null), and the script carries on. Unanswered, the dialog
    // would block the page until the render timeout.
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
    if (kind === 'live') await Promise.race([warmUpScripting(page), workspace.lost]);
    return workspace;
  } catch (error) {
    // A context whose page could not be set up is of no use; it must not linger in the browser.
    if (workspace) await closeWorkspace(workspace);
    else {
      await context?.close().catch(() => undefined);
      await guard.close();
    }
    throw error;
  }
}

/**
 * Opens a workspace within OPEN_TIMEOUT_MS. When that passes, the browser is asked whether it still
 * answers: a hung one is killed and the workspace opened in a new one. A browser that answers but
 * cannot open a workspace twice in a row cannot render either, and is replaced too. A browser that
 * went away while the workspace was opening is replaced once, the same way.
 */
async function openWorkspace(kind: WorkspaceKind): Promise<Workspace> {
  for (let attempt = 1; ; attempt++) {
    const browser = await getBrowser();
    const opening = openIn(browser, kind);
    let outcome: { done: true; value: Workspace } | { done: false };
    try {
      outcome = await withinRunningTime(opening, OPEN_TIMEOUT_MS);
    } catch (error) {
      if (attempt === 1 && !browser.connected) continue;
      throw error;
    }
    if (outcome.done) return outcome.value;
    // Whatever it opens after all is of no use now.
    void opening.then(closeWorkspace, () => undefined);
    const answers = await browserAnswers(browser, BROWSER_PROBE_TIMEOUT_MS);
    if (!answers || attempt > 1) {
      logger.warn('browser could not open a workspace in time; replacing it', { answers, timeout_ms: OPEN_TIMEOUT_MS });
      discardBrowser(browser);
    }
    if (attempt > 1) throw new WorkspaceLostError(`A workspace could not be opened within ${OPEN_TIMEOUT_MS} ms`);
  }
}

interface PreparedWorkspace {
  readonly opening: Promise<Workspace>;
  /** Set once it is open. */
  ready?: Workspace;
}

const prepared: Record<WorkspaceKind, PreparedWorkspace[]> = { static: [], live: [] };
/** How many of each kind to keep prepared: the policy last given. */
let preparedPerKind = 0;
let shuttingDown = false;

function prepareAhead(kind: WorkspaceKind, count: number): void {
  preparedPerKind = count;
  while (prepared[kind].length < count) {
    const entry: PreparedWorkspace = { opening: openWorkspace(kind) };
    const leavePool = () => {
      const index = prepared[kind].indexOf(entry);
      if (index >= 0) prepared[kind].splice(index, 1);
      return index >= 0;
    };
    entry.opening.then(
      (workspace) => {
        entry.ready = workspace;
        // One that dies while waiting is dropped and replaced at once, not found dead by a document.
        void workspace.lost.catch(() => {
          if (!leavePool()) return; // taken by a document, or shutting down
          void closeWorkspace(workspace);
          const life = performance.now() - (vitals.get(workspace)?.openedAt ?? 0);
          if (!shuttingDown && life >= MIN_LIFE_TO_REPLACE_MS) prepareAhead(kind, preparedPerKind);
        });
      },
      // A failed preparation leaves the pool; the next document opens its own, and tops the pool up.
      leavePool,
    );
    prepared[kind].push(entry);
  }
}

/** Prepares workspaces of both kinds ahead of the first documents (the local stack's warm-up). */
export function prepareWorkspaces(policy: WorkspacePolicy): void {
  prepareAhead('static', policy.prepared);
  prepareAhead('live', policy.prepared);
}

/**
 * Whether a prepared workspace can take a document. Normally known from its events alone; one that
 * has not been heard from for a while is asked (a round trip to its renderer, at most
 * RENDERER_PROBE_TIMEOUT_MS), since a renderer that hangs without crashing sends no event.
 */
async function isAlive(workspace: Workspace): Promise<boolean> {
  const state = vitals.get(workspace);
  if (!state || state.lostBecause || !workspace.browser.connected || workspace.page.isClosed()) return false;
  if (performance.now() - state.answeredAt < PROBE_AFTER_IDLE_MS) return true;
  const answer = await withinRunningTime(workspace.page.evaluate(() => 0), RENDERER_PROBE_TIMEOUT_MS).catch(() => ({ done: false as const }));
  if (!answer.done) {
    state.markLost('its renderer stopped answering');
    return false;
  }
  state.answeredAt = performance.now();
  return true;
}

/**
 * A fresh workspace for one document, armed with its egress policy: JavaScript on only when the
 * document needs scripting.
 */
export async function takeWorkspace(guardPolicy: GuardOptions, document: { readonly scripts: boolean }): Promise<Workspace> {
  const kind: WorkspaceKind = document.scripts ? 'live' : 'static';
  const pool = prepared[kind];
  let workspace: Workspace | undefined;
  while (!workspace && pool.length > 0) {
    // An open one, else whichever opens first: one still opening may be slow, or stuck on a
    // renderer that died on the way (until OPEN_TIMEOUT_MS).
    const entry =
      pool.find((candidate) => candidate.ready !== undefined) ??
      (await Promise.race(pool.map((candidate) => candidate.opening.then(() => candidate, () => candidate))));
    const index = pool.indexOf(entry);
    if (index < 0) continue; // it failed, died, or another document took it meanwhile
    pool.splice(index, 1);
    const candidate = entry.ready;
    // One whose renderer or browser died is dropped; the next one is tried.
    if (candidate && (await isAlive(candidate))) workspace = candidate;
    else if (candidate) void closeWorkspace(candidate);
  }
  workspace ??= await openWorkspace(kind);
  workspace.guard.arm(guardPolicy);
  return workspace;
}

/**
 * Closes a workspace after its document, then tops up the prepared workspaces of its kind, now
 * that its printing no longer needs the cores.
 */
export function releaseWorkspace(workspace: Workspace, policy: WorkspacePolicy): void {
  void closeWorkspace(workspace);
  if (!shuttingDown) prepareAhead(workspace.kind, policy.prepared);
}

const closing = new Map<Workspace, Promise<void>>();

/**
 * Closes a workspace (once, however often asked). A context that does not close within
 * CONTEXT_CLOSE_GRACE_MS means a hung browser if the browser does not answer either: it is killed
 * and replaced. One that answers gets CONTEXT_CLOSE_LAST_CHANCE_MS more (under load a close can be
 * slow in a browser that is fine, and killing it would fail every document in it); a context still
 * open after that would leave its renderer running, so the browser is replaced then too.
 */
function closeWorkspace(workspace: Workspace): Promise<void> {
  const pending = closing.get(workspace);
  if (pending) return pending;
  const close = (async () => {
    vitals.get(workspace)?.unwatch();
    const contextClosed = workspace.context.close().then(
      () => true,
      () => !workspace.browser.connected, // a dead browser has nothing left to close
    );
    let closed = await withinRunningTime(contextClosed, CONTEXT_CLOSE_GRACE_MS);
    await workspace.guard.close();
    if (closed.done && closed.value) return;
    const answers = await browserAnswers(workspace.browser, BROWSER_PROBE_TIMEOUT_MS);
    if (answers) closed = await withinRunningTime(contextClosed, CONTEXT_CLOSE_LAST_CHANCE_MS);
    if (closed.done && closed.value) return;
    logger.warn('browser could not close a context; replacing it', { answers, grace_ms: CONTEXT_CLOSE_GRACE_MS });
    discardBrowser(workspace.browser);
  })().finally(() => closing.delete(workspace));
  closing.set(workspace, close);
  return close;
}

/**
 * Resolves once no workspace is opening or closing: the work a document leaves at its answer (the
 * next workspace prepared, its own closed) is done. On Lambda the post-answer extension
 * (lib/aws/post-answer-work.ts) holds the freeze until then. Never rejects.
 */
export async function workspacesSettled(): Promise<void> {
  for (;;) {
    const opening = [...prepared.static, ...prepared.live].filter((entry) => !entry.ready).map((entry) => entry.opening);
    const pending = [...opening, ...closing.values()];
    if (pending.length === 0) return;
    // A close can start a replacement (a browser discarded) and an opening fail into a retry: look again.
    await Promise.allSettled(pending);
  }
}

/** Closes every prepared workspace and the browser (local stack shutdown, tests). */
export async function shutDownRendering(): Promise<void> {
  shuttingDown = true;
  const pending = [...prepared.static.splice(0), ...prepared.live.splice(0)];
  await Promise.all([...pending.map(({ opening }) => opening.then(closeWorkspace, () => undefined)), ...closing.values()]);
  await closeBrowser();
  shuttingDown = false;
}
