/**
 * API Gateway in front of the Lambda emulation: the local gateway (lib/local/gateway.ts, the routes
 * table's REST API proxy events) with each route's function invoked in the emulation instead of in
 * this process, so a client talks HTTP to the functions of cdk.out as it would to the deployed API.
 * Every request is a synchronous invoke, counted against the account's concurrency like any other;
 * one Lambda throttles is answered as API Gateway's INTEGRATION_FAILURE gateway response answers it
 * (503 service_busy with Retry-After), and a function that fails unhandled as API Gateway's 502.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { API_FUNCTIONS, type FunctionName } from '#lib/api/routes.ts';
import { createGateway, type ProxyHandler } from '#lib/local/gateway.ts';
import { FunctionThrottledError } from '#lib/local/lambda-concurrency.ts';
import { functionId } from '../../../cdk/constructs/service-function.ts';
import type { LambdaEmulator } from './emulator.ts';

export interface EmulatedApi {
  /** The API's base URL (download links point here too). */
  readonly apiUrl: string;
  /** Each request whose function failed (answered 502), with what it printed: what a failing test shows. */
  readonly failures: readonly string[];
  close(): Promise<void>;
}

/** The headers API Gateway adds to every proxy event; the functions build their links from them. */
const forwarded = (event: APIGatewayProxyEvent): APIGatewayProxyEvent => ({
  ...event,
  headers: { ...event.headers, 'X-Forwarded-Proto': 'http' },
  multiValueHeaders: { ...event.multiValueHeaders, 'X-Forwarded-Proto': ['http'] },
});

export async function startEmulatedApi(emulator: LambdaEmulator): Promise<EmulatedApi> {
  const failures: string[] = [];
  const handlers = Object.fromEntries(
    API_FUNCTIONS.map((name): [FunctionName, ProxyHandler] => [
      name,
      async (event) => {
        // A throttled invoke throws TooManyRequestsException, which the gateway answers 503.
        let outcome;
        try {
          ({ outcome } = await emulator.invokeByName(functionId(name), forwarded(event)));
        } catch (error) {
          if (!(error instanceof FunctionThrottledError)) failures.push(`${event.httpMethod} ${event.path}: ${name} could not start: ${(error as Error).message.slice(0, 4000)}`);
          throw error;
        }
        if (!outcome.ok) {
          failures.push(`${event.httpMethod} ${event.path}: ${emulator.describeFailure(functionId(name), outcome)}`);
          throw new Error(`${name} failed: ${outcome.errorType}: ${outcome.errorMessage}`);
        }
        return outcome.payload as APIGatewayProxyResult;
      },
    ]),
  ) as Record<FunctionName, ProxyHandler>;
  // The gateway's own timeout is not used: each function runs with its template's.
  const server: Server = createGateway(handlers, { timeoutMs: 29_000 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failures,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
