/**
 * The process's structured JSON logger (Powertools): one line per event, with the Lambda request
 * id attached by the handler middleware (`function_request_id`, from `injectLambdaContext`), and
 * the keys a request appends (`key_id`, `job_id`) for that request's lines only, also where several
 * run at once in one process (the local stack: lib/local/invocations.ts). Never log request bodies,
 * keys or credentials.
 */
import './inherited-concurrency.ts';
import { Logger } from '@aws-lambda-powertools/logger';

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'pdf-api';

export const logger = new Logger({ serviceName });

/**
 * A logger for work that belongs to no request (the local stack's own machinery): its lines carry
 * `component`. (`logger` outside a request: in AWS, the Lambda context of the last request its
 * environment served; in the local stack, none, see lib/local/invocations.ts.)
 */
export const componentLogger = (component: string) => new Logger({ serviceName, persistentKeys: { component } });

/** Longest error message (or cause) a log line carries: enough for any cause, not for a document. */
const MAX_ERROR_MESSAGE_CHARS = 300;

/** How an error reads in a log line (a type, not an interface: Powertools takes it as log attributes). */
export type ErrorFields = {
  readonly error: {
    readonly name: string;
    /** First line of the message only. */
    readonly message: string;
    /** `Name: first line of message` of `error.cause`, when there is one. */
    readonly cause?: string;
  };
};

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]!.trim();
  return line.length > MAX_ERROR_MESSAGE_CHARS ? `${line.slice(0, MAX_ERROR_MESSAGE_CHARS)}...` : line;
}

function describe(value: unknown): { name: string; message: string } {
  if (value instanceof Error) return { name: value.name, message: firstLine(value.message) };
  return { name: value === null ? 'null' : typeof value, message: firstLine(String(value)) };
}

/**
 * The fields every error (and warning) log line carries for its error: name and message, and the
 * cause's, under `error`. Use it as `logger.error('what failed', errorFields(error))`.
 *
 * Why a helper: Powertools reserves the key `message` (the line's own text) and silently drops
 * a `message` passed with the extra fields, so `{ message: error.message }` lost every cause; and
 * an Error passed as is gets its stack logged, whose file paths are kept out of logs by decision.
 * Only the first line of a message is kept (later lines are stack-like detail or quoted input).
 */
export function errorFields(error: unknown): ErrorFields {
  const { name, message } = describe(error);
  const cause = error instanceof Error && error.cause !== undefined ? describe(error.cause) : undefined;
  return { error: { name, message, ...(cause && { cause: `${cause.name}: ${cause.message}` }) } };
}
