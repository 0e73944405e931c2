import { ApiError, notFound } from '#lib/api/errors.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { matchRoute } from '#lib/api/routes.ts';

/** Any request no route takes: 405 when the path exists with other methods, 404 otherwise. */
export const handler = apiHandler({ body: false }, async ({ event }) => {
  const match = matchRoute(event.httpMethod, event.path);
  if ('allowedMethods' in match && match.allowedMethods.length > 0) {
    throw new ApiError('method_not_allowed', `${event.httpMethod} is not allowed here; use ${match.allowedMethods.join(', ')}.`, {
      headers: { Allow: match.allowedMethods.join(', ') },
    });
  }
  throw notFound(`No route for ${event.httpMethod} ${event.path}.`);
});
