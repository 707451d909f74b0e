/**
 * `evgen alerts`: the rules generated from the repository's catalog pass `promtool check rules`;
 * `promtool test rules` feeds series to every alert and checks that it fires when it should and
 * not otherwise — with the per-consumer and per-event overrides of `_alerts.json` (the same
 * series without them must fail, so the overrides are what decides); a bad `_alerts.json` is
 * refused with file, pointer and hint and nothing written; `--check` says stale or missing.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const CLI = join(REPO, 'src/cli/main.ts');
// By path: the commands run in a temporary folder, where `tsx` would not resolve.
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function exec(command: string, args: readonly string[], cwd: string): Promise<Result> {
  try {
    const { stdout, stderr } = await run(command, [...args], { cwd, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error; // promtool or tsx missing: fail loudly
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const evgen = (args: readonly string[], cwd: string) =>
  exec(process.execPath, ['--import', TSX, CLI, ...args], cwd);

/** The overrides the promtool tests are written against. */
const OVERRIDES = {
  defaults: {
    outboxOldestUnsentAgeSeconds: {
      warning: 60,
      critical: 300,
      warningFor: '2m',
      criticalFor: '1m',
    },
    notReadyFor: '3m',
  },
  consumers: {
    'inventory-service': {
      consumerLag: { warning: 100, critical: 1000 },
      breakerOpenFor: '2m',
      rebalancesPerHour: 3,
      deadLetterDepth: 5,
    },
  },
  events: { 'order.OrderCreated': { processingP99Seconds: 0.5 } },
};

/** Rules without annotations: promtool compares annotations too, and the test is about when alerts fire. */
function withoutAnnotations(rules: string): string {
  return rules
    .split('\n')
    .filter((line) => !/^ {8}annotations:$|^ {10}(summary|description|runbook):/.test(line))
    .join('\n');
}

const inv = 'consumer="inventory-service"';
const shp = 'consumer="shipping-service"';
const alert = (labels: Record<string, string>) =>
  `          - exp_labels: {${Object.entries(labels)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
const check = (time: string, name: string, firing: readonly Record<string, string>[]) =>
  [
    `      - eval_time: ${time}`,
    `        alertname: ${name}`,
    firing.length === 0 ? '        exp_alerts: []' : '        exp_alerts:',
    ...firing.map(alert),
  ].join('\n');

/** Series for every alert, and when each must (not) be firing. */
const PROMTOOL_TESTS = `rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'evgen_outbox_oldest_unsent_age_seconds{relay="relay"}'
        values: '0 0 90 150 210 270 330 390 450 0 0 0'
      - series: 'evgen_outbox_dead_rows{relay="relay"}'
        values: '0 0 1 1 1'
      - series: 'evgen_relay_publish_failures_total{relay="relay"}'
        values: '0x10 5+5x20'
      - series: 'evgen_runner_ready{runner="relay"}'
        values: '1 1 0 0 0 0 0 0 0 1 1'
      - series: 'evgen_runner_ready{runner="inventory-service"}'
        values: '1 1 0 0 0 0 0 0 0 1 1'
      - series: 'evgen_consumer_lag_records{${inv},topic="orders",partition="0"}'
        values: '150x20'
      - series: 'evgen_consumer_lag_records{${inv},topic="orders",partition="1"}'
        values: '0x20'
      - series: 'evgen_consumer_lag_records{${shp},topic="orders",partition="0"}'
        values: '1000-20x40'
      - series: 'evgen_consumer_dead_lettered_total{${inv}}'
        values: '0 0 0 1 1 1 1 1 1 1 1 1 1 1 1 1'
      - series: 'evgen_consumer_retried_total{${shp}}'
        values: '0+1x10 15+5x20'
      - series: 'evgen_consumer_retried_total{${inv}}'
        values: '0+1x30'
      - series: 'evgen_consumer_breaker_open{${inv}}'
        values: '0 1 1 1 1 0 0'
      - series: 'evgen_consumer_rebalances_total{${inv}}'
        values: '0 1 2 3 4 5 5 5'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCreated",outcome="handled",le="0.25"}'
        values: '0x30'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCreated",outcome="handled",le="1"}'
        values: '0+10x30'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCreated",outcome="handled",le="+Inf"}'
        values: '0+10x30'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCancelled",outcome="handled",le="0.25"}'
        values: '0x30'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCancelled",outcome="handled",le="1"}'
        values: '0+10x30'
      - series: 'evgen_consumer_processing_seconds_bucket{${inv},event_type="order.OrderCancelled",outcome="handled",le="+Inf"}'
        values: '0+10x30'
      - series: 'evgen_rabbitmq_publish_confirm_failures_total{publisher="relay",reason="returned"}'
        values: '0 0 0 1 1 1 1 1 1 1 1 1'
      - series: 'evgen_rabbitmq_publish_confirm_failures_total{publisher="relay",reason="nacked"}'
        values: '0x10 5+5x20'
      - series: 'evgen_rabbitmq_publish_confirm_failures_total{publisher="relay",reason="closed"}'
        values: '0x30'
      - series: 'evgen_queue_messages{${inv},queue="inventory.dead",role="dead_letter"}'
        values: '0x3 1x10 8x30'
      - series: 'evgen_queue_messages{${inv},queue="inventory",role="work"}'
        values: '500x45'
      - series: 'evgen_queue_messages{${shp},queue="shipping.dead",role="dead_letter"}'
        values: '50x45'
      - series: 'evgen_queue_depth_up{${inv}}'
        values: '1 1 0x10 1x10'
      - series: 'evgen_queue_depth_up{${shp}}'
        values: '1x25'
      - series: 'evgen_consumer_redelivered_total{${inv}}'
        values: '0x10 0+30x20'
      - series: 'evgen_consumer_redelivered_total{${shp}}'
        values: '0+2x30'
      - series: 'evgen_consumer_last_fetch_timestamp_seconds{${inv}}'
        values: '0+60x5 300x20'
      - series: 'evgen_consumer_last_fetch_timestamp_seconds{${shp}}'
        values: '0+60x30'
    alert_rule_test:
