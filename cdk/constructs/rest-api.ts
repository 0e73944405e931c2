/**
 * The REST API, built from the routes table the local adapter also reads (lib/api/routes.ts).
 *
 * Every route is a method on its resource, integrated (Lambda proxy) with its function. Whatever
 * no route takes reaches the fallback function, which answers 404 or 405 in the API's error shape:
 * an `ANY` method on every resource of the tree (an explicit method wins over `ANY`), plus a
 * greedy `/{proxy+}` for paths outside the tree. API Gateway's own answers (throttling, bodies over
 * its 10 MB limit, timeouts) are rewritten into the same `{ "error": { code, message } }` shape.
 */
import { Validations, type RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BINARY_MEDIA_TYPES, FALLBACK_HANDLER, ROUTES, type FunctionName } from '#lib/api/routes.ts';
import { THROTTLED_FUNCTION } from '#lib/api/errors.ts';

export const STAGE_NAME = 'prod';

/** Every resource path the routes need, parents included, root first: `/`, `/v1`, `/v1/pdf`, ... */
export function resourcePaths(routes = ROUTES): string[] {
  const paths = new Set<string>(['/']);
  for (const { path } of routes) {
    const segments = path.split('/').filter(Boolean);
    segments.forEach((_, i) => paths.add(`/${segments.slice(0, i + 1).join('/')}`));
  }
  return [...paths].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
}

interface GatewayAnswer {
  readonly type: ResponseType;
  /** Overrides API Gateway's status; the default responses keep theirs. */
  readonly status?: string;
  readonly code: string;
  /** A fixed message, or `$context.error.messageString` (already a JSON string) for API Gateway's own. */
  readonly message: string;
  readonly headers?: Record<string, string>;
  /** Sent as `Retry-After` and as the body's `retry_after`, as the functions' own 503s carry them (lib/api/errors.ts). */
  readonly retryAfterSeconds?: number;
}

/** API Gateway's own refusals, answered in the API's error shape (decisions.md). */
export const GATEWAY_ANSWERS: readonly GatewayAnswer[] = [
  // Only a path no resource matches gets here: the API has no IAM authorization.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, status: '404', code: 'not_found', message: 'No route matches this path.' },
  {
    type: ResponseType.THROTTLED,
    status: '429',
    code: 'rate_limit_exceeded',
    message: 'The API is receiving more requests than it accepts. Retry in a second.',
    headers: { 'Retry-After': "'1'" },
  },
  { type: ResponseType.REQUEST_TOO_LARGE, status: '413', code: 'payload_too_large', message: 'The request body is larger than the gateway allows.' },
  { type: ResponseType.INTEGRATION_TIMEOUT, status: '504', code: 'render_timeout', message: 'The request took longer than the API allows.' },
  // The Lambda API refused to run the function: above all a throttle (429 TooManyRequestsException,
  // the account's or the function's concurrency used up), which API Gateway would otherwise answer as
  // a 500 through DEFAULT_5XX. What the documentation says: Lambda's "Handling Lambda errors with an
  // API Gateway API" has a rejected invoke answered 500 and a function that ran and failed (or
  // answered malformed) 502, without naming the gateway response type; the type table only calls
  // INTEGRATION_FAILURE "an integration failed error" (default 504); that a Lambda 429 is answered
  // through INTEGRATION_FAILURE comes from API Gateway's team on the AWS forums (thread 309901, quoted
  // on Stack Overflow 36363280), with the warning that every other integration failure shares it.
  // A gateway response's template is not VTL (no conditions), so one answer serves them all: other
  // refused invokes (the function not ready, Lambda's own 5xx) are worth a retry as well. Whether a
  // function that ran and failed shares the type is not documented; our functions answer their own
  // errors (lib/api/middlewares.ts), so that would be a crash, running out of memory or the 28 s
  // timeout, where a retry is still the advice and a reservation left behind is repaired (reconcile).
  {
    type: ResponseType.INTEGRATION_FAILURE,
    status: '503',
    code: 'service_busy',
    message: THROTTLED_FUNCTION.message,
    retryAfterSeconds: THROTTLED_FUNCTION.retryAfterSeconds,
  },
  { type: ResponseType.DEFAULT_5XX, code: 'render_failed', message: 'The request could not be completed because of an internal error.' },
  { type: ResponseType.DEFAULT_4XX, code: 'invalid_request', message: '$context.error.messageString' },
];

