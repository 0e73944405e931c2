/**
 * Alarms worth waking someone for, all publishing to one SNS topic: the API's 5xx rate, any
 * function crashing (Lambda's Errors metric: unhandled errors, timeouts, out of memory; a handled
 * error is an answer, not an Error), render errors logged by the Chromium functions, and work given
 * up: a job Lambda gave up on that could not be ended, a bulk chunk that failed every delivery.
 */
import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

const PERIOD = Duration.minutes(5);
/** Below this many requests in a period a 5xx rate says little (one failure out of two is 50 %). */
export const MIN_REQUESTS_FOR_5XX_RATE = 20;
export const MAX_5XX_PERCENT = 5;
/** A hostile page may crash its renderer now and then; this many in a period means Chromium is in trouble. */
export const RENDER_ERRORS_THRESHOLD = 5;

export interface AlarmsProps {
  readonly api: RestApi;
  readonly functions: Readonly<Record<string, IFunction>>;
  /** Log groups of the functions that run Chromium. */
  readonly renderLogGroups: readonly ILogGroup[];
  /** CloudWatch namespace of the service's own metrics (also Powertools' metrics namespace). */
  readonly metricsNamespace: string;
  /** Where the job function's given-up events land: any message there is a job that never ran to its end. */
  readonly jobFailures?: IQueue;
  /**
   * The bulk queue's dead-letter queue: a chunk lands there after failing on every delivery. The
   * reconcile function reads it at once (its lines fail, uncharged, and its job still completes), so
   * what is alarmed on is a message arriving there, not one waiting.
   */
  readonly bulkChunksGivenUp?: IQueue;
  readonly email?: string;
}

export class Alarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { displayName: 'PDF API alarms', enforceSSL: true });
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
    const action = new SnsAction(this.topic);
    const add = (alarm: Alarm) => {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
      this.alarms.push(alarm);
    };

    add(
      new Alarm(this, 'Api5xxRate', {
        alarmDescription: `More than ${MAX_5XX_PERCENT} % of API requests answered 5xx in 5 minutes (with at least ${MIN_REQUESTS_FOR_5XX_RATE} requests).`,
        metric: new MathExpression({
          expression: `IF(requests >= ${MIN_REQUESTS_FOR_5XX_RATE}, 100 * errors / requests, 0)`,
          usingMetrics: {
            requests: props.api.metricCount({ period: PERIOD, statistic: 'Sum' }),
            errors: props.api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
          },
          label: '5xx %',
          period: PERIOD,
        }),
        threshold: MAX_5XX_PERCENT,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    for (const [name, fn] of Object.entries(props.functions)) {
      add(
        new Alarm(this, `${name}Errors`, {
          alarmDescription: `The ${name} function crashed, timed out or ran out of memory.`,
          metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    // Powertools logs are JSON with a `level`; every ERROR line of a Chromium function is a failed
    // render (render_failed answers, failed batch items, browser crashes).
    const renderErrors = new Metric({ namespace: props.metricsNamespace, metricName: 'RenderErrors', period: PERIOD, statistic: 'Sum' });
    props.renderLogGroups.forEach((logGroup, i) => {
      new MetricFilter(this, `RenderErrorsFilter${i}`, {
        logGroup,
        filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
        metricNamespace: renderErrors.namespace,
        metricName: renderErrors.metricName,
        metricValue: '1',
      });
    });
    add(
      new Alarm(this, 'RenderErrors', {
        alarmDescription: `At least ${RENDER_ERRORS_THRESHOLD} render errors logged by the Chromium functions in 5 minutes.`,
        metric: renderErrors,
        threshold: RENDER_ERRORS_THRESHOLD,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    if (props.jobFailures) {
      add(
        new Alarm(this, 'JobFailures', {
          alarmDescription: 'A job Lambda gave up on could not be ended by the reconcile function after 5 tries: see the job failures dead-letter queue.',
          metric: props.jobFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    if (props.bulkChunksGivenUp) {
      add(
        new Alarm(this, 'BulkChunksGivenUp', {
          alarmDescription: 'A bulk job chunk failed on every delivery and went to the bulk dead-letter queue: its unstored lines failed, uncharged.',
          metric: props.bulkChunksGivenUp.metricNumberOfMessagesReceived({ period: PERIOD, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
  }
}
