/**
 * What a request's log line names (lib/api/request-log.ts): the PDFs, job or template its path names
 * or its successful JSON answer made, never a listing's records, an asset's name or an error's ids.
 */
import { describe, expect, it } from 'vitest';
import { requestIdOf, subjectsOf } from '#lib/api/request-log.ts';

const jsonAnswer = (statusCode: number, body: unknown) => ({ statusCode, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) });

describe('subjectsOf', () => {
  it('names a generated PDF, a batch’s items and its merged PDF, and an async job', () => {
    // Act
    const single = subjectsOf({ resource: '/v1/pdf/generate', pathParameters: null }, jsonAnswer(200, { id: 'pdf_a', url: 'https://x' }));
    const batch = subjectsOf(
      { resource: '/v1/pdf/batch', pathParameters: null },
      jsonAnswer(200, { results: [{ success: true, id: 'pdf_b' }, { success: false, error: 'RENDER_FAILED' }, { success: true, id: 'pdf_c' }], merged: { id: 'pdf_m' } }),
    );
    const job = subjectsOf({ resource: '/v1/pdf/generate', pathParameters: null }, jsonAnswer(202, { job_id: 'job_x', status: 'queued' }));

    // Assess
    expect(single).toEqual({ pdf_ids: ['pdf_a'] });
    expect(batch).toEqual({ pdf_ids: ['pdf_m', 'pdf_b', 'pdf_c'] });
    expect(job).toEqual({ job_id: 'job_x' });
  });

  it('names the ids of the path, also when the answer is an error', () => {
    // Act
    const pdf = subjectsOf({ resource: '/v1/pdf/{id}', pathParameters: { id: 'pdf_gone' } }, jsonAnswer(404, { error: { code: 'not_found' } }));
    const template = subjectsOf({ resource: '/v1/templates/{template_id}/preview', pathParameters: { template_id: 'tpl_1' } }, { statusCode: 200, headers: { 'Content-Type': 'application/pdf' }, body: 'JVBERi0=', isBase64Encoded: true });
    const jobPoll = subjectsOf({ resource: '/v1/jobs/{job_id}', pathParameters: { job_id: 'job_y' } }, jsonAnswer(200, { job_id: 'job_y', result: { id: 'pdf_r' } }));

    // Assess
    expect(pdf).toEqual({ pdf_ids: ['pdf_gone'] });
    expect(template).toEqual({ template_id: 'tpl_1' });
    expect(jobPoll).toEqual({ job_id: 'job_y' });
  });

  it('names nothing for a listing, an asset, or an error answer', () => {
    // Act / Assess
    expect(subjectsOf({ resource: '/v1/pdf', pathParameters: null }, jsonAnswer(200, { data: [{ id: 'pdf_1' }, { id: 'pdf_2' }], next_cursor: null }))).toEqual({});
    expect(subjectsOf({ resource: '/assets/{name}', pathParameters: { name: 'playground.js' } }, { statusCode: 200, headers: { 'Content-Type': 'text/javascript' }, body: '' })).toEqual({});
    expect(subjectsOf({ resource: '/v1/pdf/generate', pathParameters: null }, jsonAnswer(422, { error: { code: 'x', id: 'pdf_no' } }))).toEqual({});
  });
});

describe('requestIdOf', () => {
  it('is API Gateway’s request id, or the invocation’s where there is no gateway', () => {
    // Act / Assess
    expect(requestIdOf({ requestContext: { requestId: 'gw-1' } as never }, { awsRequestId: 'fn-1' })).toBe('gw-1');
    expect(requestIdOf(undefined, { awsRequestId: 'fn-1' })).toBe('fn-1');
  });
});
