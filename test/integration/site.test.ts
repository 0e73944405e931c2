/**
 * The docs page and the playground, as a developer meets them: in a real Chromium (a browser of the
 * test's own, not the service's), against the local stack, clicking through. Every request the
 * pages make is watched: none may leave for a third-party origin, and the CSP must not have to
 * refuse anything the page itself does.
 */
import { readFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiUrl, createKey, download, quotaUsed, request, type TestKey } from '../support/api.ts';
import { normalizeText, POINTS_PER_INCH, readPdf } from '../support/pdf.ts';

let browser: Browser;
let key: TestKey;

beforeAll(async () => {
  chromium.setGraphicsMode = false;
  browser = await puppeteer.launch({
    executablePath: process.env.CHROME_PATH || (await chromium.executablePath()),
    headless: 'shell',
    args: ['--no-sandbox'],
  });
  key = await createKey('pro');
});

afterAll(async () => {
  await browser?.close();
});

interface Visit {
  readonly page: Page;
  /** Every URL the page's requests went to (not those the page's CSP stopped before they left). */
  readonly requested: string[];
  /** What the page's CSP stopped. */
  readonly blocked: string[];
  /** Console errors and CSP reports. */
  readonly problems: string[];
}

async function visit(path: string, viewport?: { width: number; height: number }): Promise<Visit> {
  const page = await browser.newPage();
  if (viewport) await page.setViewport(viewport);
  const requested: string[] = [];
  const blocked: string[] = [];
  const problems: string[] = [];
  const client = await page.createCDPSession();
  await client.send('Network.enable');
  const urls = new Map<string, string>();
  client.on('Network.requestWillBeSent', (event) => urls.set(event.requestId, event.request.url));
  client.on('Network.responseReceived', (event) => requested.push(event.response.url));
  client.on('Network.loadingFailed', (event) => {
    const url = urls.get(event.requestId) ?? '?';
    if (event.blockedReason === 'csp') blocked.push(url);
    else requested.push(url);
  });
  page.on('console', (message) => {
    // A CSP refusal is reported on its own (blocked); anything else is a problem.
    if (message.type() === 'error' && !/Content Security Policy/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  await page.goto(apiUrl + path, { waitUntil: 'networkidle0' });
  return { page, requested, blocked, problems };
}

/** The origins a page may reach: the API's own, the storage's (the PDF's bytes), and its own blob:/data: URLs. */
async function foreignRequests(requested: readonly string[]): Promise<string[]> {
  const storage = new URL((await request('GET', '/')).headers.get('content-security-policy')!.match(/connect-src 'self' ([^;\s]+)/)![1]!).origin;
  const allowed = new Set([new URL(apiUrl).origin, storage]);
  return requested.filter((url) => !/^(blob|data):/.test(url) && !allowed.has(URL.parse(url)?.origin ?? url));
}

describe('GET /docs', () => {
  test('renders the API reference from the OpenAPI document, with nothing from anywhere else', async () => {
    const { page, requested, blocked, problems } = await visit('/docs');
    try {
      await page.waitForFunction(() => document.body.innerText.includes('Generate one PDF'), { timeout: 30_000 });
      const text = await page.evaluate(() => document.body.innerText);
      expect(text).toContain('PDF API');
      expect(text).toContain('/v1/pdf/generate');
      expect(text).toContain('page_ranges');
      expect(requested).toContain(`${apiUrl}/v1/openapi.json`);
      expect(await foreignRequests(requested)).toEqual([]);
      // Redoc's sidebar credits Redocly with a logo from its CDN, unconditionally: the CSP stops it
      // before it leaves (and Redoc hides the broken image). Nothing else is refused.
      expect(blocked).toEqual(['https://cdn.redoc.ly/redoc/logo-mini.svg']);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('is served with a strict Content-Security-Policy and no key', async () => {
    const response = await request('GET', '/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('GET / (the playground)', () => {
  test('generates a PDF with the options picked, shows its link, its record and the PDF itself', async () => {
    const { page, requested, blocked, problems } = await visit('/');
    try {
      // Act: a key, HTML, two options from the generated form, Generate.
      await page.type('#api-key', key.apiKey);
      await page.waitForSelector('#opt-format');
      await page.$eval('#html', (area) => {
        (area as HTMLTextAreaElement).value = '<h1>Hello playground</h1>';
      });
      await page.select('#opt-format', JSON.stringify('Letter'));
      await page.select('#opt-orientation', JSON.stringify('landscape'));
      await page.click('#generate');
      await page.waitForSelector('#download-link', { timeout: 30_000 });
      await page.waitForSelector('#preview[data-drawn]', { timeout: 30_000 });

      // Assess: the link downloads the PDF asked for; the preview holds the same bytes.
      const href = await page.$eval('#download-link', (a) => (a as HTMLAnchorElement).href);
      const pages = await page.$eval('[data-field=pages] td:last-child', (cell) => cell.textContent);
      expect(pages).toBe('1');
      const pdf = await readPdf(await download(href));
      expect(pdf.pages[0]!.text).toContain('Hello playground');
      expect(pdf.pages[0]!.width / POINTS_PER_INCH).toBeCloseTo(11, 1);
      expect(pdf.pages[0]!.height / POINTS_PER_INCH).toBeCloseTo(8.5, 1);
      // The playground's CSP lets it read nothing but the API and the storage, so the preview's blob:
      // is read from another page of the same origin (blob: URLs belong to the origin).
      const previewUrl = await page.$eval('#preview', (frame) => (frame as HTMLElement).dataset.blob!);
      const reader = await browser.newPage();
      await reader.goto(`${apiUrl}/v1/openapi.json`);
      const preview = await reader.evaluate(async (url) => {
        const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
        return { head: String.fromCharCode(...bytes.slice(0, 5)), size: bytes.length };
      }, previewUrl);
      await reader.close();
      expect(preview.head).toBe('%PDF-');
      expect(preview.size).toBe(Number(await page.$eval('[data-field=size] td:last-child', (cell) => cell.textContent)));
      expect(await foreignRequests(requested)).toEqual([]);
      expect(blocked).toEqual([]);
      expect(problems).toEqual([]);
      // The key never travels in a URL.
      expect(requested.filter((url) => url.includes(key.apiKey))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('offers every option of the OpenAPI document', async () => {
    const { page } = await visit('/');
    try {
      await page.waitForSelector('#opt-format');
      const controls = await page.$$eval('[id^=opt-]', (elements) => elements.map((element) => element.id.slice(4)));
      const document = (await request('GET', '/v1/openapi.json')).body;
      expect(controls.sort()).toEqual(Object.keys(document.components.schemas.DocumentOptions.properties).sort());
    } finally {
      await page.close();
    }
  });

  test('a batch shows one result per item, in order: a PDF for good HTML, INVALID_HTML for broken', async () => {
    const { page, problems } = await visit('/');
    try {
      await page.type('#api-key', key.apiKey);
      await page.click('#tab-batch');
      await page.$$eval('#items .item-html', (areas) => {
        (areas[0] as HTMLTextAreaElement).value = '<h1>Good item</h1>';
        (areas[1] as HTMLTextAreaElement).value = '<div';
      });
      await page.click('#run-batch');
      await page.waitForSelector('#batch-result table.items', { timeout: 30_000 });
      const rows = await page.$$eval('#batch-result tr', (trs) => trs.map((tr) => ({ success: tr.dataset.success, code: tr.dataset.code ?? null })));
      expect(rows).toEqual([
        { success: 'true', code: null },
        { success: 'false', code: 'INVALID_HTML' },
      ]);
      expect(await page.$eval('#batch-result .summary', (p) => p.textContent)).toMatch(/^1 of 2 succeeded, 1 failed/);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('a 401 says to paste the key into the key field, with or without one there', async () => {
    const { page } = await visit('/');
    try {
      // Act: no key, then a wrong one
      await page.click('#generate');
      await page.waitForSelector('#single-result .error', { timeout: 30_000 });
      const empty = await page.$eval('#single-result .error', (box) => ({ code: (box as HTMLElement).dataset.code, text: box.textContent }));
      await page.type('#api-key', 'pdfk_not_a_real_key_000000000000000000');
      await page.click('#generate');
      await page.waitForFunction(() => document.querySelector('#single-result .error')?.textContent?.includes('not accepted'), { timeout: 30_000 });
      const wrong = await page.$eval('#single-result .error', (box) => box.textContent);

      // Assess
      expect(empty).toEqual({ code: 'unauthorized', text: expect.stringMatching(/^401 unauthorized: Paste your API key .* into the API key field at the top/) });
      expect(wrong).toMatch(/^401 unauthorized: The API key in the field at the top was not accepted .*: paste a valid key there/);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('api-key');
    } finally {
      await page.close();
    }
  });

  test('is served with a strict CSP: scripts and styles from itself, reads from itself and the storage only', async () => {
    const response = await request('GET', '/');
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("style-src 'self'");
    expect(policy).not.toContain('unsafe');
    expect(policy).toMatch(/connect-src 'self' http:\/\/127\.0\.0\.1:\d+(;|$)/);
    expect(policy).toContain("worker-src 'self'");
    expect(policy).not.toContain('frame-src');
  });
});

describe('GET / (the playground) for the first minute, on a 1280x800 screen', () => {
  const SCREEN = { width: 1280, height: 800 };
  /** Where an element is on the screen, and whether it is drawn there at all. */
  const box = (page: Page, selector: string) =>
    page.$eval(selector, (element) => {
      const { x, y, width, height } = element.getBoundingClientRect();
      return { x, y, width, height, shown: width > 0 && height > 0 && getComputedStyle(element).visibility !== 'hidden' };
    });
  /** How many canvases the container holds, and how many of them have ink (pixels that are not white). */
  const drawnPages = (page: Page, selector: string) =>
    page.$eval(selector, (container) =>
      Array.from(container.querySelectorAll('canvas')).map((canvas) => {
        const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
        let ink = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i]! < 128 && data[i + 1]! < 128 && data[i + 2]! < 128) ink++;
        return ink;
      }),
    );

  test('shows the key, the source and Generate without scrolling (checked in a screenshot), the common options first, the rest folded, help rendered, hints as hints', async () => {
    const { page, problems } = await visit('/', SCREEN);
    try {
      // Act
      await page.waitForSelector('#opt-format');
      const screenshot = await page.screenshot({ type: 'png' });
      const [keyBox, sourceBox, buttonBox] = await Promise.all([box(page, '#api-key'), box(page, '#html'), box(page, '#generate')]);

      // Assess: all three inside the first screen, the page not scrolled
      expect(await page.evaluate(() => window.scrollY)).toBe(0);
      for (const shown of [keyBox, sourceBox, buttonBox]) {
        expect(shown.shown).toBe(true);
        expect(shown.y).toBeGreaterThanOrEqual(0);
        expect(shown.y + shown.height).toBeLessThanOrEqual(SCREEN.height);
      }
      // ... and the screenshot has the Generate button painted there: its dark blue, inside its padding
      const image = await loadImage(Buffer.from(screenshot));
      expect([image.width, image.height]).toEqual([SCREEN.width, SCREEN.height]);
      const canvas = createCanvas(image.width, image.height);
      canvas.getContext('2d').drawImage(image, 0, 0);
      const [r, g, b] = canvas.getContext('2d').getImageData(Math.round(buttonBox.x + 4), Math.round(buttonBox.y + buttonBox.height / 2), 1, 1).data;
      expect(Math.abs(r! - 0x1d) + Math.abs(g! - 0x35) + Math.abs(b! - 0x57)).toBeLessThan(30);
      // The common options open, the others folded
      expect(await page.$$eval('#common-options [data-option]', (rows) => rows.map((row) => (row as HTMLElement).dataset.option))).toEqual(['format', 'margin', 'orientation', 'print_background']);
      expect(await page.$eval('#more-options', (details) => (details as HTMLDetailsElement).open)).toBe(false);
      // Help is rendered: `code` becomes code elements, no backtick is left
      const help = await page.$eval('[data-option=header_html] .help', (small) => ({ text: small.textContent, code: Array.from(small.querySelectorAll('code')).map((code) => code.textContent) }));
      expect(help.code).toContain('{{pageNumber}}');
      expect(help.text).not.toContain('`');
      // Placeholders read as hints, drawn lighter than the text typed
      expect(await page.$eval('#opt-scale', (input) => (input as HTMLInputElement).placeholder)).toBe('e.g. 0.8');
      expect(await page.$eval('#url', (input) => (input as HTMLInputElement).placeholder)).toMatch(/^e\.g\. https:/);
      const colours = await page.$eval('#opt-scale', (input) => ({ typed: getComputedStyle(input).color, hint: getComputedStyle(input, '::placeholder').color }));
      expect(colours.hint).not.toBe(colours.typed);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('shows only the options that apply to the source: url-only ones with a URL, not with HTML or a template', async () => {
    const { page } = await visit('/', SCREEN);
    try {
      await page.waitForSelector('#opt-format');
      const urlOnly = (await request('GET', '/v1/openapi.json')).body.components.schemas.DocumentOptions.properties;
      const names = Object.entries(urlOnly).filter(([, schema]) => (schema as { 'x-applies-to'?: string[] })['x-applies-to']?.join() === 'url').map(([name]) => name);
      const shownOf = () => page.$$eval('[data-option]', (rows, wanted) => rows.filter((row) => wanted.includes((row as HTMLElement).dataset.option!) && !(row as HTMLElement).hidden).length, names);

      // Act / Assess
      expect(names).toEqual(expect.arrayContaining(['http_headers', 'cookies', 'basic_auth', 'user_agent', 'fail_on_http_status']));
      expect(await shownOf()).toBe(0);
      await page.click('input[name=source][value=url]');
      expect(await shownOf()).toBe(names.length);
      expect(await page.$eval('#html', (area) => (area as HTMLElement).hidden)).toBe(true);
      await page.click('input[name=source][value=template]');
      expect(await shownOf()).toBe(0);
    } finally {
      await page.close();
    }
  });

  test('draws the PDF page by page with pdf.js beside the download link', async () => {
    const { page, blocked, problems } = await visit('/', SCREEN);
    try {
      // Act: a two-page document
      await page.type('#api-key', key.apiKey);
      await page.waitForSelector('#opt-format');
      await page.$eval('#html', (area) => {
        (area as HTMLTextAreaElement).value = '<h1 style="font-size:80px">First page</h1><h1 style="break-before:page;font-size:80px">Second page</h1>';
      });
      await page.click('#generate');
      await page.waitForSelector('#preview[data-drawn]', { timeout: 30_000 });

      // Assess: two canvases with ink, beside the download link (right of the form, at the same height)
      const ink = await drawnPages(page, '#preview');
      expect(ink).toHaveLength(2);
      expect(ink.every((pixels) => pixels > 500)).toBe(true);
      expect(await page.$eval('[data-field=pages] td:last-child', (cell) => cell.textContent)).toBe('2');
      const [link, pages, form] = await Promise.all([box(page, '#download-link'), box(page, '#preview'), box(page, '#html')]);
      expect(link.x).toBeGreaterThan(form.x + form.width);
      expect(pages.x).toBeGreaterThan(form.x + form.width);
      expect(link.y).toBeLessThan(SCREEN.height);
      expect(blocked).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('renders a stored template with data in the One PDF tab', async () => {
    // Prepare: a key with a template
    const owner = await createKey('starter');
    const made = await request('POST', '/v1/templates', {
      apiKey: owner.apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Greeting', html: '<h1>Hello {{ name }}</h1>', sample_data: { name: 'Sample' } }),
    });
    expect(made.status).toBe(201);
    const { page, problems } = await visit('/', SCREEN);
    try {
      // Act
      await page.type('#api-key', owner.apiKey);
      await page.click('input[name=source][value=template]');
      await page.waitForFunction(() => (document.getElementById('single-data') as HTMLTextAreaElement).value.includes('Sample'), { timeout: 30_000 });
      const picked = await page.$eval('#single-template', (select) => (select as HTMLSelectElement).value);
      await page.$eval('#single-data', (area) => {
        (area as HTMLTextAreaElement).value = '{ "name": "Grace Hopper" }';
      });
      await page.click('#generate');
      await page.waitForSelector('#preview[data-drawn]', { timeout: 30_000 });

      // Assess: the stored PDF is the template filled with the data, and it is drawn
      expect(picked).toBe(made.body.template_id);
      const pdf = await readPdf(await download(await page.$eval('#download-link', (a) => (a as HTMLAnchorElement).href)));
      expect(normalizeText(pdf.text)).toBe('Hello Grace Hopper');
      expect(await drawnPages(page, '#preview')).toHaveLength(1);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('a batch item’s own options win over the shared ones', async () => {
    const { page, problems } = await visit('/', SCREEN);
    try {
      // Act: shared Letter; the second item A5 landscape of its own
      await page.type('#api-key', key.apiKey);
      await page.click('#tab-batch');
      await page.waitForSelector('#opt-format');
      expect((await box(page, '#single')).shown).toBe(false);
      await page.select('#opt-format', JSON.stringify('Letter'));
      await page.$$eval('#items .item-options', (details) => details.forEach((d) => ((d as HTMLDetailsElement).open = true)));
      await page.$$eval('#items .item-options textarea', (areas) => {
        (areas[1] as HTMLTextAreaElement).value = '{ "format": "A5", "orientation": "landscape" }';
      });
      await page.click('#run-batch');
      await page.waitForSelector('#batch-result table.items', { timeout: 30_000 });
      const links = await page.$$eval('#batch-result table.items a', (anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));

      // Assess
      expect(links).toHaveLength(2);
      const [first, second] = await Promise.all(links.map(async (href) => (await readPdf(await download(href))).pages[0]!));
      expect([first!.width / POINTS_PER_INCH, first!.height / POINTS_PER_INCH].map((inches) => Math.round(inches * 10) / 10)).toEqual([8.5, 11]);
      expect([second!.width / POINTS_PER_INCH, second!.height / POINTS_PER_INCH].map((inches) => Math.round(inches * 10) / 10)).toEqual([8.3, 5.8]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

/** A blob: URL's bytes, read from another page of the API's origin (the playground's own CSP reads nothing but the API and the storage). */
async function blobBytes(url: string): Promise<Uint8Array> {
  const reader = await browser.newPage();
  try {
    await reader.goto(`${apiUrl}/v1/openapi.json`);
    const bytes = await reader.evaluate(async (blob) => [...new Uint8Array(await (await fetch(blob)).arrayBuffer())], url);
    return new Uint8Array(bytes);
  } finally {
    await reader.close();
  }
}

describe('GET / (the playground), its Templates tab', () => {
  /** Sets a textarea's or input's value as typing would, so the page sees an edit. */
  const setValue = (page: Page, selector: string, value: string) =>
    page.$eval(selector, (element, text) => {
      (element as HTMLTextAreaElement).value = text;
      element.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
  const text = (page: Page, selector: string) => page.$eval(selector, (element) => (element as HTMLElement).innerText);
  /** Presses Preview and answers the PDF the frame then shows, read. */
  async function preview(page: Page, previous: string) {
    await page.click('#template-preview');
    await page.waitForFunction((before) => {
      const frame = document.getElementById('template-frame') as HTMLElement;
      const blob = frame.dataset.blob ?? '';
      return blob.startsWith('blob:') && blob !== before && !frame.hidden && frame.querySelectorAll('canvas').length > 0;
    }, { timeout: 30_000 }, previous);
    const url = await page.$eval('#template-frame', (frame) => (frame as HTMLElement).dataset.blob!);
    return { url, pdf: await readPdf(await blobBytes(url)) };
  }

  test('starts from the invoice example, saves it, previews it beside the editor, saves a second version and goes back to the first', async () => {
    const owner = await createKey('starter');
    const { page, requested, blocked, problems } = await visit('/');
    try {
      // Arrange: the key, the tab, the example.
      await page.type('#api-key', owner.apiKey);
      await page.click('#tab-templates');
      await page.click('#template-example');
      await page.waitForFunction(() => (document.getElementById('template-html') as HTMLTextAreaElement).value.includes('epc_qr'));
      const exampleHtml = await page.$eval('#template-html', (area) => (area as HTMLTextAreaElement).value);
      expect(exampleHtml).toBe(await readFile('examples/invoice/template.html', 'utf8'));
      expect(JSON.parse(await page.$eval('#template-data', (area) => (area as HTMLTextAreaElement).value))).toEqual(JSON.parse(await readFile('examples/invoice/data.json', 'utf8')));

      // Act: save version 1.
      await page.click('#template-save');
      await page.waitForSelector('#template-result .saved', { timeout: 30_000 });
      const saved = await text(page, '#template-result .saved');
      const id = /\b(tpl_\w+)/.exec(saved)?.[1];

      // Assess: version 1 of a new template, listed in the picker (the list is read again after a save).
      expect(saved).toMatch(/^Saved version 1 of tpl_\w+\.$/);
      await page.waitForFunction((wanted) => (document.getElementById('template-pick') as HTMLSelectElement).value === wanted, { timeout: 30_000 }, id);
      expect(await page.$$eval('#template-pick option', (options) => options.map((option) => option.textContent))).toContain(`Invoice (example) (v1, ${id})`);

      // Act: preview with the sample data (de-DE), then with the data edited to en-US (not saved).
      const usedBefore = await quotaUsed(owner);
      const german = await preview(page, '');
      const data = JSON.parse(await page.$eval('#template-data', (area) => (area as HTMLTextAreaElement).value));
      await setValue(page, '#template-data', JSON.stringify({ ...data, locale: 'en-US' }, null, 2));
      const english = await preview(page, german.url);

      // Assess: the PDFs hold the data, formatted for each locale; previews are not charged; the
      // data is not the template, so nothing is said to be unsaved.
      expect(normalizeText(german.pdf.text)).toContain('Rechnung');
      expect(normalizeText(german.pdf.text)).toContain('1.237,60 €');
      expect(normalizeText(english.pdf.text)).toContain('Invoice');
      expect(normalizeText(english.pdf.text)).toContain('€1,237.60');
      expect(await text(page, '#template-preview-info')).toBe(`Version 1, 1 page, ${(await blobBytes(english.url)).length} bytes: not stored, not charged.`);
      expect(await page.$('#template-unsaved')).toBeNull();
      expect(await quotaUsed(owner)).toBe(usedBefore);

      // Act: edit the template itself; preview (the saved version, said so), then save version 2.
      await setValue(page, '#template-html', exampleHtml.replace('assign t_invoice = "Invoice"', 'assign t_invoice = "Tax invoice"'));
      const stale = await preview(page, english.url);
      const unsaved = await text(page, '#template-unsaved');
      await page.click('#template-save');
      await page.waitForFunction(() => document.querySelector('#template-result .saved')?.textContent?.startsWith('Saved version 2'), { timeout: 30_000 });
      const second = await preview(page, stale.url);

      // Assess
      expect(unsaved).toMatch(/unsaved changes.*version 1 as saved/);
      expect(normalizeText(stale.pdf.text)).not.toContain('Tax invoice');
      expect(normalizeText(second.pdf.text)).toContain('Tax invoice');
      expect(await page.$('#template-unsaved')).toBeNull();
      expect(await page.$$eval('#template-version option', (options) => options.map((option) => (option as HTMLOptionElement).value))).toEqual(['2', '1']);

      // Act: back to version 1.
      await page.select('#template-version', '1');
      await page.waitForFunction(() => document.getElementById('template-result')?.textContent === 'Loaded version 1 of Invoice (example).', { timeout: 30_000 });

      // Assess: the editor holds version 1 again, and says saving would make version 3.
      expect(await page.$eval('#template-html', (area) => (area as HTMLTextAreaElement).value)).toBe(exampleHtml);
      expect(await text(page, '#template-status')).toContain('saving makes the editor\'s content version 3');
      expect(await foreignRequests(requested)).toEqual([]);
      expect(blocked).toEqual([]);
      expect(problems).toEqual([]);
      expect(requested.filter((url) => url.includes(owner.apiKey))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('lists the key’s templates, loads one picked, and shows a preview’s error (data failing the schema) with its code', async () => {
    // Arrange: a key with two templates, made through the API.
    const owner = await createKey('starter');
    const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    const made = [];
    for (const name of ['Letter', 'Label']) {
      const answer = await request('POST', '/v1/templates', {
        apiKey: owner.apiKey,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, html: `<h1>${name} for {{ name }}</h1>`, data_schema: schema, sample_data: { name: 'Ada' } }),
      });
      expect(answer.status).toBe(201);
      made.push(answer.body.template_id as string);
    }
    const { page, problems } = await visit('/');
    try {
      // Act
      await page.type('#api-key', owner.apiKey);
      await page.click('#tab-templates');
      await page.waitForFunction(() => document.querySelectorAll('#template-pick option').length === 3, { timeout: 30_000 });
      await page.select('#template-pick', made[0]!);
      await page.waitForFunction(() => document.getElementById('template-result')?.textContent === 'Loaded version 1 of Letter.', { timeout: 30_000 });
      const loaded = await page.$eval('#template-html', (area) => (area as HTMLTextAreaElement).value);
      const first = await preview(page, '');
      await setValue(page, '#template-data', '{ "name": 42 }');
      await page.click('#template-preview');
      await page.waitForSelector('#template-result .error', { timeout: 30_000 });

      // Assess
      expect(await page.$$eval('#template-pick option', (options) => options.map((option) => (option as HTMLOptionElement).value).sort())).toEqual(['', ...made].sort());
      expect(loaded).toBe('<h1>Letter for {{ name }}</h1>');
      // The template as filled, and the mark every preview carries (docs/templates.md, "Previews").
      expect(normalizeText(first.pdf.text)).toBe('Letter for Ada PREVIEW');
      expect(await page.$eval('#template-result .error', (box) => (box as HTMLElement).dataset.code)).toBe('invalid_request');
      expect(await text(page, '#template-result .error')).toMatch(/^400 invalid_request: .*\/name: must be string/);
      // Chromium logs the refused request itself; nothing else went wrong.
      expect(problems).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    } finally {
      await page.close();
    }
  });
});

describe('GET /assets/{name}', () => {
  test('serves the allow-listed files with their types', async () => {
    const script = await request('GET', '/assets/playground.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const redoc = await request('GET', '/assets/redoc.standalone.js');
    expect(redoc.status).toBe(200);
    expect(redoc.text.length).toBeGreaterThan(500_000);
    expect((await request('GET', '/assets/playground.css')).headers.get('content-type')).toMatch(/^text\/css/);
  });

  /** An asset as the wire carries it (fetch would decode it): status, headers and the bytes sent. */
  const onTheWire = (name: string, headers: Record<string, string>) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }>((resolve, reject) => {
      get(`${apiUrl}/assets/${name}`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, bytes: Buffer.concat(chunks) }));
      }).on('error', reject);
    });

  test('sends the docs page’s 1.1 MB of Redoc compressed, as the browser accepts, and a 304 to a browser that has it', async () => {
    const original = await readFile(join(import.meta.dirname, '../../node_modules/redoc/bundles/redoc.standalone.js'));

    // Brotli, as browsers ask: the same bytes, in a third of the size or less.
    const br = await onTheWire('redoc.standalone.js', { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/Accept-Encoding/i);
    expect(br.headers['cache-control']).toMatch(/public/);
    expect(brotliDecompressSync(br.bytes).equals(original)).toBe(true);
    expect(br.bytes.length).toBeLessThan(original.length / 3);

    // gzip where Brotli is not accepted; the file as it is where nothing is.
    const gzip = await onTheWire('redoc.standalone.js', { 'Accept-Encoding': 'gzip;q=1, br;q=0' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.bytes).equals(original)).toBe(true);
    const plain = await onTheWire('redoc.standalone.js', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.equals(original)).toBe(true);

    // Each representation has its own ETag; asking again with any of them is a 304 with no body.
    const etags = [br, gzip, plain].map((answer) => answer.headers.etag as string);
    expect(new Set(etags).size).toBe(3);
    for (const etag of etags) {
      const again = await onTheWire('redoc.standalone.js', { 'Accept-Encoding': 'br', 'If-None-Match': etag });
      expect(again.status).toBe(304);
      expect(again.bytes.length).toBe(0);
    }
    // Another file's ETag is no match.
    expect((await onTheWire('docs.js', { 'If-None-Match': etags[0]! })).status).toBe(200);
  });

  test.each(['..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fpackage.json', 'pages.ts', 'assets.ts', 'nope.js', 'constructor', '__proto__'])(
    'answers 404 for %s, in the error shape',
    async (name) => {
      const response = await request('GET', `/assets/${name}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
      expect(response.text).not.toContain('"dependencies"');
    },
  );
});
