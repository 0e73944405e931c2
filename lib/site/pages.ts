/**
 * The developer surface's pages and assets: the API reference (`GET /docs`), the playground
 * (`GET /`) and the files they load (`GET /assets/{name}`).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { notFound } from '#lib/api/errors.ts';

/** The page or asset a request to the site function asks for. */
export async function sitePage(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  throw notFound(`No page at ${event.path}.`);
}
