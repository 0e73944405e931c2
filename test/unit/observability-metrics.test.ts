/**
 * The business metrics leave as CloudWatch Embedded Metric Format lines on stdout, which is all
 * CloudWatch needs to turn them into metrics (no API call from the function).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Records metrics in a fresh process, as one Lambda invocation would, and returns its EMF lines. */
async function emitted(script: string): Promise<Record<string, any>[]> {
  return (await output(script)).stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

async function output(script: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_METRICS_NAMESPACE: 'PdfApiTest' },
  });
}

describe('metrics', () => {
  it('a generated PDF emits its count, render time, pages and size in the configured namespace', async () => {
    // Act
    const lines = await emitted(`
      const { metrics, recordPdfGenerated } = await import('#lib/observability/metrics.ts');
      recordPdfGenerated({ renderMs: 123, pages: 3, bytes: 4567 });
      metrics.publishStoredMetrics();`);

    // Assess
    const [line] = lines;
    expect(lines).toHaveLength(1);
    expect(line?._aws.CloudWatchMetrics[0].Namespace).toBe('PdfApiTest');
    expect(line).toMatchObject({ PdfsGenerated: 1, RenderTime: 123, PdfPages: 3, PdfBytes: 4567 });
  });

  it('a failed document emits one failure with its code as a dimension', async () => {
    // Act
    const lines = await emitted(`
      const { recordDocumentFailure } = await import('#lib/observability/metrics.ts');
      recordDocumentFailure('RENDER_TIMEOUT');`);

    // Assess
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ DocumentFailures: 1, code: 'RENDER_TIMEOUT' });
    expect(lines[0]?._aws.CloudWatchMetrics[0].Dimensions[0]).toContain('code');
  });

  it('an invocation that recorded nothing prints nothing, not even a warning', async () => {
    // Act
    const printed = await output(`
      const { flushMetrics } = await import('#lib/observability/metrics.ts');
      flushMetrics().after();`);

    // Assess
    expect(printed.stdout + printed.stderr).toBe('');
  });

  it('the per-invocation flush publishes what was recorded', async () => {
    // Act
    const lines = await emitted(`
      const { flushMetrics, recordPdfGenerated } = await import('#lib/observability/metrics.ts');
      recordPdfGenerated({ renderMs: 5, pages: 1, bytes: 10 });
      flushMetrics().after();`);

    // Assess
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ PdfsGenerated: 1 });
  });
});
