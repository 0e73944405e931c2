/**
 * Polling a job (`GET /v1/jobs/{job_id}`) spends a per-minute budget of its own
 * (lib/accounts/tiers.ts JOB_POLLS_PER_MINUTE), not the one the key's requests share: a client
 * waiting for its job must not lose the right to generate, and polling is still limited.
 */
import { describe, expect, it } from 'vitest';
import { JOB_POLLS_PER_MINUTE, TIERS } from '#lib/accounts/tiers.ts';
import { createKey, expectApiError, generate, post, request } from '../support/api.ts';

describe('polling a job', () => {
  it('spends a budget of its own: a free key that polled more often than its request limit still generates', async () => {
    // Arrange
    const key = await createKey('free');
    const accepted = await post('/v1/pdf/generate', { html: '<p>Polled</p>', async: true }, key.apiKey);
    expect(accepted.status).toBe(202);

    // Act: more polls than the key may send requests in a minute
    const polls = [];
    for (let i = 0; i < TIERS.free.rateLimitPerMinute + 2; i++) polls.push(await request('GET', `/v1/jobs/${accepted.body.job_id}`, { apiKey: key.apiKey }));
    const generated = await generate(key.apiKey, { html: '<p>After polling</p>' });

    // Assess
    expect(polls.map((poll) => poll.status)).toEqual(polls.map(() => 200));
    expect(polls.at(-1)!.headers.get('ratelimit-limit')).toBe(String(JOB_POLLS_PER_MINUTE.free));
    expect(generated.status).toBe(200);
    expect(generated.headers.get('ratelimit-limit')).toBe(String(TIERS.free.rateLimitPerMinute));
  });

  it('is limited too: past its budget a poll is 429 rate_limit_exceeded with retry_after', async () => {
    // Arrange
    const key = await createKey('free');
    const accepted = await post('/v1/pdf/generate', { html: '<p>Polled hard</p>', async: true }, key.apiKey);
    const budget = JOB_POLLS_PER_MINUTE.free;

    // Act: polls until one is refused (a minute's window may turn once on the way)
    let refused;
    let admitted = 0;
    while (!refused && admitted <= 2 * budget) {
      const poll = await request('GET', `/v1/jobs/${accepted.body.job_id}`, { apiKey: key.apiKey });
      if (poll.status === 429) refused = poll;
      else admitted++;
    }

    // Assess
    expect(refused).toBeDefined();
    expect(expectApiError(refused!, 429, 'rate_limit_exceeded')).toContain(`${budget} job polls per minute`);
    expect(refused!.body.error.retry_after).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeGreaterThanOrEqual(budget);
  });
});
