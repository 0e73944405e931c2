/**
 * Workspaces: where documents render. A workspace is a browser context (its own cookies, storage,
 * cache and service workers, and its own renderer process) with one page and its own egress guard.
 *
 * Opening one costs a renderer process start, about four times the CPU of printing an invoice. So:
 * - a few fresh workspaces are prepared ahead. A prepared workspace has run nothing of anyone's (a
 *   live one has run our own warm-up, see warmUpScripting), and its guard refuses everything until
 *   it is armed for its document. They are prepared when a document is done printing (while its
 *   PDF is counted, stored and sent), not when one starts: a renderer process
 *   starting beside a render competes with it for the cores, which made a scripted document about
 *   25 ms slower on two cores (measured on the benchmark's JS-rendered page);
 * - a document that runs scripts, or loads a URL, gets a fresh workspace that is closed after it;
 * - a static document (no scripting needed, see lib/render/html.ts) renders with JavaScript switched
 *   off;
 * - a static document that is also self-contained (names nothing to fetch: lib/render/html.ts)
 *   renders on a page that draws no frames for the screen (see openFramelessPage). If it made no
 *   network request (its guard saw none), it can have left nothing behind: it ran no code, and its
 *   origin was opaque (setContent into about:blank), so it had no cookies, storage, cache entries or
 *   service workers. Its workspace then serves the next such document with the same reuse key,
 *   which simply replaces it. The key holds the API key's id (another customer's documents never
 *   share a renderer) and the document's languages (the renderer keeps the first font it found for
 *   a character, and CJK characters need the font of their language).
 *
 * So there are two kinds of workspace: static ones (frameless page, JavaScript off, reusable) and
 * live ones (an ordinary page, one document each, JavaScript off when the document needs none).
 * Each kind is prepared ahead once it is in demand.
 */
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { browserSession, closeBrowser, discardBrowser, getBrowser } from './browser.ts';
import { startEgressGuard, type EgressGuard, type GuardOptions } from './egress-guard.ts';

/** Static: for documents that need no scripting (JavaScript off, no screen frames, reusable). Live: everything else. */
export type WorkspaceKind = 'static' | 'live';

export interface Workspace {
  readonly kind: WorkspaceKind;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly guard: EgressGuard;
  /** Documents rendered here so far. */
  uses: number;
}

export interface WorkspacePolicy {
  /** Fresh workspaces kept prepared, per kind, for the documents that follow. */
  readonly prepared: number;
  /** Idle reusable workspaces kept at most, across all keys (each holds a renderer process). */
  readonly maxIdle: number;
  /** Documents one workspace renders at most before it is closed anyway. */
  readonly maxUses: number;
}

/** How long a context may take to close before its browser is presumed hung. */
const CONTEXT_CLOSE_GRACE_MS = 5_000;
/** An idle workspace not reused within this long is closed, giving its memory back. */
const IDLE_TTL_MS = 60_000;

/**
 * A page whose compositor draws a frame only when asked over DevTools (BeginFrame control), and
 * nothing asks: the page is never rastered for a screen nobody sees. Printing lays out and paints
 * the document by itself, so the PDF is the same. It measured a third less CPU per invoice while
 * renderers composited on a thread of their own; since --disable-threaded-compositing
 * (lib/render/browser.ts) an ordinary page measures the same, within noise (the benchmark's
 * "frameless" row). Only for self-contained static documents: a script could
 * wait for a frame (requestAnimationFrame, IntersectionObserver) that never comes, and without
 * frames style is first computed when print preparation forces it, after the load event, so a
 * resource only style asks for (a CSS background image, a style sheet's import) would be fetched
 * too late for the load event to wait for it. Inline resources need no fetch.
 */
async function openFramelessPage(browser: Browser, context: BrowserContext): Promise<Page> {
  const session = await browserSession(browser);
  try {
    await session.send('Target.createTarget', { url: 'about:blank', browserContextId: context.id, enableBeginFrameControl: true });
  } catch (error) {
    // Only the headless shell (what @sparticuz/chromium ships) has BeginFrame control; another
    // Chromium given as CHROME_PATH may refuse it. An ordinary page prints the same PDF.
    if (!browser.connected) throw error;
    return context.newPage();
  }
  // The context is new, so its one page target is this one.
  const target = await context.waitForTarget((candidate) => candidate.type() === 'page');
  const page = await target.page();
  if (!page) throw new Error('The frameless page could not be opened');
  return page;
}

