/**
 * A refusal a local stand-in answers the way AWS's JSON protocols do (`{ __type, message }` with an
 * HTTP status): the KMS and SQS stand-ins throw it, and each answers it in its service's dialect.
 */
export class AwsJsonError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: string, message: string, status = 400) {
    super(message);
    this.type = type;
    this.status = status;
  }
}