${[
  check('3m', 'EvgenOutboxOldestUnsentAgeHigh', []),
  check('4m', 'EvgenOutboxOldestUnsentAgeHigh', [{ severity: 'warning', relay: 'relay' }]),
  check('11m', 'EvgenOutboxOldestUnsentAgeHigh', []),
  check('6m', 'EvgenOutboxOldestUnsentAgeCritical', []),
  check('7m', 'EvgenOutboxOldestUnsentAgeCritical', [{ severity: 'critical', relay: 'relay' }]),
  check('1m', 'EvgenOutboxDeadRows', []),
  check('2m', 'EvgenOutboxDeadRows', [{ severity: 'warning', relay: 'relay' }]),
  check('10m', 'EvgenRelayPublishFailures', []),
  check('25m', 'EvgenRelayPublishFailures', [{ severity: 'warning', relay: 'relay' }]),
  // The consumer's readiness has its own rule; the generic one is for the relay (and others).
  check('4m', 'EvgenRunnerNotReady', []),
  check('5m', 'EvgenRunnerNotReady', [{ severity: 'warning', runner: 'relay' }]),
  check('10m', 'EvgenRunnerNotReady', []),
  check('5m', 'EvgenConsumerNotReady', [
    { severity: 'warning', runner: 'inventory-service', consumer: 'inventory-service' },
  ]),
  // 150 records: over inventory's own 100, under shipping's default 1000.
  check('4m', 'EvgenConsumerLagHigh', []),
  check('6m', 'EvgenConsumerLagHigh', [{ severity: 'warning', consumer: 'inventory-service' }]),
  check('6m', 'EvgenConsumerLagCritical', []),
  check('2m', 'EvgenConsumerDeadLettered', []),
  check('3m', 'EvgenConsumerDeadLettered', [
    { severity: 'warning', consumer: 'inventory-service' },
  ]),
  check('15m', 'EvgenConsumerDeadLettered', []),
  // shipping: retries 5x faster while its lag falls; inventory: steady retries.
  check('8m', 'EvgenConsumerRetriesRising', []),
  check('22m', 'EvgenConsumerRetriesRising', [
    { severity: 'warning', consumer: 'shipping-service' },
  ]),
  check('2m', 'EvgenConsumerBreakerOpen', []),
  check('3m', 'EvgenConsumerBreakerOpen', [
    { severity: 'critical', consumer: 'inventory-service' },
  ]),
  check('6m', 'EvgenConsumerBreakerOpen', []),
  check('2m', 'EvgenConsumerRebalancing', []),
  check('5m', 'EvgenConsumerRebalancing', [{ severity: 'warning', consumer: 'inventory-service' }]),
  // p99 ≈ 0.99 s: over OrderCreated's own 0.5 s, under the consumer default 5 s for OrderCancelled.
  // One publish returned as unroutable at 3m; nacks at 5 a minute from 11m (threshold 1).
  check('2m', 'EvgenPublishUnroutable', []),
  check('3m', 'EvgenPublishUnroutable', [{ severity: 'warning', publisher: 'relay' }]),
  check('10m', 'EvgenPublishUnroutable', []),
  check('10m', 'EvgenPublishConfirmFailures', []),
  check('25m', 'EvgenPublishConfirmFailures', [{ severity: 'warning', publisher: 'relay' }]),
  // inventory's dead letters: 0, then 1 at 4m, 8 from 15m (its own threshold 5, held 15m);
  // shipping's 50 steady, under the default 100; a full work queue is not a dead letter.
  check('3m', 'EvgenDeadLetterDepthGrowing', []),
  check('5m', 'EvgenDeadLetterDepthGrowing', [
    { severity: 'warning', consumer: 'inventory-service' },
  ]),
  check('40m', 'EvgenDeadLetterDepthGrowing', []),
  check('20m', 'EvgenDeadLetterDepthHigh', []),
  check('31m', 'EvgenDeadLetterDepthHigh', [
    { severity: 'warning', consumer: 'inventory-service' },
  ]),
  check('6m', 'EvgenQueueDepthUnreadable', []),
  check('8m', 'EvgenQueueDepthUnreadable', [
    { severity: 'warning', consumer: 'inventory-service' },
  ]),
  check('20m', 'EvgenQueueDepthUnreadable', []),
  // inventory: 30 redeliveries a minute from 11m (threshold 10, held 10m); shipping: 2 a minute.
  check('15m', 'EvgenConsumerRedeliveries', []),
  check('28m', 'EvgenConsumerRedeliveries', [
    { severity: 'warning', consumer: 'inventory-service' },
  ]),
  // inventory's last poll stays at 5m (stalled 60 s past it from 7m, held 2m); shipping polls.
  check('5m', 'EvgenConsumerNotPolling', []),
  check('8m', 'EvgenConsumerNotPolling', []),
  check('10m', 'EvgenConsumerNotPolling', [{ severity: 'warning', consumer: 'inventory-service' }]),
  check('5m', 'EvgenConsumerSlowProcessing', []),
  check('15m', 'EvgenConsumerSlowProcessing', [
    { severity: 'warning', consumer: 'inventory-service', event_type: 'order.OrderCreated' },
  ]),
].join('\n')}
`;

describe('evgen alerts', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'evgen-alerts-'));
    await cp(join(REPO, 'events'), join(dir, 'events'), { recursive: true });
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('rules from the catalog pass promtool check rules, and promtool test rules proves when each fires', async () => {
    await writeFile(join(dir, 'events/_alerts.json'), JSON.stringify(OVERRIDES, null, 2));
    const generated = await evgen(['alerts', '--out', 'rules.full.yml'], dir);
    expect(generated).toMatchObject({ code: 0, stderr: '' });
    const checked = await exec('promtool', ['check', 'rules', 'rules.full.yml'], dir);
    expect(checked.stdout + checked.stderr).toMatch(/SUCCESS: \d+ rules found/);
    expect(checked.code).toBe(0);
    const rules = await readFile(join(dir, 'rules.full.yml'), 'utf8');
    // Every rule says what to run.
    const runbooks = rules.split('\n').filter((line) => line.includes('runbook:'));
    expect(runbooks.length).toBe(
      rules.split('\n').filter((line) => line.includes('- alert:')).length,
    );
    for (const line of runbooks) expect(line).toMatch(/`evgen (dlq|outbox|trace)|\/readyz/);

    await writeFile(join(dir, 'rules.yml'), withoutAnnotations(rules));
    await writeFile(join(dir, 'tests.yml'), PROMTOOL_TESTS);
    const tested = await exec('promtool', ['test', 'rules', 'tests.yml'], dir);
    expect(tested.stdout + tested.stderr).toContain('SUCCESS');
    expect(tested.code).toBe(0);

    // The same series against the default thresholds: the override-driven expectations fail.
    await rm(join(dir, 'events/_alerts.json'));
    expect((await evgen(['alerts', '--out', 'rules.full.yml'], dir)).code).toBe(0);
    await writeFile(
      join(dir, 'rules.yml'),
      withoutAnnotations(await readFile(join(dir, 'rules.full.yml'), 'utf8')),
    );
    const defaults = await exec('promtool', ['test', 'rules', 'tests.yml'], dir);
    expect(defaults.code).not.toBe(0);
    expect(defaults.stdout + defaults.stderr).toMatch(/EvgenConsumerLagHigh/);
  }, 180_000); // two CLI runs and three promtool runs: minutes on a loaded 2-core machine

  it('--check: 0 when the file is current, 1 when stale or missing, and writes nothing', async () => {
    expect((await evgen(['alerts', '--out', 'rules.yml'], dir)).code).toBe(0);
    expect((await evgen(['alerts', '--out', 'rules.yml', '--check'], dir)).code).toBe(0);
    await writeFile(
      join(dir, 'events/_alerts.json'),
      JSON.stringify({ defaults: { rebalancesPerHour: 12 } }),
    );
    const stale = await evgen(['alerts', '--out', 'rules.yml', '--check'], dir);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('rules.yml: stale — run evgen alerts --out rules.yml');
    expect(await readFile(join(dir, 'rules.yml'), 'utf8')).not.toContain('> 12');
    const missing = await evgen(['alerts', '--out', 'none.yml', '--check'], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('none.yml: missing');
    await expect(stat(join(dir, 'none.yml'))).rejects.toThrow();
  });

  it.each([
    [
      'an unknown key',
      { defaults: { lagWarning: 5 } },
      'events/_alerts.json#/defaults/lagWarning',
      /unknown key "lagWarning".*use one of breakerOpenFor, consumerLag/s,
    ],
    [
      'warning above critical',
      { consumers: { 'inventory-service': { consumerLag: { warning: 50, critical: 10 } } } },
      'events/_alerts.json#/consumers/inventory-service/consumerLag',
      /warning \(50\) must be below critical \(10\).*raise critical or lower warning/s,
    ],
    [
      'a consumer the catalog lacks',
      { consumers: { 'billing-service': {} } },
      'events/_alerts.json#/consumers/billing-service',
      /no consumer "billing-service" in the catalog.*inventory-service, shipping-service/s,
    ],
    [
      'an event no consumer subscribes to',
      { events: { 'order.OrderShipped': { processingP99Seconds: 1 } } },
      'events/_alerts.json#/events/order.OrderShipped',
      /no consumer in the catalog subscribes to "order.OrderShipped"/,
    ],
    [
      'a bad duration',
      { defaults: { breakerOpenFor: '5 minutes' } },
      'events/_alerts.json#/defaults/breakerOpenFor',
      /Prometheus duration.*"30s", "5m"/s,
    ],
    [
      'a non-positive number',
      { defaults: { processingP99Seconds: 0 } },
      'events/_alerts.json#/defaults/processingP99Seconds',
      /positive number/,
    ],
  ])(
    'refuses %s with the file, pointer and hint, exit 2, nothing written',
    async (_, content, where, message) => {
      await writeFile(join(dir, 'events/_alerts.json'), JSON.stringify(content));
      const refused = await evgen(['alerts', '--out', 'rules.yml'], dir);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(where);
      expect(refused.stderr).toMatch(message);
      await expect(stat(join(dir, 'rules.yml'))).rejects.toThrow();
    },
  );

  it('refuses invalid JSON in _alerts.json with its line and column', async () => {
    await writeFile(join(dir, 'events/_alerts.json'), '{ "defaults": { , } }');
    const refused = await evgen(['alerts'], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/events\/_alerts\.json.*invalid JSON.*line 1/s);
    expect(refused.stdout).toBe('');
  });
});
