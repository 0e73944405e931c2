/**
 * The process's structured JSON logger (Powertools): one line per event, with the Lambda request
 * id attached by the handler middleware. Never log request bodies, keys or credentials.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'pdf-api' });