/** The page of a static workspace in `context`: frameless, and a static document runs no code at all. */
export async function openStaticPage(browser: Browser, context: BrowserContext): Promise<Page> {
  const page = await openFramelessPage(browser, context);
  await page.setJavaScriptEnabled(false);
  return page;
}

async function openWorkspace(kind: WorkspaceKind): Promise<Workspace> {
  const browser = await getBrowser();
  const guard = await startEgressGuard();
  let context: BrowserContext | undefined;
  try {
    context = await browser.createBrowserContext({
      // Every request of the document goes through its guard; `<-loopback>` removes Chromium's
      // implicit bypass for loopback addresses, which would otherwise skip the proxy silently.
      proxyServer: guard.proxyServer,
      proxyBypassList: ['<-loopback>'],
      downloadBehavior: { policy: 'deny' },
    });
    const page = kind === 'static' ? await openStaticPage(browser, context) : await context.newPage();
    // Popups have no place in a PDF; close any a document opens.
    context.on('targetcreated', (target) => {
      if (target.type() === 'page' && target !== page.target()) void target.page().then((popup) => popup?.close());
    });
    // Nobody is there to answer alert(), confirm() or prompt(): they are declined at once, as a user
    // would (confirm gives false, prompt null), and the script carries on. Unanswered, the dialog
    // would block the page until the render timeout.
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
    return { kind, browser, context, page, guard, uses: 0 };
  } catch (error) {
    // A context whose page could not be set up is of no use; it must not linger in the browser.
    await context?.close().catch(() => undefined);
    await guard.close();
    throw error;
  }
}

const prepared: Record<WorkspaceKind, Promise<Workspace>[]> = { static: [], live: [] };
/** Reusable workspaces by reuse key, most recently used last. */
const idle = new Map<string, { workspace: Workspace; timer: NodeJS.Timeout }[]>();
let shuttingDown = false;

/**
 * A renderer pays once for the first use of Intl (number and date formats, collation): loading
 * ICU's locale data took 12 to 16 ms of a fresh renderer's CPU, and a document that builds itself
 * with script very often formats numbers or dates (toLocaleString, Intl.NumberFormat, a chart
 * library's axis labels, a sort with localeCompare). A prepared live workspace pays it ahead, while
 * the cores are free, with this function of ours, before any document is in it. It leaves nothing
 * in the page but warm caches: no global, no storage, no request.
 */
async function warmUpScripting(workspace: Workspace): Promise<Workspace> {
  try {
    await workspace.page.evaluate(() => {
      new Intl.NumberFormat().format(1234.5);
      new Intl.DateTimeFormat().format(0);
      'a'.localeCompare('b');
    });
    return workspace;
  } catch (error) {
    void closeWorkspace(workspace);
    throw error;
  }
}

function prepareAhead(kind: WorkspaceKind, count: number): void {
  while (prepared[kind].length < count) {
    const opening = kind === 'live' ? openWorkspace(kind).then(warmUpScripting) : openWorkspace(kind);
    opening.catch(() => undefined); // a failed preparation is retried by the next take
    prepared[kind].push(opening);
  }
}

/** Prepares workspaces of both kinds ahead of the first documents (the local stack's warm-up). */
export function prepareWorkspaces(policy: WorkspacePolicy): void {
  prepareAhead('static', policy.prepared);
  prepareAhead('live', policy.prepared);
}

const usable = (workspace: Workspace) => workspace.browser.connected && !workspace.page.isClosed();

/**
 * A workspace for one document, armed with its egress policy and ready for it: an idle one with
 * the same reuse key for a self-contained static document (`reuseKey` given), else a prepared or
 * new one, with scripting switched off when the document needs none.
 */
