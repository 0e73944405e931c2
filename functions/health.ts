import { json } from '#lib/api/http.ts';
import { apiHandler } from '#lib/api/middlewares.ts';

/** GET /health: unauthenticated liveness answer. */
export const handler = apiHandler({ auth: false, body: false }, async () => json(200, { status: 'ok' }));
