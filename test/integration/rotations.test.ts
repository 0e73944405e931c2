/**
 * Rotations (issue #42), through the key tool and the local stack as an operator and a customer
 * meet them: an API key replaced with an overlap (both work, on the same account, until the end the
 * tool printed; then only the new one), a key's tier changed (its limits follow from the next
 * request), and a webhook secret rotated with an overlap (each delivery carries a `v1,` signature
 * per secret in force, so a receiver holding either verifies it; without overlap only the new one).
 *
 * The stack is a child process of this file's own (as `npm start` runs), with a loopback webhook
 * receiver allowed by PDF_ALLOW_PRIVATE_HOSTS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request, runKeyTool, savedEnvironment, type ApiResponse } from '../support/api.ts';
import { WebhookReceiver, type Delivery } from '../support/webhook-receiver.ts';

/** Resolves once the clock has passed `instant` (an end the key tool printed): waiting for a known moment, not a guessed one. */
async function clockPasses(instant: string): Promise<void> {
  const wait = Date.parse(instant) - Date.now();
  if (wait >= 0) await new Promise((resolve) => setTimeout(resolve, wait + 50));
}

function verifies(secret: string, delivery: Delivery): boolean {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

describe('rotations', () => {
  const receiver = new WebhookReceiver();
  const environment = savedEnvironment();
  let dataDir: string;
  let stack: StackProcess;

  const call = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
    request(method, stack.info.apiUrl + path, {
      apiKey,
      ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    });
  const keyTool = async (args: string[]) => {
    const run = await runKeyTool([...args, '--json'], { DATA_DIR: dataDir });
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout);
  };

  beforeAll(async () => {
    await receiver.start();
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-rotations-'));
    process.env.PDF_ALLOW_PRIVATE_HOSTS = [environment.saved.PDF_ALLOW_PRIVATE_HOSTS, receiver.host].filter(Boolean).join(',');
    process.env.WEBHOOK_DISPATCH_INTERVAL_MS = '200';
    stack = await startStackProcess(dataDir);
  }, 90_000);

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    environment.restore();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('an API key rotated with an overlap: both keys work on the same account until the printed end, then only the new one', async () => {
    // Prepare: a key that has made a PDF
    const first = await createKeyIn(dataDir, 'starter');
    const made = await call('POST', '/v1/pdf/generate', first.apiKey, { html: '<p>made with the first key</p>' });
    expect(made.status).toBe(200);

    // Act: rotate with an hour of overlap
    const rotated = await keyTool(['rotate', first.keyId, '--overlap', '1h']);

    // Assess: a new key of the same account; the old one still works, and both see the same PDFs and quota
    expect(rotated.api_key).toMatch(/^pdfk_[0-9A-Za-z]{40}$/);
    expect(rotated.api_key).not.toBe(first.apiKey);
    expect(rotated.key_id).toBe(first.keyId);
    expect(Date.parse(rotated.previous_keys_retire_at) - Date.now()).toBeGreaterThan(59 * 60_000);
    for (const apiKey of [first.apiKey, rotated.api_key]) {
      const listed = await call('GET', '/v1/pdf', apiKey);
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((pdf: { id: string }) => pdf.id)).toEqual([made.body.id]);
      expect((await call('GET', '/v1/usage', apiKey)).body).toMatchObject({ tier: 'starter', quota_used: 1 });
    }
    const listedKeys = (await keyTool(['list'])) as { key_id: string; previous_key_retires_at: string | null }[];
    expect(listedKeys.find((key) => key.key_id === first.keyId)?.previous_key_retires_at).toBe(rotated.previous_keys_retire_at);

    // Act: rotate again with a 2 s overlap, and wait for its end to pass
    const again = await keyTool(['rotate', first.keyId, '--overlap', '2s']);
    await clockPasses(again.previous_keys_retire_at);

    // Assess: both earlier keys are refused (the first one's hour was cut to the new, sooner end), the newest works
    for (const retired of [first.apiKey, rotated.api_key]) {
      const refused = await call('GET', '/v1/usage', retired);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
    }
    expect((await call('GET', '/v1/usage', again.api_key)).body).toMatchObject({ tier: 'starter', quota_used: 1 });
    expect(((await keyTool(['list'])) as { key_id: string; previous_key_retires_at: string | null }[]).find((key) => key.key_id === first.keyId)?.previous_key_retires_at).toBeNull();
  });

  it('a rotation with no overlap refuses the old key at once; revoking the key refuses all of its keys; a revoked key cannot rotate', async () => {
    // Prepare
    const key = await createKeyIn(dataDir, 'free');

    // Act
    const rotated = await keyTool(['rotate', key.keyId, '--overlap', '0']);
    const old = await call('GET', '/v1/usage', key.apiKey);
    const current = await call('GET', '/v1/usage', rotated.api_key);
    const again = await keyTool(['rotate', key.keyId, '--overlap', '1h']);
    const revoked = await runKeyTool(['revoke', key.keyId], { DATA_DIR: dataDir });

    // Assess
    expect(old.status).toBe(401);
    expect(current.status).toBe(200);
    expect(revoked.code).toBe(0);
    for (const apiKey of [rotated.api_key, again.api_key]) expect((await call('GET', '/v1/usage', apiKey)).status).toBe(401);
    const refused = await runKeyTool(['rotate', key.keyId], { DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is revoked');
    const badOverlap = await runKeyTool(['rotate', key.keyId, '--overlap', '1y'], { DATA_DIR: dataDir });
    expect(badOverlap.code).toBe(1);
    expect(badOverlap.stderr).toContain('--overlap must be');
  });

  it('a tier change applies from the next request, overrides dropped unless given again', async () => {
    // Prepare: a free key, refused an 11-document batch
    const key = await createKeyIn(dataDir, 'free', ['--monthly-quota', '7']);
    const items = Array.from({ length: 11 }, (_, i) => ({ html: `<p>${i}</p>` }));
    expect((await call('POST', '/v1/pdf/batch', key.apiKey, { pdfs: items })).body.error.code).toBe('batch_too_large');
    expect((await call('GET', '/v1/usage', key.apiKey)).body).toMatchObject({ tier: 'free', monthly_quota: 7 });

    // Act
    const changed = await keyTool(['change-tier', key.keyId, '--tier', 'pro']);
    const usage = await call('GET', '/v1/usage', key.apiKey);

    // Assess: the same key is pro now, with pro's limits (its free-tier quota override dropped)
    expect(changed).toMatchObject({ key_id: key.keyId, tier: 'pro', rate_limit_per_minute: 300, monthly_quota: 50_000 });
    expect(usage.body).toMatchObject({ tier: 'pro', rate_limit_per_minute: 300, monthly_quota: 50_000, max_batch_size: 100, link_validity_days: 90 });

    // Act: an override given with the change is kept
    await keyTool(['change-tier', key.keyId, '--tier', 'enterprise', '--rate-limit', '5000']);

    // Assess
    expect((await call('GET', '/v1/usage', key.apiKey)).body).toMatchObject({ tier: 'enterprise', rate_limit_per_minute: 5000, monthly_quota: 1_000_000 });
    const unknown = await runKeyTool(['change-tier', 'key_doesnotexist', '--tier', 'pro'], { DATA_DIR: dataDir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No key with id key_doesnotexist');
  });

  it('a webhook secret rotated with an overlap: deliveries carry both signatures and verify with either; without overlap, only the new', async () => {
    // Prepare
    const key = await createKeyIn(dataDir, 'pro');
    const deliveryTo = async (hook: string) => {
      const submitted = await call('POST', '/v1/pdf/generate', key.apiKey, { html: `<p>${hook}</p>`, async: true, webhook_url: receiver.hook(hook) });
      expect(submitted.status).toBe(202);
      return vi.waitFor(
        () => {
          const [delivery] = receiver.received(hook);
          expect(delivery).toBeDefined();
          return delivery!;
        },
        { timeout: 60_000, interval: 200 },
      );
    };

    // Act: rotate with an hour of overlap
    const rotated = await keyTool(['rotate-webhook-secret', key.keyId, '--overlap', '1h']);
    const shown = await keyTool(['show-webhook-secret', key.keyId]);
    const during = await deliveryTo('during-overlap');

    // Assess: the tool shows the new secret and the old one with its end; a receiver with either verifies
    expect(rotated.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.webhook_secret).not.toBe(key.webhookSecret);
    expect(shown).toEqual({
      key_id: key.keyId,
      webhook_secret: rotated.webhook_secret,
      retiring_webhook_secrets: [{ webhook_secret: key.webhookSecret, retires_at: rotated.retiring_webhook_secrets[0].retires_at }],
    });
    expect(String(during.headers['webhook-signature']).split(' ')).toEqual([expect.stringMatching(/^v1,/), expect.stringMatching(/^v1,/)]);
    expect(verifies(key.webhookSecret, during)).toBe(true);
    expect(verifies(rotated.webhook_secret, during)).toBe(true);
    expect(verifies((await keyTool(['create', '--tier', 'free'])).webhook_secret, during)).toBe(false);

    // Act: rotate again, with no overlap
    const replaced = await keyTool(['rotate-webhook-secret', key.keyId, '--overlap', '0']);
    const after = await deliveryTo('after-overlap');

    // Assess: only the newest signs (the first secret's hour ended with this rotation too)
    expect(replaced.retiring_webhook_secrets).toEqual([]);
    expect((await keyTool(['show-webhook-secret', key.keyId])).retiring_webhook_secrets).toEqual([]);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(replaced.webhook_secret, after)).toBe(true);
    expect(verifies(rotated.webhook_secret, after)).toBe(false);
    expect(verifies(key.webhookSecret, after)).toBe(false);
  });
});
