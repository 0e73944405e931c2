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
 */
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { closeBrowser, discardBrowser, getBrowser } from './browser.ts';
import { startEgressGuard, type EgressGuard, type GuardOptions } from '#lib/egress/guard.ts';

/** Static: JavaScript off, for documents that need no scripting. Live: JavaScript on. */
export type WorkspaceKind = 'static' | 'live';

export interface Workspace {
  readonly kind: WorkspaceKind;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly guard: EgressGuard;
}

export interface WorkspacePolicy {
  /** Fresh workspaces kept prepared, per kind, for the documents that follow. */
  readonly prepared: number;
}

/** How long a context may take to close before its browser is presumed hung. */
const CONTEXT_CLOSE_GRACE_MS = 5_000;

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
    const page = await context.newPage();
    if (kind === 'static') await page.setJavaScriptEnabled(false);
    // Popups have no place in a PDF; close any a document opens.
    context.on('targetcreated', (target) => {
      if (target.type() === 'page' && target !== page.target()) void target.page().then((popup) => popup?.close());
    });
    // Nobody is there to answer alert(), confirm() or prompt(): they are declined at once, as a user
    // would (confirm gives false, prompt null), and the script carries on. Unanswered, the dialog
    // would block the page until the render timeout.
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
    return { kind, browser, context, page, guard };
  } catch (error) {
    // A context whose page could not be set up is of no use; it must not linger in the browser.
    await context?.close().catch(() => undefined);
    await guard.close();
    throw error;
  }
}

const prepared: Record<WorkspaceKind, Promise<Workspace>[]> = { static: [], live: [] };
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
 * A fresh workspace for one document, armed with its egress policy: JavaScript on only when the
 * document needs scripting.
 */
export async function takeWorkspace(guardPolicy: GuardOptions, document: { readonly scripts: boolean }): Promise<Workspace> {
  const kind: WorkspaceKind = document.scripts ? 'live' : 'static';
  let workspace: Workspace | undefined;
  while (!workspace && prepared[kind].length > 0) {
    const candidate = await prepared[kind].shift()!.catch(() => undefined);
    // A workspace prepared before the browser died is unusable; drop it and try the next.
    if (candidate && usable(candidate)) workspace = candidate;
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

/** Closes every prepared workspace and the browser (local stack shutdown, tests). */
export async function shutDownRendering(): Promise<void> {
  shuttingDown = true;
  const pending = [...prepared.static.splice(0), ...prepared.live.splice(0)];
  await Promise.all([...pending.map((opening) => opening.then(closeWorkspace, () => undefined)), ...closing]);
  await closeBrowser();
  shuttingDown = false;
}
