/**
 * The OpenAPI document as a document: valid OpenAPI 3.1 by an independent parser, and complete
 * against the code it is generated from (routes, options, error codes, item codes). What it says
 * about live behaviour is checked through the local stack in test/integration/openapi.test.ts.
 */
import { validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, test } from 'vitest';
import { GATEWAY_ANSWERS } from '../../cdk/constructs/rest-api.ts';
import { API_ERRORS, type ApiErrorCode } from '#lib/api/errors.ts';
import { OPTION_DOCS, openApiDocument } from '#lib/api/openapi.ts';
import { FUNCTION_PROFILES, ROUTES } from '#lib/api/routes.ts';
import { BATCH_ITEM_ERRORS, ITEM_FIELDS } from '#lib/documents/batch.ts';
import { ASYNC_REQUEST_FIELDS, documentOptionsShape, TEMPLATE_SOURCE_FIELDS, PDF_ONLY_OPTIONS } from '#lib/documents/document-options.ts';

// Prepare: the document as a client would fetch it (a JSON round trip drops nothing it needs).
const document = JSON.parse(JSON.stringify(openApiDocument({ serverUrl: 'https://api.example.com/prod' })));
const schemas = document.components.schemas as Record<string, { properties: Record<string, any>; required?: string[] }>;
const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1 (by @readme/openapi-parser, which checks it against the official schema)', async () => {
    const result = await validate(structuredClone(document));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: 'https://api.example.com/prod' }]);
  });

  test('passes the checks code generators rely on: no error under Redocly\'s recommended rules (the parser openapi-typescript itself uses)', async () => {
    // Every operation says its security (an empty list for the keyless ones), ids are unique,
    // parameters and $refs resolve. Warnings left: no licence, redirect-only operations (302) and
    // pages without a 4xx, one error schema kept for the gateway's 405.
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config: await createConfig({ extends: ['recommended'] }) });
    expect(problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
  });

  test('documents every route of the routes table, and nothing the API does not serve', () => {
    const documented = operations.map(({ method, path }) => `${method} ${path}`).sort();
    expect(documented).toEqual(ROUTES.map(({ method, path }) => `${method} ${path}`).sort());
    for (const { operation, method, path } of operations) {
      expect(operation.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, `${method} ${path}`).toBeTruthy();
    }
    expect(new Set(operations.map(({ operation }) => operation.operationId)).size).toBe(operations.length);
  });

  test('requires the bearer key exactly on the routes that check it', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const keyed = operations.filter(({ operation }) => operation.security?.length).map(({ method, path }) => `${method} ${path}`);
    expect(keyed.sort()).toEqual(
      ROUTES.filter((route) => ['generate', 'batch', 'pdfs', 'jobs', 'usage', 'templates', 'preview', 'bulk', 'uploads', 'signingKeys'].includes(route.handler)).map(({ method, path }) => `${method} ${path}`).sort(),
    );
    for (const { operation } of operations.filter(({ operation }) => operation.security?.length)) {
      expect(Object.keys(operation.responses)).toContain('401');
      const success = operation.responses[Object.keys(operation.responses).find((status) => /^[23]/.test(status))!];
      expect(Object.keys(success.headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
      expect(Object.keys(operation.responses['429'].headers)).toContain('Retry-After');
    }
  });

  test('documents Idempotency-Key exactly on the routes that honour it, with its refusals and the replay header', () => {
    const idempotent = operations.filter(({ operation }) => operation.parameters?.some((parameter: { name: string }) => parameter.name === 'Idempotency-Key'));
    expect(idempotent.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      ROUTES.filter((route) => FUNCTION_PROFILES[route.handler].idempotency).map(({ method, path }) => `${method} ${path}`).sort(),
    );
    for (const { operation } of idempotent) {
      const parameter = operation.parameters.find((candidate: { name: string }) => candidate.name === 'Idempotency-Key');
      expect(parameter).toMatchObject({ in: 'header', schema: { type: 'string' } });
      expect(parameter.required ?? false).toBe(false);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['409', '422']));
      // On its success, whichever it is (200 for a document or a batch, 202 for a bulk job).
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))!;
      expect(Object.keys(operation.responses[success].headers)).toContain('Idempotent-Replayed');
    }
  });

  test('gives every option of a document, with a description, on the single endpoint and in batch items', () => {
    const optionNames = Object.keys(documentOptionsShape).sort();
    expect(Object.keys(OPTION_DOCS).sort()).toEqual(optionNames);
    expect(Object.keys(schemas.GenerateRequest!.properties).sort()).toEqual([...optionNames, 'html', 'url', 'markdown', ...TEMPLATE_SOURCE_FIELDS, ...ASYNC_REQUEST_FIELDS].sort());
    // A picture takes every option but those that shape a printed page.
    const imageOptionNames = optionNames.filter((name) => !(PDF_ONLY_OPTIONS as readonly string[]).includes(name));
    expect(Object.keys(schemas.ImageRequest!.properties).sort()).toEqual([...imageOptionNames, 'html', 'url', 'markdown', ...TEMPLATE_SOURCE_FIELDS, ...ASYNC_REQUEST_FIELDS].sort());
    for (const name of [...ASYNC_REQUEST_FIELDS, ...TEMPLATE_SOURCE_FIELDS]) expect(schemas.GenerateRequest!.properties[name].description, name).toBeTruthy();
    for (const name of TEMPLATE_SOURCE_FIELDS) expect(schemas.BatchItem!.properties[name].description, name).toBeTruthy();
    for (const name of ASYNC_REQUEST_FIELDS) {
      expect(schemas.GenerateRequest!.properties[name].description, name).toBeTruthy();
      expect(schemas.BatchRequest!.properties[name].description, name).toBeTruthy();
    }
    expect(Object.keys(schemas.DocumentOptions!.properties).sort()).toEqual(optionNames);
    for (const name of optionNames) expect(schemas.GenerateRequest!.properties[name].description, name).toBeTruthy();
    expect(Object.keys(schemas.BatchItem!.properties).sort()).toEqual([...ITEM_FIELDS].sort());
  });

  test('carries the schema’s own rules: ranges, enums and strictness come from the validating schema', () => {
    const options = schemas.GenerateRequest!;
    expect(options.properties.scale).toMatchObject({ type: 'number', minimum: 0.1, maximum: 2 });
    expect(options.properties.orientation.enum).toEqual(['portrait', 'landscape']);
    expect(options.properties.wait_for.enum).toEqual(['load', 'domcontentloaded', 'networkidle0', 'networkidle2']);
    expect(options.properties.wait_delay_ms).toMatchObject({ type: 'integer', minimum: 0, maximum: 10_000 });
    expect(options.properties.watermark.required).toEqual(['text']);
    expect((options as { additionalProperties?: unknown }).additionalProperties).toBe(false);
  });

  test('documents every error code the server can answer with, at its status, in the error shape', () => {
    for (const [code, { status }] of Object.entries(API_ERRORS)) {
      const name = Object.keys(schemas).find((schemaName) => schemas[schemaName]?.properties?.error?.properties?.code?.const === code);
      expect(name, code).toBeDefined();
      expect(schemas[name as string]!.properties.error.required).toEqual(expect.arrayContaining(['code', 'message']));
      // Referenced under its own status by at least one operation (405 comes from any path: the components list it).
      const referencing = operations.filter(({ operation }) => JSON.stringify(operation.responses[String(status)] ?? {}).includes(`"#/components/schemas/${name}"`));
      if (code !== 'method_not_allowed') expect(referencing.length, code).toBeGreaterThan(0);
    }
    // API Gateway's own answers use the same catalogue.
    for (const answer of GATEWAY_ANSWERS) {
      expect(Object.keys(API_ERRORS), answer.code).toContain(answer.code);
      if (answer.status) expect(String(API_ERRORS[answer.code as ApiErrorCode].status)).toBe(answer.status);
    }
  });

  test('lists every batch item error code', () => {
    const failure = schemas.BatchItemFailure!.properties.error.properties.code;
    expect(failure.enum.sort()).toEqual(Object.keys(BATCH_ITEM_ERRORS).sort());
  });
});

