/**
 * The middy middlewares every API function is built from, and `apiHandler`, which composes them in
 * the one documented order: authentication (401) -> rate limit (429) -> body and validation
 * (413, 400) -> Idempotency-Key (a replay answers here; 409, 422) -> quota (402, reserved in the
 * handler once the request is known to be valid).
 * A request refused for its body still counts against the rate limit: it was admitted and served.
 *
 * Authentication (lib/api/authentication.ts) and Idempotency-Key (lib/api/idempotency.ts) are
 * passed in by the functions that use them rather than imported here, so a function that does
 * neither carries neither in its bundle, nor the AWS calls they make (test/cdk/sdk-commands.test.ts).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApiKey } from '#lib/accounts/keys.ts';
import { QuotaExceededError } from '#lib/accounts/quota.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { flushMetrics, recordDocumentFailure } from '#lib/observability/metrics.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#lib/json-depth.ts';
import { settings } from '#lib/settings.ts';
import { ServiceBusyError } from '#lib/render/capacity.ts';
import { documentErrorToApiError } from './document-errors.ts';
import { ApiError, errorBody, invalidRequest, serviceBusy } from './errors.ts';
import { json } from './http.ts';
import { requestIdOf, requestLog } from './request-log.ts';

export type Event = APIGatewayProxyEvent;
export type Result = APIGatewayProxyResult;

/**
 * Turns any error into the documented error shape. Unexpected errors are logged (name and message)
 * and answered with a plain 500 that names only the request id: no stack, path or internal message.
 */
export function errorResponder(): MiddlewareObj<Event, Result, Error, Context> {
  return {
    onError: async (request) => {
      const { error } = request;
      let apiError: ApiError;
      if (error instanceof ApiError) apiError = error;
      else if (error instanceof DocumentError) {
        recordDocumentFailure(error.code);
        apiError = documentErrorToApiError(error);
      }
      else if (error instanceof QuotaExceededError) apiError = quotaExceeded(error);
      else if (error instanceof ServiceBusyError) apiError = serviceBusy(error.retryAfterSeconds, `${error.message} Nothing was charged.`);
      else apiError = new ApiError('render_failed', 'The request could not be completed because of an internal error.');

      if (apiError.status >= 500) {
        // Name and message (and the cause's) only: stacks carry file paths, which stay out of logs.
        if (apiError.code === 'render_timeout') logger.warn('render timed out', { code: apiError.code, ...errorFields(error) });
        // Load, not a fault: the caller is told when to come back.
        else if (apiError.code === 'service_busy') logger.info('service busy', { code: apiError.code, retry_after: apiError.extra.retry_after });
        else logger.error('request failed', { code: apiError.code, ...errorFields(error) });
        // The id the client also gets in x-amzn-RequestId, which every line of the request carries.
        apiError.extra.request_id = requestIdOf(request.event, request.context);
      }
      request.response = json(apiError.status, errorBody(apiError), apiError.headers);
    },
  };
}

function quotaExceeded(error: QuotaExceededError): ApiError {
  const needs = error.remaining > 0 ? ` Only ${error.remaining} PDFs remain this month.` : '';
  return new ApiError('quota_exceeded', `Monthly quota exceeded.${needs} It resets at ${error.resetAt.toISOString()}.`, {
    extra: { quota_reset_at: error.resetAt.toISOString(), quota_remaining: error.remaining },
  });
}

/** Headers that middlewares want on the response, whether the request succeeds or fails. */
export interface HeadersContext extends Context {
  responseHeaders?: Record<string, string>;
}

/** Adds `context.responseHeaders` to whatever response the chain produced, error responses included. */
export function responseHeaders(): MiddlewareObj<Event, Result, Error, HeadersContext> {
  const apply = async (request: { context: HeadersContext; response: Result | null | undefined }) => {
    if (request.response && request.context.responseHeaders) {
      request.response.headers = { ...request.response.headers, ...request.context.responseHeaders };
    }
  };
  return { after: apply, onError: apply };
}

