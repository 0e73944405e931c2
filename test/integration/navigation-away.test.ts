/**
 * A document that navigates its page away (meta refresh, a script setting `location`), through the
 * local stack and real Chromium (lib/render/navigation-away.ts): to a refused address it fails as a
 * refused `url` does, a 400 charging nothing, instead of printing what the refusal left (a blank
 * page, charged); to an allowed address the page navigated to is printed, as Chrome would show it.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { apiUrl, createKey, expectApiError, generate, generateAndDownload, post, quotaUsed, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const publicSite = inject('publicSite');
const deadSite = inject('deadSite');

let key: TestKey;
beforeAll(async () => {
  key = await createKey('enterprise');
});

/** The refused places: the cloud metadata address (plain and https), and the service's own address. */
const REFUSED = {
  'the metadata address': 'http://169.254.169.254/latest/meta-data/iam/',
  'the metadata address over https': 'https://169.254.169.254/latest/meta-data/iam/',
  'the service itself': `${apiUrl}/v1/usage`,
};

/** The ways a document navigates its page: the first needs no script, so it renders with scripting off. */
const NAVIGATIONS = {
  'meta refresh': (to: string) => `<meta http-equiv="refresh" content="0;url=${to}"><p>Leaving by meta refresh</p>`,
  'location.href': (to: string) => `<p>Leaving by script</p><script>location.href = ${JSON.stringify(to)};</script>`,
  // A GET form replaces the action's query with its fields: the query goes in fields of its own.
  'a submitted form': (to: string) => {
    const url = new URL(to);
    const fields = [...url.searchParams].map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('');
    return `<form id="f" action="${url.origin}${url.pathname}" method="get">${fields}</form><p>Leaving by form</p><script>document.getElementById('f').submit();</script>`;
  },
};

const cases = Object.entries(NAVIGATIONS).flatMap(([how, page]) => Object.entries(REFUSED).map(([where, to]) => [how, where, page(to)] as const));

describe('a navigation away to a refused address', () => {
  it.each(cases)('by %s to %s is 400 invalid_request, not allowed, charging nothing', async (_how, _where, html) => {
    // Prepare
    const before = await quotaUsed(key);

    // Act
    const response = await generate(key.apiKey, { html });

    // Assess
    expect(expectApiError(response, 400, 'invalid_request')).toMatch(/navigated its page to .* not allowed/);
    expect(await quotaUsed(key)).toBe(before);
  });

  it('from a url document is refused the same way, and so is a redirect of it to a refused address', async () => {
    // Prepare: a page on an allowed site whose script leaves for the metadata address, and one that
    // leaves for its own site's open redirect, which sends it there
    const before = await quotaUsed(key);
    const direct = `<p>x</p><script>location.href = 'http://169.254.169.254/latest/meta-data/';</script>`;
    const redirected = `<p>x</p><script>location.href = '/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}';</script>`;

    // Act
    const responses = await Promise.all(
      [direct, redirected].map((html) => generate(key.apiKey, { url: `${publicSite}/document?html=${encodeURIComponent(html)}` })),
    );

    // Assess
    for (const response of responses) expect(expectApiError(response, 400, 'invalid_request')).toMatch(/navigated its page to 169\.254\.169\.254:80, which is not allowed/);
    expect(await quotaUsed(key)).toBe(before);
  });

  it('in a batch, the item is URL_NOT_ALLOWED and only the other item is charged', async () => {
    // Prepare
    const batchKey = await createKey('pro');

    // Act
    const { status, body } = await post(
      '/v1/pdf/batch',
      { pdfs: [{ html: NAVIGATIONS['location.href'](REFUSED['the metadata address']) }, { html: '<p>fine</p>' }] },
      batchKey.apiKey,
    );

    // Assess
    expect(status).toBe(200);
    expect(body.results[0]).toEqual({ success: false, error: { code: 'URL_NOT_ALLOWED', message: expect.stringMatching(/not allowed/) } });
    expect(body.results[1].success).toBe(true);
    expect(await quotaUsed(batchKey)).toBe(1);
  });
});

describe('a navigation away to an allowed address', () => {
  it.each(Object.entries(NAVIGATIONS))('by %s prints the page navigated to, as Chrome shows it, and is charged', async (_how, page) => {
    // Prepare
    const before = await quotaUsed(key);
    const marker = `nav-${Math.random().toString(36).slice(2)}`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html: page(`${publicSite}/page?m=${marker}`) });

    // Assess
    const { text } = await readPdf(bytes);
    expect(text).toContain('Fixture page from the public site');
    expect(text).not.toContain('Leaving');
    expect((await requestsReceivedBy(publicSite)).filter((path) => path.includes(marker))).toHaveLength(1);
    expect(await quotaUsed(key)).toBe(before + 1);
  });

  it('to a site that does not answer is 400 invalid_request, unreachable, charging nothing', async () => {
    // Prepare
    const before = await quotaUsed(key);

    // Act
    const response = await generate(key.apiKey, { html: NAVIGATIONS['location.href'](`${deadSite}/page`) });

    // Assess
    expect(expectApiError(response, 400, 'invalid_request')).toMatch(/navigated its page to .* did not answer/);
    expect(await quotaUsed(key)).toBe(before);
  });

});