describe('the OpenAPI document: asynchronous jobs', () => {
  const document = openApiDocument({ serverUrl: 'https://api.example.com' }) as any;

  test('generate and batch answer 202 with a job and its Location, refuse a bad webhook_url with 400 url_not_allowed', () => {
    for (const path of ['/v1/pdf/generate', '/v1/pdf/batch']) {
      const responses = document.paths[path].post.responses;
      expect(responses['202'].content['application/json'].schema.$ref).toBe('#/components/schemas/JobAccepted');
      expect(Object.keys(responses['202'].headers)).toContain('Location');
      expect(JSON.stringify(responses['400'])).toContain('UrlNotAllowedError');
    }
  });

  test('GET /v1/jobs/{job_id} needs a key and answers the Job; the signed webhook is described with its Standard Webhooks headers', () => {
    const get = document.paths['/v1/jobs/{job_id}'].get;
    expect(get.security).toEqual([{ bearerAuth: [] }]);
    expect(get.responses['200'].content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\/Job(Output)?$/);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['401', '404']));
    const hook = document.webhooks.jobEnded.post;
    expect(hook.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(hook.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebhookEvent');
    expect(document.components.schemas.WebhookEvent.properties.type.enum).toEqual(['pdf.job.completed', 'pdf.job.failed']);
  });
});

