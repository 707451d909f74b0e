/**
 * Prometheus alerting rules for a catalog, over the series `createPrometheusMetrics` exports:
 * one group for the outbox and its relays, one group per catalog consumer (its `consumer` label
 * is the catalog name: pass the same name to `watchConsumer`). Each rule carries a `runbook`
 * annotation naming the evgen command to run first. Output is deterministic (catalog order,
 * sorted event types, no timestamps), so `--check` can compare it byte for byte.
 */
import type { Catalog, ConsumerDefinition } from '../../catalog/model.js';
import type { AlertThresholds, ConsumerThresholds } from './alert-thresholds.js';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** Omitted: fires on the first evaluation that finds the condition. */
  readonly for?: string;
  readonly severity: 'warning' | 'critical';
  /** Labels beside `severity` (the consumer, the event type), so each rule is distinct. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly description: string;
  /** What to do, naming the evgen command. */
  readonly runbook: string;
}

export interface AlertGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** A PromQL string literal. */
const str = (value: string) => JSON.stringify(value);

export function alertGroups(catalog: Catalog, thresholds: AlertThresholds): AlertGroup[] {
  const { defaults } = thresholds;
  const age = defaults.outboxOldestUnsentAgeSeconds;
  const consumerNames = catalog.consumers.map((consumer) => consumer.name);
  const notConsumers =
    consumerNames.length === 0 ? '' : `{runner!~${str(consumerNames.map(escapeRegex).join('|'))}}`;
  const outbox: AlertGroup = {
    name: 'evgen-outbox',
    rules: [
      {
        alert: 'EvgenOutboxOldestUnsentAgeHigh',
        expr: `max by (relay) (evgen_outbox_oldest_unsent_age_seconds) > ${age.warning}`,
        for: age.warningFor,
        severity: 'warning',
        summary: 'Outbox rows wait longer than {{ $labels.relay }} should let them',
        description: `The oldest unsent outbox row is {{ $value | humanizeDuration }} old (threshold ${age.warning} s): the relay is not publishing (broker away, relay stopped, rows blocked behind a failing one).`,
        runbook:
          'Run `evgen outbox status` (backlog, oldest READY age, leases) and check /readyz of the relay for the broker; `evgen outbox dead` for rows blocking their aggregate.',
      },
      {
        alert: 'EvgenOutboxOldestUnsentAgeCritical',
        expr: `max by (relay) (evgen_outbox_oldest_unsent_age_seconds) > ${age.critical}`,
        for: age.criticalFor,
        severity: 'critical',
        summary: 'Outbox rows are not being published',
        description: `The oldest unsent outbox row is {{ $value | humanizeDuration }} old (threshold ${age.critical} s). Events written by the services are not reaching the broker.`,
        runbook:
          'Run `evgen outbox status`; if no relay holds a lease, start one; if publishes fail, /readyz of the relay says why (broker unreachable since …).',
      },
      {
        alert: 'EvgenOutboxDeadRows',
        expr: 'max by (relay) (evgen_outbox_dead_rows) > 0',
        severity: 'warning',
        summary: 'Outbox rows were given up on (DEAD)',
        description:
          '{{ $value }} outbox rows are DEAD: their publish failed for good, and later rows of the same aggregates wait behind them.',
        runbook:
          'Run `evgen outbox dead` to see the rows and why; fix the cause, then `evgen outbox revive`.',
      },
      {
        alert: 'EvgenRelayPublishFailures',
        expr: `sum by (relay) (rate(evgen_relay_publish_failures_total[5m])) * 60 > ${defaults.relayPublishFailuresPerMinute}`,
        for: '5m',
        severity: 'warning',
        summary: 'The relay {{ $labels.relay }} fails to publish',
        description: `{{ $value | humanize }} failed publish attempts per minute (threshold ${defaults.relayPublishFailuresPerMinute}); they are retried, broker unavailability without using attempts.`,
        runbook:
          'Check /readyz of the relay (broker unreachable since …) and `evgen outbox status`; `evgen trace <messageId>` follows one event.',
      },
      {
        alert: 'EvgenPublishUnroutable',
        expr: 'sum by (publisher) (increase(evgen_rabbitmq_publish_confirm_failures_total{reason="returned"}[5m])) > 0',
        severity: 'warning',
        summary: 'Messages of {{ $labels.publisher }} were returned as unroutable',
        description:
          '{{ $value | humanize }} publishes in the last 5 minutes were returned (mandatory, no queue bound for their routing key): a binding or a consumer queue is missing. The relay retries them; nothing is lost, but nothing arrives either.',
        runbook:
          'Run `evgen outbox status` (rows retried with UnroutableError), compare the topology with the catalog (`generated/rabbitmq/topology.ts`, assertTopology at the consumer start) and `evgen trace <messageId>` for one of them.',
      },
      {
        alert: 'EvgenPublishConfirmFailures',
        expr: `sum by (publisher) (rate(evgen_rabbitmq_publish_confirm_failures_total{reason!="returned"}[5m])) * 60 > ${defaults.publishConfirmFailuresPerMinute}`,
        for: '5m',
        severity: 'warning',
        summary: 'The broker does not confirm publishes of {{ $labels.publisher }}',
        description: `{{ $value | humanize }} publishes per minute were nacked, lost with their channel or not confirmed in time (threshold ${defaults.publishConfirmFailuresPerMinute}): the broker is overloaded, in a resource alarm or failing over.`,
        runbook:
          'Check /readyz of the relay and the broker (memory or disk alarm, failover); `evgen outbox status` shows whether the backlog grows.',
      },
      {
        alert: 'EvgenRunnerNotReady',
        expr: `min by (runner) (evgen_runner_ready${notConsumers}) == 0`,
        for: defaults.notReadyFor,
        severity: 'warning',
        summary: '{{ $labels.runner }} is not ready',
        description: `The runner {{ $labels.runner }} has answered /readyz with 503 for ${defaults.notReadyFor}.`,
        runbook:
          'GET /readyz on the service: the body names the reason (breaker open, broker unreachable, database not answering); `evgen outbox status` for a relay.',
      },
    ],
  };
  return [
    outbox,
    ...catalog.consumers.map((consumer) =>
      consumerGroup(consumer, thresholds.consumers[consumer.name] ?? defaults, thresholds),
    ),
  ];
}

