/**
 * An API-Gateway-compatible HTTP adapter: it turns each HTTP request into the REST API (v1) proxy
 * event Lambda receives, calls the same handler a Lambda function runs, and writes back the
 * handler's proxy result. Routes come from the shared routes table.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { BINARY_MEDIA_TYPES, FALLBACK_HANDLER, matchRoute, type FunctionName } from '#lib/api/routes.ts';
import { ServiceBusyError, whileCallerWaits } from '#lib/render/capacity.ts';
import { THROTTLED_FUNCTION } from '#lib/api/errors.ts';
import { runInvocation } from './invocations.ts';
import { FunctionThrottledError, type LambdaConcurrency } from './lambda-concurrency.ts';

/** API Gateway refuses larger payloads before any function runs. */
export const GATEWAY_MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
export const LOCAL_STAGE = 'local';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A Lambda context as the runtime would pass it, for functions run in this process. */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  const fail = () => {
    throw new Error('callback-style completion is not supported');
  };
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '2048',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: fail,
    fail,
    succeed: fail,
  };
}

/**
 * The request body, or undefined as soon as it is known to be over `limit`: from its declared
 * Content-Length before a byte is read, or at the byte that crosses the limit. Nothing past the
 * limit is read (or buffered).
 */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  if (Number(request.headers['content-length'] ?? 0) > limit) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Stop reading, but keep the socket: the 413 still has to be written on it.
      request.off('data', onData).pause();
      resolve(undefined);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/** How long the rest of an oversized body is let in (and dropped) after the 413, before the connection is cut. */
const OVERSIZED_BODY_LINGER_MS = 5_000;

/**
 * Answers 413 at once and closes the connection. As web servers do ("lingering close"), what the
 * client is still sending is dropped unread for a moment first: a client busy sending sees the 413
 * instead of a reset connection. Nothing of it is kept, and the connection is cut after that moment.
 */
function refuseOversizedBody(request: IncomingMessage, response: ServerResponse): void {
  writeGatewayError(response, randomUUID(), 413, 'payload_too_large', `The request body is larger than the gateway's limit of ${GATEWAY_MAX_PAYLOAD_BYTES} bytes.`);
  request.resume();
  setTimeout(() => request.socket.destroy(), OVERSIZED_BODY_LINGER_MS).unref();
}

/** Whether API Gateway would take a body of this Content-Type as binary (lib/api/routes.ts BINARY_MEDIA_TYPES). */
function isBinaryMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return BINARY_MEDIA_TYPES.some((pattern) => {
    if (pattern === '*/*') return true;
    const [main, sub] = pattern.toLowerCase().split('/');
    const [typeMain, typeSub] = type.split('/');
    return (main === '*' || main === typeMain) && (sub === '*' || sub === typeSub);
  });
}

function toProxyEvent(request: IncomingMessage, body: Buffer, url: URL, requestId: string): { event: APIGatewayProxyEvent; handler: FunctionName } {
  const method = request.method ?? 'GET';
  const match = matchRoute(method, url.pathname);
  const isRoute = 'route' in match;
  const resource = isRoute ? match.route.path : '/{proxy+}';
  const pathParameters = isRoute ? match.pathParameters : { proxy: url.pathname.slice(1) };

  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] as string;
    const value = request.rawHeaders[i + 1] as string;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = {};
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiValueQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  const binaryBody = isBinaryMediaType(request.headers['content-type']);
  const now = Date.now();
  const event: APIGatewayProxyEvent = {
    resource,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    // As API Gateway passes a body whose Content-Type is a binary media type: base64-encoded.
    body: body.length ? (binaryBody ? body.toString('base64') : body.toString('utf8')) : null,
    isBase64Encoded: body.length > 0 && binaryBody,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: `/${LOCAL_STAGE}${url.pathname}`,
      stage: LOCAL_STAGE,
      requestId,
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: resource,
      domainName: request.headers.host ?? '127.0.0.1',
    },
  };
  return { event, handler: isRoute ? match.route.handler : FALLBACK_HANDLER };
}

