/**
 * The middy middlewares every API function is built from, and `apiHandler`, which composes them in
 * the one documented order: errors -> authentication (401) -> body (413, 400) -> the handler.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { findActiveKey, type ApiKey } from '#lib/accounts/keys.ts';
import { keyStore } from '#lib/aws/stores.ts';
import { DocumentError } from '#lib/documents/errors.ts';
import { logger } from '#lib/observability/logger.ts';
import { settings } from '#lib/settings.ts';
import { ApiError, errorBody, invalidRequest, unauthorized } from './errors.ts';
import { header, json } from './http.ts';

type Event = APIGatewayProxyEvent;
type Result = APIGatewayProxyResult;

/** How a document failure reads on the single-document endpoints. */
export function documentErrorToApiError(error: DocumentError): ApiError {
  switch (error.code) {
    case 'INVALID_HTML':
    case 'INVALID_OPTIONS':
    case 'URL_NOT_ALLOWED':
    case 'URL_UNREACHABLE':
      return invalidRequest(error.message);
    case 'RENDER_TIMEOUT':
      return new ApiError(504, 'render_timeout', `Rendering took longer than the limit of ${settings.renderTimeoutMs} ms.`);
    case 'RENDER_FAILED':
      return new ApiError(500, 'render_failed', 'The PDF could not be rendered. Nothing was charged; please retry.');
  }
}

/**
 * Turns any error into the documented error shape. Unexpected errors are logged with their stack
 * and answered with a plain 500 that names only the request id: no stack, path or internal message.
 */
export function errorResponder(): MiddlewareObj<Event, Result, Error, Context> {
  return {
    onError: async (request) => {
      const { error } = request;
      let apiError: ApiError;
      if (error instanceof ApiError) apiError = error;
      else if (error instanceof DocumentError) apiError = documentErrorToApiError(error);
      else apiError = new ApiError(500, 'render_failed', 'The request could not be completed because of an internal error.');

      if (apiError.status >= 500) {
        logger.error('request failed', { code: apiError.code, error: error as Error });
        apiError.extra.request_id = request.context.awsRequestId;
      }
      request.response = json(apiError.status, errorBody(apiError), apiError.headers);
    },
  };
}

export interface AuthenticatedContext extends Context {
  apiKey: ApiKey;
}

/** Refuses the request with 401 unless it carries an active API key; attaches the key otherwise. */
export function authenticate(): MiddlewareObj<Event, Result, Error, AuthenticatedContext> {
  return {
    before: async (request) => {
      const key = await findActiveKey(keyStore(), header(request.event, 'authorization'));
      if (!key) throw unauthorized();
      request.context.apiKey = key;
      logger.appendKeys({ key_id: key.keyId });
    },
  };
}

export interface BodyContext extends Context {
  body: Record<string, unknown>;
}

/** Parses a JSON object body, enforcing the body size limit (413) before reading it. */
export function jsonObjectBody(): MiddlewareObj<Event, Result, Error, BodyContext> {
  return {
    before: async (request) => {
      const raw = request.event.body ?? '';
      const text = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      const limit = settings.maxBodyBytes;
      if (Buffer.byteLength(text, 'utf8') > limit) {
        throw new ApiError(413, 'payload_too_large', `The request body is larger than the limit of ${limit} bytes.`);
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
      request.context.body = parsed as Record<string, unknown>;
    },
  };
}

export interface HandlerInput {
  readonly event: Event;
  readonly context: Context;
}

type Options = { auth: boolean; body: boolean };
type InputFor<O extends Options> = HandlerInput &
  (O['auth'] extends true ? { apiKey: ApiKey } : unknown) &
  (O['body'] extends true ? { body: Record<string, unknown> } : unknown);

/** An API Gateway handler wrapped in the standard middleware chain. */
export function apiHandler<O extends Options>(options: O, handle: (input: InputFor<O>) => Promise<Result>) {
  const chain = middy<Event, Result, Error, Context>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(errorResponder());
  if (options.auth) chain.use(authenticate() as MiddlewareObj<Event, Result, Error, Context>);
  if (options.body) chain.use(jsonObjectBody() as MiddlewareObj<Event, Result, Error, Context>);
  return chain.handler((event, context) => {
    const extended = context as Partial<AuthenticatedContext & BodyContext>;
    return handle({ event, context, apiKey: extended.apiKey, body: extended.body } as InputFor<O>);
  });
}
