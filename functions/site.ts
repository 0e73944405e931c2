import { json, publicBaseUrl } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { openApiDocument } from '#lib/api/openapi.ts';
import { sitePage } from '#lib/site/pages.ts';

/**
 * The developer surface, public and keyless: `GET /v1/openapi.json` (the contract, generated from
 * the schemas that validate requests), `GET /docs`, `GET /` (the playground) and their assets.
 */
export const handler = apiHandler({ body: false }, async ({ event }) => {
  if (event.resource === '/v1/openapi.json') {
    return json(200, openApiDocument({ serverUrl: publicBaseUrl(event) }), { 'Cache-Control': 'public, max-age=300' });
  }
  return sitePage(event);
});
