/**
 * Templates cost nothing in fidelity (#31): the worked invoice example (examples/invoice/), stored
 * as a template and rendered by the service with its sample data, is identical to the same HTML
 * (the engine's output, footer included) sent directly, and prints as plain Chromium prints that
 * HTML, by the harness's comparison (compare.ts). Pictures of any difference go to
 * .local/fidelity-templates/.
 */
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { renderTemplate } from '#lib/templates/engine.ts';
import { comparePdfBytes } from './harness.ts';
import { launchReference, printReference } from './reference.ts';
import { printWithService, REPO_ROOT } from './service.ts';

const service = inject('fidelityService');
const outDir = resolve(REPO_ROOT, '.local/fidelity-templates');
const example = (file: string) => readFile(join(REPO_ROOT, 'examples', 'invoice', file), 'utf8');
let reference: Browser;

beforeAll(async () => {
  await rm(outDir, { recursive: true, force: true });
  reference = await launchReference();
});

afterAll(async () => {
  await reference?.close();
});

/** POST /v1/templates on the fidelity service; the new template's id. */
async function saveTemplate(template: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${service.apiUrl}/v1/templates`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.apiKey}` },
    body: JSON.stringify(template),
  });
  const body = (await response.json()) as { template_id?: string };
  if (response.status !== 201 || !body.template_id) throw new Error(`saving the template answered ${response.status}: ${JSON.stringify(body)}`);
  return body.template_id;
}

/** Generates from a stored template and downloads the PDF. */
async function printTemplate(templateId: string, data: unknown): Promise<Uint8Array> {
  const response = await fetch(`${service.apiUrl}/v1/pdf/generate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.apiKey}` },
    body: JSON.stringify({ template_id: templateId, data }),
  });
  const record = (await response.json()) as { url?: string };
  if (response.status !== 200 || !record.url) throw new Error(`generate answered ${response.status}: ${JSON.stringify(record)}`);
  return new Uint8Array(await (await fetch(record.url, { redirect: 'follow' })).arrayBuffer());
}

describe('fidelity: templates', () => {
  it('the invoice example from its template is identical to its HTML sent directly, and prints as plain Chromium prints it', async () => {
    // Arrange: the template as stored, and the HTML the engine makes of it with its sample data.
    const [html, footer, schema, sample, options] = await Promise.all([
      example('template.html'),
      example('footer.html'),
      example('schema.json').then(JSON.parse),
      example('data.json').then(JSON.parse),
      example('options.json').then(JSON.parse),
    ]);
    const templateId = await saveTemplate({ name: 'Invoice', html, footer_html: footer, data_schema: schema, sample_data: sample, options });
    // The service formats for the data's locale field (lib/documents/templates.ts); so does this.
    const rendered = await renderTemplate({ html, footer_html: footer }, sample, { locale: sample.locale });
    const direct = { ...options, footer_html: rendered.footer_html };

    // Act
    const [fromTemplate, sentDirectly, chromium] = await Promise.all([
      printTemplate(templateId, sample),
      printWithService(service, rendered.html, direct),
      printReference(reference, rendered.html, direct, 0),
    ]);

    // Assess: identical to the direct HTML (every page's pixels, its text, its size)...
    const same = await comparePdfBytes(fromTemplate, sentDirectly, outDir, 'invoice-template-vs-direct');
    expect(same.problems).toEqual([]);
    expect(same.pages).toEqual({ ours: 1, reference: 1 });
    expect(same.textMismatches).toEqual([]);
    expect(same.worst?.share).toBe(0);
    // ...and within the harness's tolerance of plain Chromium, as every corpus case must be.
    const asChromium = await comparePdfBytes(fromTemplate, chromium, outDir, 'invoice-template-vs-chromium');
    expect(asChromium.problems).toEqual([]);
    expect(asChromium.verdict).toBe('ok');
  });
});
