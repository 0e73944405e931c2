/**
 * What a running local stack tells the tools that reach it (the key tool, tests, the bench): where
 * it wrote its address book and the environment that points the AWS SDK at its stand-ins. Apart
 * from stack.ts so that a tool reads them without loading the whole stack (the key tool starts in a
 * fraction of the time).
 */
import { join } from 'node:path';

/** s3rver's built-in account; dynalite accepts any credentials. */
const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const LOCAL_REGION = 'us-east-1';

/** What a running stack writes to `<data dir>/stack.json` so tools (the key tool) can reach it. */
export interface StackInfo {
  readonly pid: number;
  readonly apiUrl: string;
  readonly region: string;
  readonly dynamodbEndpoint: string;
  readonly s3Endpoint: string;
  /** The SQS stand-in (absent in a stack.json written before it existed). */
  readonly sqsEndpoint?: string;
  /** The KMS stand-in (lib/local/kms-standin.ts; absent in a stack.json written before it existed). */
  readonly kmsEndpoint?: string;
  readonly lambdaEndpoint: string;
  readonly tableName: string;
  readonly idempotencyTableName: string;
  readonly bucketName: string;
}

export const stackInfoPath = (dataDir: string) => join(dataDir, 'stack.json');

/** The environment that points the AWS SDK and the settings at a local stack. */
export function localAwsEnvironment(info: Omit<StackInfo, 'pid' | 'apiUrl' | 'lambdaEndpoint'>): Record<string, string> {
  return {
    AWS_REGION: info.region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: info.dynamodbEndpoint,
    AWS_ENDPOINT_URL_S3: info.s3Endpoint,
    ...(info.sqsEndpoint && { AWS_ENDPOINT_URL_SQS: info.sqsEndpoint }),
    ...(info.kmsEndpoint && { AWS_ENDPOINT_URL_KMS: info.kmsEndpoint }),
    TABLE_NAME: info.tableName,
    IDEMPOTENCY_TABLE_NAME: info.idempotencyTableName,
    BUCKET_NAME: info.bucketName,
  };
}
