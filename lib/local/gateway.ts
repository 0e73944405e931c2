/**
 * An API-Gateway-compatible HTTP adapter: it turns each HTTP request into the REST API (v1) proxy
 * event Lambda receives, calls the same handler a Lambda function runs, and writes back the
 * handler's proxy result. Routes come from the shared routes table.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { FALLBACK_HANDLER, matchRoute, type FunctionName } from '#lib/api/routes.ts';

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

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toProxyEvent(request: IncomingMessage, body: Buffer, url: URL): { event: APIGatewayProxyEvent; handler: FunctionName } {
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
  const now = Date.now();
  const requestId = randomUUID();
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
    body: body.length ? body.toString('utf8') : null,
    isBase64Encoded: false,
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

function writeResult(response: ServerResponse, result: APIGatewayProxyResult): void {
  response.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) response.setHeader(name, values.map(String));
  response.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

function writeGatewayError(response: ServerResponse, status: number, code: string, message: string): void {
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ error: { code, message } }));
}

export function createGateway(handlers: Readonly<Record<FunctionName, ProxyHandler>>, options: { timeoutMs: number }): Server {
  return createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://local');
      const body = await readBody(request, GATEWAY_MAX_PAYLOAD_BYTES);
      if (!body) {
        writeGatewayError(response, 413, 'payload_too_large', 'The request body is larger than the gateway allows.');
        request.resume();
        return;
      }
      const { event, handler } = toProxyEvent(request, body, url);
      const result = await handlers[handler](event, lambdaContext(handler, options.timeoutMs));
      writeResult(response, result);
    } catch {
      // What API Gateway answers when the function itself fails (a crash, not an error response),
      // in the 5xx shape of decisions.md (cdk/constructs/rest-api.ts rewrites the real one the same way).
      if (!response.headersSent) writeGatewayError(response, 502, 'render_failed', 'The request could not be completed because of an internal error.');
      else response.destroy();
    }
  });
}
