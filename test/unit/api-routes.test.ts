/**
 * Route matching (lib/api/routes.ts), shared by API Gateway and the local adapter: the right
 * handler, the right path parameters, and the right 404/405 information.
 */
import { describe, expect, it } from 'vitest';
import { matchRoute } from '#lib/api/routes.ts';

describe('matchRoute finds the handler', () => {
  it.each([
    ['GET', '/health', 'health'],
    ['POST', '/v1/pdf/generate', 'generate'],
    ['GET', '/v1/pdf', 'pdfs'],
    ['GET', '/v1/pdf/pdf_abc', 'pdfs'],
    ['DELETE', '/v1/pdf/pdf_abc', 'pdfs'],
    ['GET', '/v1/files/pdf_abc', 'files'],
    ['GET', '/v1/templates', 'templates'],
    ['POST', '/v1/templates', 'templates'],
    ['PUT', '/v1/templates/tpl_abc', 'templates'],
    ['DELETE', '/v1/templates/tpl_abc', 'templates'],
    ['POST', '/v1/templates/tpl_abc/preview', 'preview'],
  ])('%s %s goes to %s', (method, path, handler) => {
    // Act
    const match = matchRoute(method, path);

    // Assess
    expect(match).toMatchObject({ route: { method, handler } });
  });

  it('lets the literal /v1/pdf/generate win over /v1/pdf/{id}', () => {
    // Act
    const match = matchRoute('POST', '/v1/pdf/generate');

    // Assess
    expect(match).toEqual({
      route: { method: 'POST', path: '/v1/pdf/generate', handler: 'generate' },
      pathParameters: {},
    });
  });

  it('gives GET /v1/pdf/pdf_x the id parameter', () => {
    // Act
    const match = matchRoute('GET', '/v1/pdf/pdf_x');

    // Assess
    expect(match).toEqual({
      route: { method: 'GET', path: '/v1/pdf/{id}', handler: 'pdfs' },
      pathParameters: { id: 'pdf_x' },
    });
  });

  it('percent-decodes the path parameter', () => {
    // Act
    const match = matchRoute('GET', '/v1/files/pdf%5Fx%20y');

    // Assess
    expect(match).toMatchObject({ pathParameters: { id: 'pdf_x y' } });
  });
});

describe('matchRoute tells a wrong method (405) from an unknown path (404)', () => {
  it('answers PUT /v1/pdf/generate with the allowed method POST', () => {
    // Act
    const match = matchRoute('PUT', '/v1/pdf/generate');

    // Assess
    expect(match).toEqual({ allowedMethods: ['POST'] });
  });

  it('does not treat GET /v1/pdf/generate as reading a PDF with id "generate"', () => {
    // Act
    const match = matchRoute('GET', '/v1/pdf/generate');

    // Assess
    expect(match).toEqual({ allowedMethods: ['POST'] });
  });

  it('answers POST /v1/pdf/{id} with GET and DELETE', () => {
    // Act
    const match = matchRoute('POST', '/v1/pdf/pdf_x');

    // Assess
    expect(match).toEqual({ allowedMethods: ['GET', 'DELETE'] });
  });

  it('answers POST /health with GET', () => {
    // Act
    const match = matchRoute('POST', '/health');

    // Assess
    expect(match).toEqual({ allowedMethods: ['GET'] });
  });

  it('matches methods case-sensitively, as HTTP does', () => {
    // Act
    const match = matchRoute('get', '/health');

    // Assess
    expect(match).toEqual({ allowedMethods: ['GET'] });
  });

  it.each([
    '//',
    '/v1',
    '/v1/pdfs',
    '/v1/pdf/',
    '/v1/pdf/batch/extra',
    '/v1/pdf/pdf_x/',
    '/v1/files/',
    '/v2/pdf/generate',
    '/health/',
    '/v1/pdf/generate/',
    '/V1/PDF/GENERATE',
    '/v1/usagex',
    '/docs/',
    '/assets/',
    '/assets/a/b',
    '/v1/openapi.yaml',
  ])('gives the unknown path %s no allowed methods', (path) => {
    // Act
    const match = matchRoute('GET', path);

    // Assess
    expect(match).toEqual({ allowedMethods: [] });
  });

  it.each(['/v1/pdf/%E0%A4%A', '/v1/pdf/%', '/v1/files/%zz', '/v1/pdf/%C0%AF'])(
    'does not throw on the malformed percent-encoding %s and routes nowhere',
    (path) => {
      // Act
      const match = matchRoute('GET', path);

      // Assess
      expect(match).toEqual({ allowedMethods: [] });
    },
  );
});
