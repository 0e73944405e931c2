/**
 * What 1,000 PDFs cost on AWS, from durations measured in the Lambda emulation (bench/lib/lambda.ts)
 * and the requests each PDF makes, at published us-east-1 on-demand prices (x86, REST API).
 * Pure arithmetic, kept apart so that it can be read and checked on its own.
 */

/** Published us-east-1 prices, in US dollars. */
export const PRICES = {
  lambdaGbSecond: 0.0000166667,
  lambdaRequest: 0.2 / 1e6,
  apiGatewayRestRequest: 3.5 / 1e6,
  s3Put: 0.005 / 1_000,
  s3Get: 0.0004 / 1_000,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
} as const;

/** Lambda's share of a vCPU is proportional to memory: one whole vCPU at 1,769 MB. */
export const MB_PER_VCPU = 1_769;

/**
 * The requests one PDF makes, from the code: generate reads the key (1 read unit), counts the
 * request (rate limit) and reserves and settles the quota (3 writes), writes the record (1 write,
 * and 1 more for the entity index), and puts the file; a batch item makes the record's writes and
 * the file's put itself, and shares the batch's own reads and writes with the other items.
 * One download per PDF: the files function reads the record and S3 serves the file.
 */
export const REQUESTS = {
  generate: { apiGateway: 1, lambda: 1, writes: 5, reads: 1, s3Puts: 1 },
  batchItem: { apiGatewayPerBatch: 1, lambdaPerBatch: 1, lambdaPerItem: 1, writesPerBatch: 3, readsPerBatch: 1, writesPerItem: 2, s3PutsPerItem: 1 },
  download: { apiGateway: 1, lambda: 1, reads: 1, s3Gets: 1 },
} as const;

export interface CostInputs {
  /** Memory of the Chromium functions being priced (MB). */
  readonly memoryMb: number;
  /** Warm duration of one generate at that memory (ms). */
  readonly generateMs: number;
  /** Warm duration of one render invocation (a batch item) at that memory (ms). */
  readonly renderMs: number;
  /** The batch function's own duration for a batch, per item (ms), at its memory. */
  readonly batchShareMs: number;
  /** The batch and files functions' memory (MB). */
  readonly lightMemoryMb: number;
  /** Warm duration of the files function's download redirect (ms). */
  readonly downloadMs: number;
  /** Items per batch. */
  readonly batchSize: number;
}

export interface CostPer1000 {
  readonly single: number;
  readonly batchItem: number;
  /** The Lambda compute part of `single`. */
  readonly singleCompute: number;
}

/** Lambda bills duration rounded up to the millisecond. */
const gbSeconds = (ms: number, memoryMb: number) => (Math.ceil(ms) / 1_000) * (memoryMb / 1_024);

export function costPer1000(input: CostInputs): CostPer1000 {
  const p = PRICES;
  const download =
    REQUESTS.download.apiGateway * p.apiGatewayRestRequest +
    REQUESTS.download.lambda * p.lambdaRequest +
    gbSeconds(input.downloadMs, input.lightMemoryMb) * p.lambdaGbSecond +
    REQUESTS.download.reads * p.dynamoReadUnit +
    REQUESTS.download.s3Gets * p.s3Get;
  const g = REQUESTS.generate;
  const singleCompute = gbSeconds(input.generateMs, input.memoryMb) * p.lambdaGbSecond;
  const single =
    g.apiGateway * p.apiGatewayRestRequest + g.lambda * p.lambdaRequest + singleCompute + g.writes * p.dynamoWriteUnit + g.reads * p.dynamoReadUnit + g.s3Puts * p.s3Put + download;
  const b = REQUESTS.batchItem;
  const batchItem =
    (b.apiGatewayPerBatch * p.apiGatewayRestRequest + b.lambdaPerBatch * p.lambdaRequest + b.writesPerBatch * p.dynamoWriteUnit + b.readsPerBatch * p.dynamoReadUnit) / input.batchSize +
    gbSeconds(input.batchShareMs, input.lightMemoryMb) * p.lambdaGbSecond +
    b.lambdaPerItem * p.lambdaRequest +
    gbSeconds(input.renderMs, input.memoryMb) * p.lambdaGbSecond +
    b.writesPerItem * p.dynamoWriteUnit +
    b.s3PutsPerItem * p.s3Put +
    download;
  return { single: single * 1_000, batchItem: batchItem * 1_000, singleCompute: singleCompute * 1_000 };
}
