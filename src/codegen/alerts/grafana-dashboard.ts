/**
 * A Grafana dashboard for a catalog, from the same source as its alert rules: the series
 * `createPrometheusMetrics` exports, one row for the outbox and its relays and one row per catalog
 * consumer (filtered on its `consumer` label, the catalog name), with the alert thresholds drawn
 * on the panels they apply to. The Prometheus data source is a dashboard variable, so the file
 * imports into any Grafana. Output is deterministic (catalog order, fixed ids, no timestamps), so
 * `--check` can compare it byte for byte.
 */
import type { Catalog, ConsumerDefinition } from '../../catalog/model.js';
import type { AlertThresholds, ConsumerThresholds } from './alert-thresholds.js';

interface Target {
  readonly expr: string;
  readonly legend: string;
}

interface PanelSpec {
  readonly title: string;
  /** Grafana unit id: `s`, `short`, `ops`, `bool`. */
  readonly unit: string;
  readonly targets: readonly Target[];
  /** Drawn as threshold lines: warning (orange) and critical (red). */
  readonly warning?: number;
  readonly critical?: number;
  readonly description: string;
}

const str = (value: string) => JSON.stringify(value);
const PANEL_WIDTH = 8;
const PANEL_HEIGHT = 8;

export interface GrafanaDashboard {
  readonly title: string;
  readonly uid: string;
  readonly panels: readonly Record<string, unknown>[];
  readonly [key: string]: unknown;
}