export async function takeWorkspace(
  guardPolicy: GuardOptions,
  document: { readonly reuseKey: string | undefined; readonly scripts: boolean },
  policy: WorkspacePolicy,
): Promise<Workspace> {
  const { reuseKey } = document;
  const kind: WorkspaceKind = reuseKey === undefined ? 'live' : 'static';
  let workspace: Workspace | undefined;
  const reusable = reuseKey === undefined ? undefined : idle.get(reuseKey);
  while (!workspace && reusable?.length) {
    const entry = reusable.pop()!;
    clearTimeout(entry.timer);
    if (usable(entry.workspace)) workspace = entry.workspace;
    else void closeWorkspace(entry.workspace);
  }
  if (reuseKey !== undefined && reusable?.length === 0) idle.delete(reuseKey);
  while (!workspace && prepared[kind].length > 0) {
    const candidate = await prepared[kind].shift()!.catch(() => undefined);
    // A workspace prepared before the browser died is unusable; drop it and try the next.
    if (candidate && usable(candidate)) workspace = candidate;
    else if (candidate) void closeWorkspace(candidate);
  }
  workspace ??= await openWorkspace(kind);
  // A live workspace serves one document; one that needs no scripting runs none.
  if (kind === 'live' && !document.scripts) {
    try {
      await workspace.page.setJavaScriptEnabled(false);
    } catch (error) {
      void closeWorkspace(workspace);
      throw error;
    }
  }
  workspace.guard.arm(guardPolicy);
  workspace.uses++;
  return workspace;
}

/**
 * Hands a workspace back after its document: kept for the next static document with the same reuse
 * key when its own document was static, succeeded and made no network request; closed otherwise.
 * Then the prepared workspaces of its kind are topped up, now that its printing no longer needs the cores.
 */
export function releaseWorkspace(
  workspace: Workspace,
  outcome: { reuseKey: string | undefined; succeeded: boolean },
  policy: WorkspacePolicy,
): void {
  if (!shuttingDown) prepareAhead(workspace.kind, policy.prepared);
  const { reuseKey } = outcome;
  const keep =
    reuseKey !== undefined &&
    outcome.succeeded &&
    workspace.kind === 'static' &&
    workspace.guard.requestCount === 0 &&
    workspace.uses < policy.maxUses &&
    policy.maxIdle > 0 &&
    !shuttingDown &&
    usable(workspace);
  if (!keep) {
    void closeWorkspace(workspace);
    return;
  }
  const entries = idle.get(reuseKey) ?? [];
  const timer = setTimeout(() => {
    const index = entries.findIndex((entry) => entry.workspace === workspace);
    if (index >= 0) entries.splice(index, 1);
    if (entries.length === 0 && idle.get(reuseKey) === entries) idle.delete(reuseKey);
    void closeWorkspace(workspace);
  }, IDLE_TTL_MS);
  timer.unref();
  entries.push({ workspace, timer });
  idle.set(reuseKey, entries);
  evictBeyond(policy.maxIdle);
}

function evictBeyond(maxIdle: number): void {
  let count = [...idle.values()].reduce((sum, entries) => sum + entries.length, 0);
  while (count > maxIdle) {
    // Keys are few; the oldest entry of the longest-idle key is a fair and cheap choice.
    const [key, entries] = idle.entries().next().value!;
    const oldest = entries.shift()!;
    clearTimeout(oldest.timer);
    if (entries.length === 0) idle.delete(key);
    void closeWorkspace(oldest.workspace);
    count--;
  }
}

const closing = new Set<Promise<void>>();

/** Closes a workspace; a browser that cannot close a context in time is killed and replaced. */
function closeWorkspace(workspace: Workspace): Promise<void> {
  const close = (async () => {
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      workspace.context.close().then(
        () => true,
        () => !workspace.browser.connected, // a dead browser has nothing left to close
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CONTEXT_CLOSE_GRACE_MS))),
    ]);
    clearTimeout(timer);
    await workspace.guard.close();
    if (!closed) discardBrowser(workspace.browser);
  })().finally(() => closing.delete(close));
  closing.add(close);
  return close;
}

/** Closes every prepared and idle workspace and the browser (local stack shutdown, tests). */
export async function shutDownRendering(): Promise<void> {
  shuttingDown = true;
  const pending = [...prepared.static.splice(0), ...prepared.live.splice(0)];
  const idleOnes = [...idle.values()].flat();
  idle.clear();
  for (const entry of idleOnes) clearTimeout(entry.timer);
  await Promise.all([
    ...pending.map((opening) => opening.then(closeWorkspace, () => undefined)),
    ...idleOnes.map((entry) => closeWorkspace(entry.workspace)),
    ...closing,
  ]);
  await closeBrowser();
  shuttingDown = false;
}