/**
 * API Gateway's request id header, on every answer (the function's and the gateway's own), as the
 * real one sends it: what a customer quotes to support, and what every log line of the request
 * carries as `request_id` (lib/api/request-log.ts).
 */
export const REQUEST_ID_HEADER = 'x-amzn-RequestId';

function writeResult(response: ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  response.statusCode = result.statusCode;
  response.setHeader(REQUEST_ID_HEADER, requestId);
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) response.setHeader(name, values.map(String));
  response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

function writeGatewayError(
  response: ServerResponse,
  requestId: string,
  status: number,
  code: string,
  message: string,
  extra: { headers?: Record<string, string>; fields?: object } = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', [REQUEST_ID_HEADER]: requestId, ...extra.headers });
  response.end(JSON.stringify({ error: { code, message, ...extra.fields } }));
}

/** A throttled function, as API Gateway's INTEGRATION_FAILURE gateway response answers it (cdk/constructs/rest-api.ts). */
function writeThrottled(response: ServerResponse, requestId: string): void {
  writeGatewayError(response, requestId, 503, 'service_busy', THROTTLED_FUNCTION.message, {
    headers: { 'Retry-After': String(THROTTLED_FUNCTION.retryAfterSeconds) },
    fields: { retry_after: THROTTLED_FUNCTION.retryAfterSeconds, request_id: requestId },
  });
}

export function createGateway(
  handlers: Readonly<Record<FunctionName, ProxyHandler>>,
  options: { timeoutMs: number; concurrency?: LambdaConcurrency },
): Server {
  const server = createServer(async (request, response) => {
    const requestId = randomUUID();
    try {
      const url = new URL(request.url ?? '/', 'http://local');
      const body = await readBody(request, GATEWAY_MAX_PAYLOAD_BYTES);
      if (!body) {
        refuseOversizedBody(request, response);
        return;
      }
      const { event, handler } = toProxyEvent(request, body, url, requestId);
      // Each request is an invocation of its function: past the account's (or the function's)
      // concurrency, Lambda throttles it and the gateway says so, before the function runs.
      const started = options.concurrency?.tryStart(handler) ?? { release: () => undefined };
      if ('throttled' in started) return writeThrottled(response, event.requestContext.requestId);
      using _invocation = { [Symbol.dispose]: started.release };
      // A document still waiting for its turn when its caller leaves is dropped (lib/render/capacity.ts).
      const callerLeft = new AbortController();
      response.once('close', () => {
        if (!response.writableFinished) callerLeft.abort(new ServiceBusyError('The caller left before its document was rendered.', 1));
      });
      let result: APIGatewayProxyResult;
      try {
        result = await whileCallerWaits(callerLeft.signal, () => {
          const context = lambdaContext(handler, options.timeoutMs);
          return runInvocation(context, () => handlers[handler](event, context));
        });
      } catch (error) {
        // Lambda behind the handler (the emulation's) refused to run the function: the same answer.
        if (error instanceof FunctionThrottledError) return writeThrottled(response, event.requestContext.requestId);
        throw error;
      }
      writeResult(response, result, requestId);
    } catch {
      // What API Gateway answers when the function itself fails (a crash, not an error response),
      // in the 5xx shape of decisions.md (cdk/constructs/rest-api.ts rewrites the real one the same way).
      if (!response.headersSent) writeGatewayError(response, requestId, 502, 'render_failed', 'The request could not be completed because of an internal error.');
      else response.destroy();
    }
  });
  // A client that asks before sending a large body (curl does, with Expect: 100-continue) is told
  // 413 before it sends any of an oversized one.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (Number(request.headers['content-length'] ?? 0) > GATEWAY_MAX_PAYLOAD_BYTES) return refuseOversizedBody(request, response);
    response.writeContinue();
    server.emit('request', request, response);
  });
  return server;
}