export function grafanaDashboard(catalog: Catalog, thresholds: AlertThresholds): GrafanaDashboard {
  const { defaults } = thresholds;
  const rows: { title: string; panels: PanelSpec[] }[] = [
    {
      title: 'Outbox and relays',
      panels: [
        {
          title: 'Oldest unsent outbox row',
          unit: 's',
          targets: [
            {
              expr: 'max by (relay) (evgen_outbox_oldest_unsent_age_seconds)',
              legend: '{{relay}}',
            },
          ],
          warning: defaults.outboxOldestUnsentAgeSeconds.warning,
          critical: defaults.outboxOldestUnsentAgeSeconds.critical,
          description:
            'Age of the oldest READY or PROCESSING row. Growing: run `evgen outbox status`.',
        },
        {
          title: 'Outbox backlog and DEAD rows',
          unit: 'short',
          targets: [
            { expr: 'sum by (relay) (evgen_outbox_backlog_rows)', legend: 'backlog {{relay}}' },
            { expr: 'sum by (relay) (evgen_outbox_dead_rows)', legend: 'DEAD {{relay}}' },
          ],
          description: 'READY + PROCESSING rows, and rows given up on (`evgen outbox dead`).',
        },
        {
          title: 'Publishes per second',
          unit: 'ops',
          targets: [
            {
              expr: 'sum by (relay) (rate(evgen_relay_published_total[5m]))',
              legend: 'published {{relay}}',
            },
            {
              expr: 'sum by (relay) (rate(evgen_relay_publish_failures_total[5m]))',
              legend: 'failed {{relay}}',
            },
          ],
          warning: defaults.relayPublishFailuresPerMinute / 60,
          description:
            'Confirmed publishes and failed attempts (retried; broker unavailability included).',
        },
        {
          title: 'Publish time p99 by event type',
          unit: 's',
          targets: [
            {
              expr: 'histogram_quantile(0.99, sum by (event_type, le) (rate(evgen_relay_publish_duration_seconds_bucket[5m])))',
              legend: '{{event_type}}',
            },
          ],
          description: 'From handing a row to the publisher to the broker confirm.',
        },
        {
          title: 'RabbitMQ confirm failures per second',
          unit: 'ops',
          targets: [
            {
              expr: 'sum by (publisher, reason) (rate(evgen_rabbitmq_publish_confirm_failures_total[5m]))',
              legend: '{{reason}} {{publisher}}',
            },
          ],
          warning: defaults.publishConfirmFailuresPerMinute / 60,
          description:
            'Returned (unroutable), nacked, channel closed first, timed out (needs watchPublisher).',
        },
        {
          title: 'Runners ready',
          unit: 'bool',
          targets: [{ expr: 'min by (runner) (evgen_runner_ready)', legend: '{{runner}}' }],
          description: '1 when /readyz answers 200; GET /readyz says why not.',
        },
      ],
    },
    ...catalog.consumers.map((consumer) => ({
      title: `Consumer ${consumer.name}`,
      panels: consumerPanels(consumer, thresholds.consumers[consumer.name] ?? defaults),
    })),
  ];

  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of rows) {
    panels.push({
      type: 'row',
      id: id++,
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    row.panels.forEach((spec, index) => {
      const x = (index % 3) * PANEL_WIDTH;
      if (index > 0 && index % 3 === 0) y += PANEL_HEIGHT;
      panels.push(panel(spec, id++, { h: PANEL_HEIGHT, w: PANEL_WIDTH, x, y }));
    });
    y += PANEL_HEIGHT;
  }
  return {
    title: 'evgen',
    uid: 'evgen',
    description:
      'Generated by `evgen dashboard` from the event catalog and _alerts.json. Do not edit: change the catalog or the thresholds and run it again.',
    tags: ['evgen'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'utc',
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Prometheus',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

function consumerPanels(consumer: ConsumerDefinition, limits: ConsumerThresholds): PanelSpec[] {
  const sel = `consumer=${str(consumer.name)}`;
  return [
    {
      title: 'Lag (records waiting)',
      unit: 'short',
      targets: [
        {
          expr: `sum by (topic) (evgen_consumer_lag_records{${sel}})`,
          legend: '{{topic}}',
        },
      ],
      warning: limits.consumerLag.warning,
      critical: limits.consumerLag.critical,
      description:
        'Kafka: per topic, event and retry topics. RabbitMQ: see the queue depths panel.',
    },
    {
      title: 'Messages per second',
      unit: 'ops',
      targets: [
        ['handled', 'evgen_consumer_handled_total'],
        ['retried', 'evgen_consumer_retried_total'],
        ['dead-lettered', 'evgen_consumer_dead_lettered_total'],
        ['skipped', 'evgen_consumer_skipped_total'],
      ].map(([legend, series]) => ({
        expr: `sum (rate(${series!}{${sel}}[5m]))`,
        legend: legend!,
      })),
      description:
        'Retries rising while the lag falls: messages move to retry topics instead of being handled.',
    },
    {
      title: 'Processing time p99 by event type',
      unit: 's',
      targets: [
        {
          expr: `histogram_quantile(0.99, sum by (event_type, le) (rate(evgen_consumer_processing_seconds_bucket{${sel}}[5m])))`,
          legend: '{{event_type}}',
        },
      ],
      warning: limits.processingP99Seconds,
      description:
        'Handler time, the inbox transaction included; `evgen trace <messageId>` for one message.',
    },
    {
      title: 'Queue depths (from the broker)',
      unit: 'short',
      targets: [
        {
          expr: `sum by (role) (evgen_queue_messages{${sel}})`,
          legend: '{{role}}',
        },
      ],
      warning: limits.deadLetterDepth,
      description:
        'Work, retry and dead-letter messages waiting (needs watchQueueDepths); `evgen dlq list` for the letters.',
    },
    {
      title: 'Redeliveries, rebalances, commit failures per second',
      unit: 'ops',
      targets: [
        ['redelivered', 'evgen_consumer_redelivered_total'],
        ['rebalances', 'evgen_consumer_rebalances_total'],
        ['commit failures', 'evgen_consumer_commit_failures_total'],
      ].map(([legend, series]) => ({
        expr: `sum (rate(${series!}{${sel}}[5m]))`,
        legend: legend!,
      })),
      description:
        'RabbitMQ redeliveries (broker flag); Kafka rebalances and failed offset commits.',
    },
    {
      title: 'Breaker open, seconds since the last poll',
      unit: 'short',
      targets: [
        { expr: `max (evgen_consumer_breaker_open{${sel}})`, legend: 'breaker open' },
        {
          expr: `time() - max (evgen_consumer_last_fetch_timestamp_seconds{${sel}})`,
          legend: 'since last poll (s)',
        },
      ],
      warning: limits.pollStallSeconds,
      description:
        'Breaker 1: a dependency is away, consumption paused. Kafka: time since a fetch was answered.',
    },
  ];
}

function panel(
  spec: PanelSpec,
  id: number,
  gridPos: { h: number; w: number; x: number; y: number },
): Record<string, unknown> {
  const steps: Record<string, unknown>[] = [{ color: 'green', value: null }];
  if (spec.warning !== undefined) steps.push({ color: 'orange', value: spec.warning });
  if (spec.critical !== undefined) steps.push({ color: 'red', value: spec.critical });
  return {
    type: 'timeseries',
    id,
    title: spec.title,
    description: spec.description,
    datasource: { type: 'prometheus', uid: '${datasource}' },
    gridPos,
    fieldConfig: {
      defaults: {
        unit: spec.unit,
        thresholds: { mode: 'absolute', steps },
        custom: { thresholdsStyle: { mode: steps.length > 1 ? 'line' : 'off' } },
      },
      overrides: [],
    },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true } },
    targets: spec.targets.map((target, index) => ({
      refId: String.fromCharCode(65 + index),
      datasource: { type: 'prometheus', uid: '${datasource}' },
      expr: target.expr,
      legendFormat: target.legend,
    })),
  };
}

/** The dashboard as Grafana imports it: JSON, two-space indented, a final newline. */
export function renderGrafanaDashboard(dashboard: GrafanaDashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
