/**
 * A process of its own holding the service's shared browser, for a test that freezes it as Lambda
 * freezes an environment (test/integration/self-healing.test.ts): it prints the browser's pid, then
 * for each line read on stdin asks whether the browser answers (lib/render/browser.ts
 * browserAnswers, the watchdog's probe) within the milliseconds the line gives, and prints the
 * answer. Its own lines start with `probe `, among the service's log lines. Closes the browser and
 * exits when stdin ends.
 */
import { createInterface } from 'node:readline';
import { browserAnswers, closeBrowser, getBrowser } from '#lib/render/browser.ts';

const browser = await getBrowser();
process.stdout.write(`probe ${JSON.stringify({ browserPid: browser.process()?.pid })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const answers = await browserAnswers(browser, Number(line));
  process.stdout.write(`probe ${JSON.stringify({ answers, connected: browser.connected })}\n`);
}
await closeBrowser();
