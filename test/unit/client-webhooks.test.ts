/**
 * verifyWebhook against webhooks signed as the service signs them (the `standardwebhooks` package
 * the service's deliveries use): accepted with the secret, or any secret of a rotation; refused when
 * the body, the signature or the secret differ, or the timestamp is old.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.ts';

const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes!!!!').toString('base64')}`;
const OTHER = `whsec_${Buffer.from('another secret, also 32 bytes...').toString('base64')}`;
const BODY = JSON.stringify({ type: 'pdf.job.completed', timestamp: '2026-11-28T06:00:00.000Z', data: { job_id: 'job_1', status: 'succeeded', created_at: '2026-11-28T05:59:00.000Z' } });

function signed(secret: string, body: string, at = new Date()) {
  const id = 'msg_2Kd9';
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
}

describe('verifyWebhook', () => {
  it('answers the event of a webhook signed with the secret, from a plain object or a Headers', async () => {
    const headers = signed(SECRET, BODY);
    await expect(verifyWebhook(BODY, headers, SECRET)).resolves.toMatchObject({ type: 'pdf.job.completed', data: { job_id: 'job_1' } });
    await expect(verifyWebhook(new TextEncoder().encode(BODY), new Headers(headers), SECRET)).resolves.toMatchObject({ type: 'pdf.job.completed' });
  });

  it('accepts any of several secrets during a rotation', async () => {
    await expect(verifyWebhook(BODY, signed(OTHER, BODY), [SECRET, OTHER])).resolves.toMatchObject({ type: 'pdf.job.completed' });
  });

  it.each([
    ['a changed body', () => verifyWebhook(BODY.replace('succeeded', 'failed'), signed(SECRET, BODY), SECRET), /no webhook-signature matches/],
    ['another secret', () => verifyWebhook(BODY, signed(OTHER, BODY), SECRET), /no webhook-signature matches/],
    ['a message ten minutes old', () => verifyWebhook(BODY, signed(SECRET, BODY, new Date(Date.now() - 600_000)), SECRET), /more than 300 s from now/],
    ['no signature', () => verifyWebhook(BODY, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }, SECRET), /missing/],
  ])('refuses %s', async (_case, verify, message) => {
    const error = await verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).message).toMatch(message);
  });
});
