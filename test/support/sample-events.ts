/**
 * The sample events in events/ (for `sam local invoke -e events/<name>.json`), and how a test
 * fills in what a user would paste in: their key, a real PDF id and its link's query.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

export const EVENTS_DIR = join(import.meta.dirname, '..', '..', 'events');
export const PLACEHOLDER_KEY = 'pdfk_REPLACE_WITH_YOUR_API_KEY';

export const readEvent = <T = APIGatewayProxyEvent>(name: string): T => JSON.parse(readFileSync(join(EVENTS_DIR, `${name}.json`), 'utf8')) as T;

export function withKey(event: APIGatewayProxyEvent, apiKey: string): APIGatewayProxyEvent {
  const authorization = `Bearer ${apiKey}`;
  return {
    ...event,
    headers: { ...event.headers, Authorization: authorization },
    multiValueHeaders: { ...event.multiValueHeaders, Authorization: [authorization] },
  };
}

export function withPdf(event: APIGatewayProxyEvent, pdfId: string, query?: Record<string, string>): APIGatewayProxyEvent {
  return {
    ...event,
    path: event.path.replace(/pdf_\w+$/, pdfId),
    pathParameters: { id: pdfId },
    ...(query && {
      queryStringParameters: query,
      multiValueQueryStringParameters: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])),
    }),
  };
}

/** The event with another JSON body. */
export const withBody = (event: APIGatewayProxyEvent, body: unknown): APIGatewayProxyEvent => ({ ...event, body: JSON.stringify(body) });

export const bodyOf = (result: APIGatewayProxyResult) => (result.body ? JSON.parse(result.body) : null);