/** The mapping template of one gateway answer; 5xx answers name the request id, as the functions' do. */
export function gatewayAnswerTemplate(answer: GatewayAnswer): string {
  const message = answer.message.startsWith('$context.') ? answer.message : JSON.stringify(answer.message);
  const serverError = answer.type === ResponseType.DEFAULT_5XX || (answer.status ?? '').startsWith('5');
  const requestId = serverError ? ',"request_id":"$context.requestId"' : '';
  const retryAfter = answer.retryAfterSeconds === undefined ? '' : `,"retry_after":${answer.retryAfterSeconds}`;
  return `{"error":{"code":${JSON.stringify(answer.code)},"message":${message}${retryAfter}${requestId}}}`;
}

export interface PdfRestApiProps {
  readonly handlers: Readonly<Record<FunctionName, IFunction>>;
  readonly tracing: boolean;
  /** Stage-wide throttling: a backstop above the per-key limits, against floods and runaway cost. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class PdfRestApi extends Construct {
  readonly api: RestApi;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: PdfRestApiProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });

    this.api = new RestApi(this, 'Api', {
      description: 'PDF API: HTML to PDF (routes from lib/api/routes.ts)',
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // Binary answers (a template preview's PDF), as the local gateway treats them too.
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      // Access and execution logs need API Gateway's account-level CloudWatch role (one per region).
      cloudWatchRole: true,
      deployOptions: {
        stageName: STAGE_NAME,
        // One JSON line per request. Paths carry PDF ids only: the query string (a download link's
        // signature) and headers (the API key) are never logged.
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            extendedRequestId: AccessLogField.contextExtendedRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            ip: AccessLogField.contextIdentitySourceIp(),
            userAgent: AccessLogField.contextIdentityUserAgent(),
            httpMethod: AccessLogField.contextHttpMethod(),
            resourcePath: AccessLogField.contextResourcePath(),
            path: AccessLogField.contextPath(),
            protocol: AccessLogField.contextProtocol(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationStatus: AccessLogField.contextIntegrationStatus(),
            errorMessage: AccessLogField.contextErrorMessage(),
            xrayTraceId: AccessLogField.contextXrayTraceId(),
          }),
        ),
        // Execution logs for errors only; never request or response bodies (HTML, keys, PDFs' links).
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: props.tracing,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
      },
    });
    // The stack has its own ApiUrl output.
    this.api.node.tryRemoveChild('Endpoint');

    const integrations = new Map<FunctionName, LambdaIntegration>();
    const integration = (name: FunctionName) => {
      let existing = integrations.get(name);
      if (!existing) {
        // The console's "test" button needs a second permission per method; nobody needs it here.
        existing = new LambdaIntegration(props.handlers[name], { allowTestInvoke: false });
        integrations.set(name, existing);
      }
      return existing;
    };

    const resource = (path: string): IResource => (path === '/' ? this.api.root : this.api.root.resourceForPath(path));
    for (const route of ROUTES) resource(route.path).addMethod(route.method, integration(route.handler));
    for (const path of resourcePaths()) resource(path).addMethod('ANY', integration(FALLBACK_HANDLER));
    this.api.root.addResource('{proxy+}').addMethod('ANY', integration(FALLBACK_HANDLER));

    for (const answer of GATEWAY_ANSWERS) {
      this.api.addGatewayResponse(`Response${answer.type.responseType}`, {
        type: answer.type,
        statusCode: answer.status,
        responseHeaders: {
          'Cache-Control': "'no-store'",
          ...answer.headers,
          ...(answer.retryAfterSeconds !== undefined && { 'Retry-After': `'${answer.retryAfterSeconds}'` }),
        },
        templates: { 'application/json': gatewayAnswerTemplate(answer) },
      });
    }

    for (const acknowledgement of [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated by the functions, against the same rules locally and in AWS, and refused in the ' +
          "API's documented error shape; API Gateway validation would answer in its own shape.",
      },
      {
        id: 'AwsSolutions-APIG4',
        reason: 'The API authenticates callers itself: a Bearer API key, hashed and checked in DynamoDB by every authenticated function. /health and the HMAC-signed download links are public by design.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Callers are machines holding API keys issued by the key tool, not Cognito users; see AwsSolutions-APIG4.',
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-level CloudWatch role (needed for access and execution logs) uses the policy AWS " +
          'documents and maintains for exactly that role: writing API Gateway logs, nothing else.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'No WAF by default (a web ACL costs a fixed monthly fee): per-key rate limits and monthly quotas, stage ' +
          'throttling and the egress guard cover abuse. Associate a web ACL with the stage where a deployment needs one.',
      },
    ]) {
      Validations.of(this.api).acknowledge(acknowledgement);
    }
  }
}
