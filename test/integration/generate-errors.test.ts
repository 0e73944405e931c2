/**
 * The refusals of POST /v1/pdf/generate (decisions.md "Requests", spec 5 and 7): each rule gives
 * its documented status, code and a message a caller can act on, in the one error shape, and no
 * error body shows a stack trace, a source path or the caller's key.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, expectApiError, request, runKeyTool, type TestKey } from '../support/api.ts';

const GENERATE = '/v1/pdf/generate';
const JSON_HEADERS = { 'Content-Type': 'application/json' };
/** Well-formed (prefix and length) but never issued. */
const UNKNOWN_KEY = 'pdfk_' + 'Z'.repeat(40);
const MB = 1024 * 1024;

describe('POST /v1/pdf/generate refusals', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('enterprise');
  });

  const generateRaw = (body: string, apiKey: string | undefined = key.apiKey, headers = JSON_HEADERS) =>
    request('POST', GENERATE, { apiKey, body, headers });
  const generateJson = (body: Record<string, unknown>) => generateRaw(JSON.stringify(body));

  describe('source: html or url', () => {
    it('neither html nor url is 400 invalid_request saying html or url is required', async () => {
      // Act
      const response = await generateJson({ format: 'A4' });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] });
      expect(message).toMatch(/html or url is required/i);
    });

    it('both html and url is 400 invalid_request saying to give only one of them', async () => {
      // Act
      const response = await generateJson({ html: '<p>Hi</p>', url: 'https://example.com/' });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] });
      expect(message).toMatch(/html/);
      expect(message).toMatch(/url/);
      expect(message).toMatch(/either|one of|not both/i);
    });
  });

  describe('options', () => {
    it.each([
      { field: 'format', value: 'A9', allowed: ['A4', 'A3', 'A5', 'Letter', 'Legal', 'Tabloid'] },
      { field: 'scale', value: 3, allowed: ['0.1', '2'] },
      { field: 'scale', value: 0, allowed: ['0.1', '2'] },
      { field: 'orientation', value: 'sideways', allowed: ['portrait', 'landscape'] },
      { field: 'margin', value: 'banana', allowed: ['mm'] },
      { field: 'margin', value: { top: 'banana' }, allowed: ['mm'] },
      { field: 'wait_for', value: 'later', allowed: ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] },
      { field: 'print_background', value: 'yes', allowed: ['true', 'false'] },
    ])('$field = $value is 400 invalid_request naming the field and what is allowed', async ({ field, value, allowed }) => {
      // Act
      const response = await generateJson({ html: '<p>Options</p>', [field]: value });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] });
      expect(message).toContain(field);
      for (const word of allowed) expect(message).toContain(word);
    });

    it('an unknown option is 400 invalid_request naming it', async () => {
      // Act
      const response = await generateJson({ html: '<p>Options</p>', paper_size: 'A4' });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] });
      expect(message).toContain('paper_size');
    });
  });

  describe('html', () => {
    it('an unterminated tag is 400 invalid_request saying the HTML is malformed and why', async () => {
      // Act
      const response = await generateJson({ html: '<!doctype html><p>Total: 42</p><div class="tot' });

      // Assess
      const message = expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] });
      expect(message).toMatch(/malformed/i);
      expect(message).toMatch(/tag|attribute/i);
    });

    it('an unterminated comment is 400 invalid_request saying the HTML is malformed', async () => {
      // Act
      const response = await generateJson({ html: '<p>Hello</p><!-- forgot to close' });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/malformed/i);
    });

    it.each([
      ['an empty string', ''],
      ['only white space', '  \n '],
      ['a number', 42],
    ])('html that is %s is 400 invalid_request', async (_what, html) => {
      // Act
      const response = await generateJson({ html });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/html/);
    });

    it('sloppy but ordinary HTML (no doctype, unclosed <p>) is accepted', async () => {
      // Act
      const response = await generateJson({ html: '<p>One<p>Two' });

      // Assess
      expect(response.status).toBe(200);
    });
  });

  describe('body', () => {
    it('a body that is not JSON is 400 invalid_request', async () => {
      // Act
      const response = await generateRaw('{"html": "<p>unclosed json"');

      // Assess
      expect(expectApiError(response, 400, 'invalid_request', { secrets: [key.apiKey] })).toMatch(/JSON/);
    });

    it.each([
      ['an array', '[{"html":"<p>Hi</p>"}]'],
      ['a string', '"<p>Hi</p>"'],
      ['null', 'null'],
      ['a number', '42'],
    ])('a JSON body that is %s, not an object, is 400 invalid_request', async (_what, body) => {
      // Act
      const response = await generateRaw(body);

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/object/i);
    });

    it('an empty body is 400 invalid_request', async () => {
      // Act
      const response = await generateRaw('');

      // Assess
      expectApiError(response, 400, 'invalid_request');
    });

    it('a body larger than 5 MB is 413 payload_too_large', async () => {
      // Prepare
      const body = JSON.stringify({ html: `<p>${'x'.repeat(5.5 * MB)}</p>` });

      // Act
      const response = await generateRaw(body);

      // Assess
      expectApiError(response, 413, 'payload_too_large', { secrets: [key.apiKey] });
    });

    it('a body just under 5 MB is read and rendered', async () => {
      // Prepare: the bulk sits in a comment, so the document is large to send but cheap to print.
      const body = JSON.stringify({ html: `<!doctype html><p>Big request</p><!--${'x'.repeat(4_800_000)}-->` });
      expect(Buffer.byteLength(body)).toBeLessThan(5_000_000);

      // Act
      const response = await generateRaw(body);

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.pages).toBe(1);
    });
  });

  describe('routes', () => {
    it.each([
      ['GET', '/v1/nothing-here'],
      ['POST', '/v1/pdfs/generate'],
      ['GET', '/v1'],
      ['POST', '/v2/pdf/generate'],
    ])('%s %s, an unknown route, is 404 not_found', async (method, path) => {
      // Act
      const response = await request(method, path, { apiKey: key.apiKey, ...(method === 'POST' && { body: '{}' }) });

      // Assess
      expectApiError(response, 404, 'not_found', { secrets: [key.apiKey] });
    });

    it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('%s /v1/pdf/generate, a wrong method, is 405 method_not_allowed naming POST', async (method) => {
      // Act
      const response = await request(method, GENERATE, { apiKey: key.apiKey, ...(method !== 'GET' && { body: '{}' }) });

      // Assess
      const message = expectApiError(response, 405, 'method_not_allowed', { secrets: [key.apiKey] });
      expect(message).toContain('POST');
      expect(response.headers.get('allow')).toBe('POST');
    });
  });

  describe('authentication', () => {
    const validBody = JSON.stringify({ html: '<p>Would render</p>' });
    const INVALID_KEY_MESSAGE = /invalid or missing api key/i;

    it('no Authorization header is 401 unauthorized about an invalid or missing API key', async () => {
      // Act
      const response = await request('POST', GENERATE, { body: validBody, headers: JSON_HEADERS });

      // Assess
      expect(expectApiError(response, 401, 'unauthorized')).toMatch(INVALID_KEY_MESSAGE);
    });

    it.each([
      ['a key without the Bearer scheme', `${'pdfk_' + 'a'.repeat(40)}`],
      ['Basic credentials', 'Basic dXNlcjpwYXNz'],
      ['a Bearer token of the wrong shape', 'Bearer pdfk_tooShort'],
      ['an empty Bearer token', 'Bearer '],
    ])('a malformed Authorization header (%s) is 401 unauthorized and not echoed', async (_what, authorization) => {
      // Act
      const response = await request('POST', GENERATE, { body: validBody, headers: { ...JSON_HEADERS, Authorization: authorization } });

      // Assess
      const secret = authorization.replace(/^(Bearer|Basic)\s*/, '');
      expect(expectApiError(response, 401, 'unauthorized', { secrets: [secret] })).toMatch(INVALID_KEY_MESSAGE);
    });

    it('a well-formed key that was never issued is 401 unauthorized and not echoed', async () => {
      // Act
      const response = await generateRaw(validBody, UNKNOWN_KEY);

      // Assess
      expect(expectApiError(response, 401, 'unauthorized', { secrets: [UNKNOWN_KEY] })).toMatch(INVALID_KEY_MESSAGE);
    });

    it('a revoked key is refused with 401 from the next request on', async () => {
      // Prepare
      const doomed = await createKey('pro');
      const before = await generateRaw(validBody, doomed.apiKey);
      expect(before.status).toBe(200);
      const revoke = await runKeyTool(['revoke', doomed.keyId]);
      expect(revoke.code).toBe(0);

      // Act
      const response = await generateRaw(validBody, doomed.apiKey);

      // Assess
      expect(expectApiError(response, 401, 'unauthorized', { secrets: [doomed.apiKey] })).toMatch(INVALID_KEY_MESSAGE);
    });

    it.each([
      ['a body that is not JSON', 'not json at all'],
      ['an invalid option', JSON.stringify({ html: '<p>x</p>', format: 'A9' })],
      ['neither html nor url', '{}'],
    ])('a bad key with %s is 401, not 400: the key is checked first', async (_what, body) => {
      // Act
      const missing = await request('POST', GENERATE, { body, headers: JSON_HEADERS });
      const unknown = await generateRaw(body, UNKNOWN_KEY);

      // Assess
      expectApiError(missing, 401, 'unauthorized');
      expectApiError(unknown, 401, 'unauthorized', { secrets: [UNKNOWN_KEY] });
    });

    it('a bad key with an oversized body is 401, not 413', async () => {
      // Act
      const response = await generateRaw(JSON.stringify({ html: 'x'.repeat(5.5 * MB) }), UNKNOWN_KEY);

      // Assess
      expectApiError(response, 401, 'unauthorized', { secrets: [UNKNOWN_KEY] });
    });
  });
});
