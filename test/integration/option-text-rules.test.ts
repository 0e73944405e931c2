/**
 * Names that lie (issue #29, item 5), through the local stack: a download name that a bidi override
 * would show backwards is refused with 400 naming filename and the character, before anything is
 * rendered or charged. The rule's other cases are unit-tested (test/unit/option-text-rules.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, expectApiError, generate, quotaUsed, type TestKey } from '../support/api.ts';

describe('filename', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  it('refuses a right-to-left override with 400 naming filename, and charges nothing', async () => {
    // Prepare
    const before = await quotaUsed(key);

    // Act: shown by a file manager as "invoicefdp.exe.jpg"
    const response = await generate(key.apiKey, { html: '<p>Invoice</p>', filename: 'invoice\u202egpj.exe' });

    // Assess
    expect(expectApiError(response, 400, 'invalid_request')).toMatch(/^filename must not contain control, invisible or reordering characters.*U\+202E/);
    expect(await quotaUsed(key)).toBe(before);
  });
});
