/**
 * Workspaces: where one document renders. Each is a fresh browser context (its own cookies,
 * storage, cache and service workers, and its own renderer process) with one blank page and its own
 * egress guard, used for exactly one document and then thrown away.
 *
 * Opening a page costs a renderer process start (the largest cost of a document after printing), so
 * a few workspaces are prepared ahead while documents render. A prepared workspace has run nothing
 * and its guard refuses everything until it is armed with the document's policy, so preparing
 * ahead shares nothing between documents.
 */
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { closeBrowser, discardBrowser, getBrowser } from './browser.ts';
import { startEgressGuard, type EgressGuard, type GuardOptions } from './egress-guard.ts';

export interface Workspace {
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly guard: EgressGuard;
}

/** How long a context may take to close before its browser is presumed hung. */
const CONTEXT_CLOSE_GRACE_MS = 5_000;

async function openWorkspace(): Promise<Workspace> {
  const browser = await getBrowser();
  const guard = await startEgressGuard();
  try {
    const context = await browser.createBrowserContext({
      // Every request of the document goes through its guard; `<-loopback>` removes Chromium's
      // implicit bypass for loopback addresses, which would otherwise skip the proxy silently.
      proxyServer: guard.proxyServer,
      proxyBypassList: ['<-loopback>'],
      downloadBehavior: { policy: 'deny' },
    });
    const page = await context.newPage();
    return { browser, context, page, guard };
  } catch (error) {
    await guard.close();
    throw error;
  }
}

const prepared: Promise<Workspace>[] = [];

function prepareAhead(count: number): void {
  while (prepared.length < count) {
    const opening = openWorkspace();
    opening.catch(() => undefined); // a failed preparation is retried by the next take
    prepared.push(opening);
  }
}

/**
 * A workspace armed with the document's egress policy. `ahead` workspaces are kept prepared for
 * the documents that follow.
 */
export async function takeWorkspace(policy: GuardOptions, ahead: number): Promise<Workspace> {
  let workspace: Workspace | undefined;
  while (!workspace && prepared.length > 0) {
    const candidate = await (prepared.shift() as Promise<Workspace>).catch(() => undefined);
    // A workspace prepared before the browser died is unusable; drop it and try the next.
    if (candidate && candidate.browser.connected && !candidate.page.isClosed()) workspace = candidate;
    else if (candidate) void releaseWorkspace(candidate);
  }
  workspace ??= await openWorkspace();
  prepareAhead(ahead);
  workspace.guard.arm(policy);
  return workspace;
}

/** Closes a used workspace; a browser that cannot close a context in time is killed and replaced. */
export async function releaseWorkspace(workspace: Workspace): Promise<void> {
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
}

/** Closes every prepared workspace and the browser (local stack shutdown, tests). */
export async function shutDownRendering(): Promise<void> {
  const pending = prepared.splice(0);
  await Promise.all(pending.map((opening) => opening.then(releaseWorkspace, () => undefined)));
  await closeBrowser();
}