describe('the OpenAPI document: bulk jobs', () => {
  const document = openApiDocument({ serverUrl: 'https://api.example.com' }) as any;
  const schemas = document.components.schemas;

  test('an upload, then a bulk job from it (202 with the job and its line count), refused 400 or 402; its progress, cancel, manifest and archive', () => {
    const upload = document.paths['/v1/uploads'].post;
    expect(upload.security).toEqual([{ bearerAuth: [] }]);
    expect(upload.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/Upload');
    expect(schemas.Upload.required.sort()).toEqual(['expires_at', 'upload_id', 'url']);

    const bulk = document.paths['/v1/pdf/bulk'].post;
    expect(bulk.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/BulkRequest');
    expect(Object.keys(schemas.BulkRequest.properties).sort()).toEqual(['archive', 'items', 'options', 'skip_invalid', 'upload_id', 'webhook_url']);
    expect(schemas.BulkRequest.additionalProperties).toBe(false);
    expect(schemas.BulkRequest.properties.items.items.$ref).toBe('#/components/schemas/BatchItem');
    expect(bulk.responses['202'].content['application/json'].schema.$ref).toBe('#/components/schemas/BulkAccepted');
    expect(Object.keys(bulk.responses['202'].headers)).toContain('Location');
    expect(JSON.stringify(bulk.responses['400'])).toContain('UrlNotAllowedError');
    expect(JSON.stringify(bulk.responses['402'])).toContain('QuotaExceededError');

    const cancel = document.paths['/v1/jobs/{job_id}'].delete;
    expect(cancel.responses['200'].content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\/Job(Output)?$/);
    for (const file of ['manifest', 'archive']) {
      const get = document.paths[`/v1/jobs/{job_id}/${file}`].get;
      expect(Object.keys(get.responses['302'].headers)).toContain('Location');
      expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['401', '404']));
    }
    expect(Object.keys(schemas.Job.properties)).toEqual(expect.arrayContaining(['total', 'succeeded', 'failed']));
    expect(Object.keys(schemas.BulkResult.properties).sort()).toEqual(['archive_error', 'archive_url', 'failed', 'manifest_url', 'succeeded']);
    expect(schemas.Job.properties.status.enum).toContain('cancelled');
  });
});

describe('the OpenAPI document: templates', () => {
  const document = openApiDocument({ serverUrl: 'https://api.example.com' }) as any;

  test('the template routes take and answer the documented shapes; preview answers application/pdf', () => {
    const create = document.paths['/v1/templates'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/TemplateRequest');
    expect(create.responses['201'].content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\/Template(Output)?$/);
    expect(JSON.stringify(create.responses['403'])).toContain('TemplateLimitExceededError');
    expect(document.paths['/v1/templates/{template_id}'].put.responses['200'].content['application/json'].schema.$ref).toMatch(/Template/);
    const preview = document.paths['/v1/templates/{template_id}/preview'].post;
    expect(Object.keys(preview.responses['200'].content)).toEqual(['application/pdf']);
    expect(Object.keys(preview.responses['429'].headers)).toContain('Retry-After');
    expect(JSON.stringify(document.paths['/v1/pdf/generate'].post.responses['422'])).toContain('TemplateErrorError');
    expect(JSON.stringify(document.paths['/v1/pdf/generate'].post.responses['404'])).toContain('NotFoundError');
    expect(document.components.schemas.PdfRecord.properties).toHaveProperty('template_id');
    expect(document.components.schemas.PdfRecord.properties).toHaveProperty('template_version');
  });
});
