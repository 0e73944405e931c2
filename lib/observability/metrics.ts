/**
 * Business metrics as CloudWatch Embedded Metric Format lines (Powertools Metrics): written with the
 * function's logs, so they cost no API call. Flushed per invocation by the `logMetrics` middleware.
 * The local stack switches them off (POWERTOOLS_METRICS_DISABLED) to keep its output readable.
 */
import './inherited-concurrency.ts';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { eventLoopDelay } from './event-loop.ts';

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'PdfApi',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'pdf-api',
});

export function recordPdfGenerated(input: { renderMs: number; pages: number; bytes: number }): void {
  metrics.addMetric('PdfsGenerated', MetricUnit.Count, 1);
  metrics.addMetric('RenderTime', MetricUnit.Milliseconds, input.renderMs);
  metrics.addMetric('PdfPages', MetricUnit.Count, input.pages);
  metrics.addMetric('PdfBytes', MetricUnit.Bytes, input.bytes);
}

/** One failed document, by its failure code (INVALID_HTML, RENDER_TIMEOUT, ...). */
export function recordDocumentFailure(code: string): void {
  const metric = metrics.singleMetric();
  metric.addDimension('code', code);
  metric.addMetric('DocumentFailures', MetricUnit.Count, 1);
}

/**
 * Flushes the invocation's metrics, if it recorded any. (Powertools' own `logMetrics` middleware
 * warns on every invocation without metrics, a health check or a 401 for instance.)
 */
export function flushMetrics(): { after: () => void; onError: () => void } {
  const flush = () => {
    // With the invocation's own metrics: how long the event loop was held lately (the metric an
    // alarm on a process that serves everyone watches; see lib/observability/event-loop.ts).
    if (!metrics.hasStoredMetrics()) return;
    metrics.addMetric('EventLoopDelayMax', MetricUnit.Milliseconds, eventLoopDelay().maxMs);
    metrics.publishStoredMetrics();
  };
  return { after: flush, onError: flush };
}
