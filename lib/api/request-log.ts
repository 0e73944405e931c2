/**
 * One structured log line per API request (`message: "request"`), written when its answer is known,
 * whatever it is (2xx, a refusal, a 5xx): request id, route, status, duration, and the key and the
 * PDFs, job or template it concerned, so a customer's support question ("request 3f2c… failed")
 * leads to its line, and CloudWatch Logs Insights can count errors by key or find the slowest routes
 * (docs/operating.md).
 *
 * `request_id` is API Gateway's request id, the one the client gets in `x-amzn-RequestId` (and in a
 * 5xx body); it is appended to the logger's keys at the start, so every line the request writes
 * carries it, each request its own also where several run in one process (lib/local/invocations.ts).
 * Never the body, the query string (a download link's signature) or headers (the key).
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { logger } from '#lib/observability/logger.ts';

/** The request id a client sees (`x-amzn-RequestId`): API Gateway's, or the invocation's where there is no gateway. */
export function requestIdOf(event: Pick<APIGatewayProxyEvent, 'requestContext'> | undefined, context: Pick<Context, 'awsRequestId'>): string {
  return event?.requestContext?.requestId ?? context.awsRequestId;
}

/** What a request concerned, by id: named in its path, or made by it (in its answer). */
export interface RequestSubjects {
  pdf_ids?: string[];
  job_id?: string;
  template_id?: string;
}

/** Largest answer read for the ids it made: every answer naming PDFs (100 batch results) is far smaller; a PDF or a page is not read. */
const MAX_ANSWER_READ_CHARS = 256 * 1024;

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The ids a request concerned: the path's (`{id}` of a PDF, `{job_id}`, `{template_id}`) and those
 * a successful JSON answer names at its top (a PDF's `id`, a batch's `results[].id`, `merged.id`, an
 * async or bulk `job_id`). A listing's records are not counted as the request's own.
 */
export function subjectsOf(event: Pick<APIGatewayProxyEvent, 'pathParameters' | 'resource'>, result: APIGatewayProxyResult | undefined): RequestSubjects {
  const pdfIds = new Set<string>();
  let jobId: string | undefined;
  const path = event.pathParameters ?? {};
  const pathId = stringOf(path.id);
  if (pathId && event.resource !== '/assets/{name}') pdfIds.add(pathId);
  jobId = stringOf(path.job_id);
  const templateId = stringOf(path.template_id);

  const contentType = String(Object.entries(result?.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '');
  if (result && result.statusCode < 300 && !result.isBase64Encoded && contentType.includes('json') && result.body.length <= MAX_ANSWER_READ_CHARS) {
    try {
      const answer = JSON.parse(result.body) as Record<string, unknown>;
      if (typeof answer === 'object' && answer !== null) {
        const id = stringOf(answer.id);
        if (id?.startsWith('pdf_')) pdfIds.add(id);
        const merged = stringOf((answer.merged as Record<string, unknown> | undefined)?.id);
        if (merged) pdfIds.add(merged);
        if (Array.isArray(answer.results)) {
          for (const item of answer.results) {
            const itemId = stringOf((item as Record<string, unknown> | null)?.id);
            if (itemId) pdfIds.add(itemId);
          }
        }
        jobId ??= stringOf(answer.job_id);
      }
    } catch {
      // Not JSON after all: nothing to name.
    }
  }
  return { ...(pdfIds.size > 0 && { pdf_ids: [...pdfIds] }), ...(jobId && { job_id: jobId }), ...(templateId && { template_id: templateId }) };
}

/**
 * Writes the request's line once its answer is final: use it right after the logger's context
 * middleware and before every other, so its `after`/`onError` run last but for that one's reset
 * (errors turned into answers, response headers added, `key_id` appended by authentication).
 */
export function requestLog(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context> {
  // By event, not in a variable of the middleware: one handler serves several requests at once locally.
  const startedAt = new WeakMap<APIGatewayProxyEvent, number>();
  const write = async (request: { event: APIGatewayProxyEvent; response: APIGatewayProxyResult | null | undefined }) => {
    const status = request.response?.statusCode;
    const fields = {
      status: status ?? 500,
      duration_ms: Math.round(performance.now() - (startedAt.get(request.event) ?? performance.now())),
      ...subjectsOf(request.event, request.response ?? undefined),
    };
    // A 5xx line is a warning: the cause is on the request's own error line (same request_id).
    if ((status ?? 500) >= 500) logger.warn('request', fields);
    else logger.info('request', fields);
  };
  return {
    before: async (request) => {
      startedAt.set(request.event, performance.now());
      logger.appendKeys({
        request_id: requestIdOf(request.event, request.context),
        route: `${request.event.httpMethod} ${request.event.resource}`,
      });
    },
    after: write,
    onError: write,
  };
}