function consumerGroup(
  consumer: ConsumerDefinition,
  limits: ConsumerThresholds,
  thresholds: AlertThresholds,
): AlertGroup {
  const name = consumer.name;
  const sel = `consumer=${str(name)}`;
  const lag = limits.consumerLag;
  const rules: AlertRule[] = [
    {
      alert: 'EvgenConsumerLagHigh',
      expr: `sum by (consumer) (evgen_consumer_lag_records{${sel}}) > ${lag.warning}`,
      for: lag.warningFor,
      severity: 'warning',
      summary: `${name} is falling behind`,
      description: `{{ $value }} records wait for ${name} (threshold ${lag.warning}), retry topics included.`,
      runbook: `Check processing time and retries of ${name} (evgen_consumer_processing_seconds, evgen_consumer_retried_total); \`evgen dlq list --consumer ${name}\` for what fails.`,
    },
    {
      alert: 'EvgenConsumerLagCritical',
      expr: `sum by (consumer) (evgen_consumer_lag_records{${sel}}) > ${lag.critical}`,
      for: lag.criticalFor,
      severity: 'critical',
      summary: `${name} is far behind`,
      description: `{{ $value }} records wait for ${name} (threshold ${lag.critical}).`,
      runbook: `Check /readyz of ${name} (breaker open? broker lost?), then scale out or fix the slow handler; \`evgen dlq list --consumer ${name}\`.`,
    },
    {
      alert: 'EvgenConsumerDeadLettered',
      expr: `sum by (consumer) (increase(evgen_consumer_dead_lettered_total{${sel}}[5m])) > 0`,
      severity: 'warning',
      summary: `${name} dead-lettered messages`,
      description: `{{ $value | humanize }} messages went to ${name}'s dead letters in the last 5 minutes.`,
      runbook: `Run \`evgen dlq list --consumer ${name} --unresolved\`, \`evgen dlq show\` for one letter and \`evgen trace <messageId>\`; after the fix, \`evgen dlq replay\`.`,
    },
    {
      alert: 'EvgenConsumerRetriesRising',
      expr: `sum by (consumer) (rate(evgen_consumer_retried_total{${sel}}[10m])) > ${limits.retryRiseFactor} * sum by (consumer) (rate(evgen_consumer_retried_total{${sel}}[10m] offset 10m)) and sum by (consumer) (delta(evgen_consumer_lag_records{${sel}}[10m])) < 0`,
      for: '5m',
      severity: 'warning',
      summary: `${name} retries more while its lag falls`,
      description: `Retries of ${name} rose over ${limits.retryRiseFactor}x in 10 minutes while its lag fell: messages move to retry topics instead of being handled, and the main topic's lag hides it.`,
      runbook: `Run \`evgen dlq list --consumer ${name}\` and look at the errors of the failing attempts; \`evgen trace <messageId>\` for one of them.`,
    },
    {
      alert: 'EvgenConsumerBreakerOpen',
      expr: `max by (consumer) (evgen_consumer_breaker_open{${sel}}) == 1`,
      for: limits.breakerOpenFor,
      severity: 'critical',
      summary: `${name} has paused: a dependency is away`,
      description: `The circuit breaker of ${name} has been open for ${limits.breakerOpenFor}: its database (or another dependency) does not answer, and consumption is paused (nothing is lost; messages wait).`,
      runbook: `GET /readyz: breakerReason names the error. Restore the database; ${name} resumes by itself. \`evgen outbox status\` shows whether producers are affected too.`,
    },
    {
      alert: 'EvgenConsumerRebalancing',
      expr: `sum by (consumer) (increase(evgen_consumer_rebalances_total{${sel}}[1h])) > ${limits.rebalancesPerHour}`,
      severity: 'warning',
      summary: `${name} rebalances too often`,
      description: `{{ $value | humanize }} partition assignments in the last hour (threshold ${limits.rebalancesPerHour}): members leave the group (crashes, slow handlers over the poll interval, deployments).`,
      runbook: `Check restarts of ${name}'s pods and its processing time; \`evgen dlq list --consumer ${name}\` if handlers fail.`,
    },
    {
      alert: 'EvgenDeadLetterDepthGrowing',
      expr: `sum by (consumer) (delta(evgen_queue_messages{${sel},role="dead_letter"}[15m])) > 0`,
      severity: 'warning',
      summary: `${name}'s dead letters pile up in the broker`,
      description: `${name}'s dead-letter queue or topic grew by {{ $value | humanize }} in 15 minutes (read from the broker, whoever dead-lettered them).`,
      runbook: `Run \`evgen dlq list --consumer ${name} --unresolved\` and \`evgen dlq show\` for one letter; after the fix, \`evgen dlq replay\`.`,
    },
    {
      alert: 'EvgenDeadLetterDepthHigh',
      expr: `sum by (consumer) (evgen_queue_messages{${sel},role="dead_letter"}) > ${limits.deadLetterDepth}`,
      for: '15m',
      severity: 'warning',
      summary: `${name} has many dead letters waiting`,
      description: `{{ $value }} dead letters of ${name} wait in the broker (threshold ${limits.deadLetterDepth}).`,
      runbook: `Run \`evgen dlq list --consumer ${name} --unresolved\` (resolved letters can go); \`evgen dlq replay\` once the cause is fixed.`,
    },
    {
      alert: 'EvgenQueueDepthUnreadable',
      expr: `min by (consumer) (evgen_queue_depth_up{${sel}}) == 0`,
      for: '5m',
      severity: 'warning',
      summary: `${name}'s queue depths cannot be read`,
      description: `The broker has not answered the depth read of ${name}'s queues or topics for 5 minutes (broker away, or a queue/topic missing): dead-letter alerts are blind meanwhile.`,
      runbook: `Check the broker and that ${name}'s queues or topics exist; \`evgen dlq list --consumer ${name}\` reads the same dead letters.`,
    },
    {
      alert: 'EvgenConsumerRedeliveries',
      expr: `sum by (consumer) (rate(evgen_consumer_redelivered_total{${sel}}[5m])) * 60 > ${limits.redeliveriesPerMinute}`,
      for: '10m',
      severity: 'warning',
      summary: `RabbitMQ redelivers to ${name} often`,
      description: `{{ $value | humanize }} redeliveries per minute (threshold ${limits.redeliveriesPerMinute}): deliveries are put back (breaker open, channel lost before the ack); the inbox absorbs the repeats, but work is done twice.`,
      runbook: `GET /readyz of ${name} (breaker open? broker lost?) and look at evgen_consumer_reconnects_total; \`evgen dlq list --consumer ${name}\` if handlers fail.`,
    },
    {
      alert: 'EvgenConsumerNotPolling',
      expr: `time() - max by (consumer) (evgen_consumer_last_fetch_timestamp_seconds{${sel}}) > ${limits.pollStallSeconds}`,
      for: '2m',
      severity: 'warning',
      summary: `${name} has stopped polling Kafka`,
      description: `${name} has had no fetch answered for {{ $value | humanizeDuration }} (threshold ${limits.pollStallSeconds} s): handlers hold the loop or the client is stuck; the group will evict the member past its rebalance timeout.`,
      runbook: `GET /readyz of ${name} (breaker open, partitions assigned) and its processing time; \`evgen dlq list --consumer ${name}\` if handlers fail.`,
    },
    {
      alert: 'EvgenConsumerNotReady',
      expr: `min by (runner) (evgen_runner_ready{runner=${str(name)}}) == 0`,
      for: limits.notReadyFor,
      severity: 'warning',
      summary: `${name} is not ready`,
      description: `${name} has answered /readyz with 503 for ${limits.notReadyFor}.`,
      runbook: `GET /readyz of ${name}: the body names the reason (breaker open, broker unreachable).`,
    },
  ];
  const labelled: AlertRule[] = rules.map((rule) => ({ ...rule, labels: { consumer: name } }));
  for (const eventType of [...consumer.subscribes].sort()) {
    const p99 = thresholds.events[eventType]?.processingP99Seconds ?? limits.processingP99Seconds;
    labelled.push({
      alert: 'EvgenConsumerSlowProcessing',
      labels: { consumer: name, event_type: eventType },
      expr: `histogram_quantile(0.99, sum by (consumer, event_type, le) (rate(evgen_consumer_processing_seconds_bucket{${sel},event_type=${str(eventType)}}[5m]))) > ${p99}`,
      for: '10m',
      severity: 'warning',
      summary: `${name} handles ${eventType} slowly`,
      description: `The 99th percentile of ${name}'s handler time for ${eventType} is {{ $value | humanizeDuration }} (threshold ${p99} s).`,
      runbook: `Look at the handler's spans (evgen traces each message) and the database; \`evgen trace <messageId>\` for one slow message.`,
    });
  }
  return { name: `evgen-consumer-${name}`, rules: labelled };
}

/** The rules as a Prometheus rule file (YAML; strings JSON-quoted, which YAML reads the same). */
export function renderAlertRules(groups: readonly AlertGroup[]): string {
  const lines = [
    '# Prometheus alerting rules generated by `evgen alerts` from the event catalog and',
    '# _alerts.json. Do not edit: change the thresholds there and run it again.',
    'groups:',
  ];
  for (const group of groups) {
    lines.push(`  - name: ${str(group.name)}`, '    rules:');
    for (const rule of group.rules) {
      lines.push(`      - alert: ${rule.alert}`, `        expr: ${str(rule.expr)}`);
      if (rule.for !== undefined) lines.push(`        for: ${rule.for}`);
      lines.push(
        '        labels:',
        `          severity: ${rule.severity}`,
        ...Object.entries(rule.labels ?? {}).map(
          ([key, value]) => `          ${key}: ${str(value)}`,
        ),
        '        annotations:',
        `          summary: ${str(rule.summary)}`,
        `          description: ${str(rule.description)}`,
        `          runbook: ${str(rule.runbook)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
