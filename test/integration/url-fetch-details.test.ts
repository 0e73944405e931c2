/**
 * Two details of fetching a `url` (shared/spec/beyond.md, "Fetching a url"; issue #29, item 7),
 * through the local stack and real Chromium: `user_agent` is what the document's service and
 * dedicated workers send too, and a redirect loop is called one.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createKey, expectApiError, generate, generateAndDownload, quotaUsed, type TestKey } from '../support/api.ts';
import { HEADER_LOG_PATH, type ReceivedRequest } from '../support/fixture-server.ts';
import { readPdf } from '../support/pdf.ts';

const publicSite = inject('publicSite');

/** Every request the fixture site received whose path and query contain `probe`, with its headers. */
async function receivedBy(site: string, probe: string): Promise<ReceivedRequest[]> {
  const response = await fetch(site + HEADER_LOG_PATH);
  return ((await response.json()) as ReceivedRequest[]).filter((received) => received.path.includes(probe));
}

describe('url fetching details', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it('user_agent is what the document’s service and dedicated workers send too', async () => {
    // Prepare: the page starts one worker of each kind, each fetching from the site as it starts
    const probe = randomUUID();
    const userAgent = `AcmeReports/2.0 (+https://reports.example/bot) ${probe}`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, {
      url: `${publicSite}/workers?probe=${probe}`,
      user_agent: userAgent,
      wait_for_expression: 'window.workersDone === true',
    });

    // Assess: each worker fetched ...
    expect((await readPdf(bytes)).text).toMatch(/service fetched, dedicated fetched, shared fetched/);
    const received = await receivedBy(publicSite, probe);
    const agentOf = (path: string) => received.filter((request) => request.path.startsWith(path)).map((request) => request.headers['user-agent']);
    // ... the page, its service worker and its dedicated worker saying user_agent, and so did the
    // requests for their scripts (the service worker's fetch said Chromium's default before, and
    // on a loaded machine still did about once in 80 documents; its script's request always did)
    expect(agentOf('/workers')).toEqual([userAgent]);
    expect(agentOf(`/pixel.svg?probe=${probe}-service-fetch`)).toEqual([userAgent]);
    expect(agentOf(`/worker-fetch.js?probe=${probe}-service`)).toEqual([userAgent]);
    expect(agentOf(`/pixel.svg?probe=${probe}-dedicated-fetch`)).toEqual([userAgent]);
    expect(agentOf(`/worker-fetch.js?probe=${probe}-dedicated`)).toEqual([userAgent]);
    // Left as they are (lib/render/url-access.ts): a shared worker's requests still say Chromium's default.
    expect(agentOf(`/pixel.svg?probe=${probe}-shared-fetch`)).toHaveLength(1);
  });

  it('a redirect loop is 400 saying it redirected too many times, charging nothing', async () => {
    // Prepare
    const probe = randomUUID();
    const before = await quotaUsed(key);

    // Act
    const response = await generate(key.apiKey, { url: `${publicSite}/loop?probe=${probe}` });

    // Assess
    expect(expectApiError(response, 400, 'invalid_request')).toBe('url redirected too many times (a redirect loop?)');
    // Chromium gave up after its 20 redirects
    expect((await receivedBy(publicSite, probe)).length).toBeGreaterThan(1);
    expect(await quotaUsed(key)).toBe(before);
  });
});
