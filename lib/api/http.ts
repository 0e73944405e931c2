/**
 * Building API Gateway proxy responses and reading what the service needs from proxy events.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { settings } from '#lib/settings.ts';

export function json(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

/** A header's value, whatever its case (API Gateway passes headers as the client sent them). */
export function header(event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

/**
 * Every value a header was sent with, whatever its case: a header sent twice is two values. API
 * Gateway (REST, and the local gateway) keeps only the last in `headers` and all of them in
 * `multiValueHeaders`; an event with only `headers` (a hand-made test event) gives what it has.
 */
export function headerValues(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  const multi = event.multiValueHeaders ?? {};
  if (Object.keys(multi).length > 0) {
    for (const [key, list] of Object.entries(multi)) if (key.toLowerCase() === wanted) values.push(...(list ?? []));
    return values;
  }
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === wanted && value !== undefined) values.push(value);
  return values;
}

/**
 * The base URL callers reach this API at, for links in responses: PUBLIC_BASE_URL when set (custom
 * domains), else the execute-api host and stage the request came through.
 */
export function publicBaseUrl(event: APIGatewayProxyEvent): string {
  if (settings.publicBaseUrl) return settings.publicBaseUrl.replace(/\/+$/, '');
  const host = event.requestContext.domainName ?? header(event, 'host') ?? 'localhost';
  const proto = header(event, 'x-forwarded-proto') ?? 'https';
  const stage = host.includes('.execute-api.') ? `/${event.requestContext.stage}` : '';
  return `${proto}://${host}${stage}`;
}