export interface AuthenticatedContext extends Context {
  apiKey: ApiKey;
}

/** How a route authenticates its caller: the middlewares that attach `apiKey` or refuse the request. */
export interface Authentication {
  readonly middlewares: () => MiddlewareObj<Event, Result, Error, Context>[];
}

/**
 * The ids a request sent with an `Idempotency-Key` gives what it makes: its PDFs (`document`,
 * `item-<n>`, `merged`) and its job (`async: true`), the same on every run of the same request, so a
 * run after one that died finds what it stored (lib/api/earlier-runs.ts).
 */
export interface RequestIds {
  pdfId(label: string): string;
  jobId(): string;
}

/**
 * How a route honours `Idempotency-Key`: runs the request, or answers the first response again.
 * `respond` gets, with a key, what reads (once, on first use) the request's RequestIds.
 */
export type Idempotency = (
  scope: { apiKey: ApiKey; event: Event; body: Record<string, unknown> | undefined; context: Context },
  respond: (requestIds?: () => Promise<RequestIds>) => Promise<Result>,
) => Promise<Result>;

export interface BodyContext extends Context {
  body: Record<string, unknown>;
}

/**
 * The request's JSON object body, the body size limit (413) enforced before reading it; for a
 * function whose routes do not all take a body (the jsonObjectBody middleware is for those that do).
 */
export function readJsonObjectBody(event: Pick<Event, 'body' | 'isBase64Encoded'>): Record<string, unknown> {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  const limit = settings.maxBodyBytes;
  if (Buffer.byteLength(text, 'utf8') > limit) {
    throw new ApiError('payload_too_large', `The request body is larger than the limit of ${limit} bytes.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidRequest('The request body must be a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
    throw invalidRequest(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return parsed as Record<string, unknown>;
}

/** Parses a JSON object body, enforcing the body size limit (413) before reading it. */
export function jsonObjectBody(): MiddlewareObj<Event, Result, Error, BodyContext> {
  return {
    before: async (request) => {
      request.context.body = readJsonObjectBody(request.event);
    },
  };
}

export interface HandlerInput {
  readonly event: Event;
  readonly context: Context;
}

/** `auth`: how the caller is authenticated (none when absent); `idempotent`: the route honours `Idempotency-Key` (it needs `auth`). */
type Options = { auth?: Authentication; body: boolean; idempotent?: Idempotency };
type InputFor<O extends Options> = HandlerInput &
  (O['auth'] extends Authentication ? { apiKey: ApiKey } : unknown) &
  (O['body'] extends true ? { body: Record<string, unknown> } : unknown) &
  (O['idempotent'] extends Idempotency ? { requestIds?: () => Promise<RequestIds> } : unknown);

/** An API Gateway handler wrapped in the standard middleware chain. */
export function apiHandler<O extends Options>(options: O, handle: (input: InputFor<O>) => Promise<Result>) {
  const chain = middy<Event, Result, Error, Context>()
    // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: it holds the API key and the body,
    // whose url options may carry credentials (http_headers, cookies, basic_auth).
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(requestLog())
    .use(flushMetrics())
    .use(responseHeaders())
    .use(errorResponder());
  for (const middleware of options.auth?.middlewares() ?? []) chain.use(middleware);
  if (options.body) chain.use(jsonObjectBody() as MiddlewareObj<Event, Result, Error, Context>);
  return chain.handler((event, context) => {
    const extended = context as Partial<AuthenticatedContext & BodyContext>;
    const run = (requestIds?: () => Promise<RequestIds>) =>
      handle({ event, context, apiKey: extended.apiKey, body: extended.body, ...(requestIds && { requestIds }) } as InputFor<O>);
    if (!options.idempotent || !extended.apiKey) return run();
    return options.idempotent({ apiKey: extended.apiKey, event, body: extended.body, context }, run);
  });
}
