/**
 * The thresholds of the generated alert rules: defaults in code, overrides in the catalog's
 * `_alerts.json` (optional) — for every rule, per consumer, and per event type for processing
 * time. The file is validated as a whole; each problem names its JSON pointer and what to do.
 *
 *   {
 *     "defaults":  { <thresholds> },
 *     "consumers": { "<consumer>": { <consumer thresholds> } },
 *     "events":    { "<eventType>": { "processingP99Seconds": n } }
 *   }
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { pointerSegment } from '../../common/json-pointer.js';
import type { Catalog } from '../../catalog/model.js';
import { ProblemList } from '../../catalog/problem-list.js';
import { displayPath, readJsonFile } from '../../catalog/read-json-file.js';

/** A level that warns, then pages, each after holding for its duration. */
export interface TwoLevels {
  readonly warning: number;
  readonly critical: number;
  /** Prometheus duration the warning condition must hold (e.g. `5m`). */
  readonly warningFor: string;
  /** Prometheus duration the critical condition must hold (e.g. `2m`). */
  readonly criticalFor: string;
}

/** What can be set per consumer (and as a default for all). */
export interface ConsumerThresholds {
  /** Records waiting (summed over the consumer's owned partitions, retry topics included). */
  readonly consumerLag: TwoLevels;
  /** 99th percentile of handler time per event type, in seconds, over 5 minutes (held 10m). */
  readonly processingP99Seconds: number;
  /** Kafka rebalances (assignments received) per hour above which it warns. */
  readonly rebalancesPerHour: number;
  /** How long the circuit breaker may stay open before it pages. */
  readonly breakerOpenFor: string;
  /** Retry rate over 10m this many times the previous 10m's, while lag falls, warns. */
  readonly retryRiseFactor: number;
  /** How long a runner may be not ready (/readyz 503) before it warns. */
  readonly notReadyFor: string;
  /** Dead letters waiting in the broker (DLQ / DLT depth) above which it warns. */
  readonly deadLetterDepth: number;
  /** Broker redeliveries per minute (5m rate, RabbitMQ) above which it warns, held 10m. */
  readonly redeliveriesPerMinute: number;
  /** Seconds without an answered fetch (a Kafka consumer's poll) after which it warns, held 2m. */
  readonly pollStallSeconds: number;
}

/** Defaults: the consumer thresholds plus the outbox's and the relay's. */
export interface DefaultThresholds extends ConsumerThresholds {
  /** Age of the oldest unsent outbox row, in seconds. */
  readonly outboxOldestUnsentAgeSeconds: TwoLevels;
  /** Failed publish attempts per minute (5m rate) above which it warns. */
  readonly relayPublishFailuresPerMinute: number;
  /** RabbitMQ publishes nacked, lost with their channel or timed out, per minute (5m rate), held 5m. */
  readonly publishConfirmFailuresPerMinute: number;
}

export interface AlertThresholds {
  readonly defaults: DefaultThresholds;
  readonly consumers: Readonly<Record<string, ConsumerThresholds>>;
  /** Processing p99 per event type, where set (overrides the consumer's). */
  readonly events: Readonly<Record<string, { readonly processingP99Seconds: number }>>;
}

export const ALERTS_FILE_NAME = '_alerts.json';

export const DEFAULT_THRESHOLDS: DefaultThresholds = {
  consumerLag: { warning: 1_000, critical: 10_000, warningFor: '5m', criticalFor: '2m' },
  processingP99Seconds: 5,
  rebalancesPerHour: 6,
  breakerOpenFor: '5m',
  retryRiseFactor: 2,
  notReadyFor: '5m',
  deadLetterDepth: 100,
  redeliveriesPerMinute: 10,
  pollStallSeconds: 60,
  outboxOldestUnsentAgeSeconds: { warning: 60, critical: 600, warningFor: '5m', criticalFor: '2m' },
  relayPublishFailuresPerMinute: 1,
  publishConfirmFailuresPerMinute: 1,
};

const CONSUMER_KEYS = [
  'breakerOpenFor',
  'consumerLag',
  'deadLetterDepth',
  'notReadyFor',
  'pollStallSeconds',
  'processingP99Seconds',
  'rebalancesPerHour',
  'redeliveriesPerMinute',
  'retryRiseFactor',
] as const;
const DEFAULT_KEYS = [
  ...CONSUMER_KEYS,
  'outboxOldestUnsentAgeSeconds',
  'publishConfirmFailuresPerMinute',
  'relayPublishFailuresPerMinute',
].sort();
const LEVEL_KEYS = ['critical', 'criticalFor', 'warning', 'warningFor'];
const DURATION = /^[1-9][0-9]*(ms|s|m|h|d)$/;

/**
 * The thresholds for `catalog`: `<events>/_alerts.json` over the defaults, or the defaults when
 * the file does not exist. Throws a CatalogError listing every problem of the file.
 */
export async function loadAlertThresholds(
  catalog: Catalog,
  eventsDir: string = catalog.root,
): Promise<AlertThresholds> {
  const path = join(eventsDir, ALERTS_FILE_NAME);
  if (!existsSync(path)) return resolveThresholds(catalog, {}, displayPath(path));
  const problems = new ProblemList();
  const read = await readJsonFile(path, problems);
  problems.throwIfAny();
  if (!read.ok) throw new Error('unreachable: readJsonFile reported no problem');
  return resolveThresholds(catalog, read.value, displayPath(path));
}

/** Validates `value` (the parsed file) and merges it over the defaults. */
export function resolveThresholds(catalog: Catalog, value: unknown, file: string): AlertThresholds {
  const problems = new ProblemList();
  const fail = (pointer: string, code: string, message: string, hint: string) =>
    problems.add({ code, file, pointer, message, hint });

  const object = (
    input: unknown,
    pointer: string,
    what: string,
  ): Record<string, unknown> | undefined => {
    if (typeof input === 'object' && input !== null && !Array.isArray(input))
      return input as Record<string, unknown>;
    fail(pointer, 'alerts-not-object', `${what} must be a JSON object`, `write ${what} as { … }`);
    return undefined;
  };
  const onlyKeys = (
    input: Record<string, unknown>,
    pointer: string,
    allowed: readonly string[],
  ) => {
    for (const key of Object.keys(input).sort())
      if (!allowed.includes(key))
        fail(
          `${pointer}/${pointerSegment(key)}`,
          'alerts-unknown-key',
          `unknown key ${JSON.stringify(key)}`,
          `use one of ${allowed.join(', ')}`,
        );
  };
  const positive = (input: unknown, pointer: string): number | undefined => {
    if (typeof input === 'number' && Number.isFinite(input) && input > 0) return input;
    fail(
      pointer,
      'alerts-not-positive',
      `must be a positive number, got ${JSON.stringify(input)}`,
      'give a number above 0',
    );
    return undefined;
  };
  const duration = (input: unknown, pointer: string): string | undefined => {
    if (typeof input === 'string' && DURATION.test(input)) return input;
    fail(
      pointer,
      'alerts-bad-duration',
      `must be a Prometheus duration, got ${JSON.stringify(input)}`,
      'write a whole number and one unit: "30s", "5m", "2h"',
    );
    return undefined;
  };
  const levels = (input: unknown, pointer: string, base: TwoLevels): TwoLevels => {
    const given = object(input, pointer, pointer);
    if (given === undefined) return base;
    onlyKeys(given, pointer, LEVEL_KEYS);
    const merged = {
      warning:
        given.warning === undefined
          ? base.warning
          : (positive(given.warning, `${pointer}/warning`) ?? base.warning),
      critical:
        given.critical === undefined
          ? base.critical
          : (positive(given.critical, `${pointer}/critical`) ?? base.critical),
      warningFor:
        given.warningFor === undefined
          ? base.warningFor
          : (duration(given.warningFor, `${pointer}/warningFor`) ?? base.warningFor),
      criticalFor:
        given.criticalFor === undefined
          ? base.criticalFor
          : (duration(given.criticalFor, `${pointer}/criticalFor`) ?? base.criticalFor),
    };
    if (merged.warning >= merged.critical)
      fail(
        pointer,
        'alerts-levels-inverted',
        `warning (${merged.warning}) must be below critical (${merged.critical})`,
        'raise critical or lower warning',
      );
    return merged;
  };
  const consumerPart = <T extends ConsumerThresholds>(
    input: Record<string, unknown>,
    pointer: string,
    base: T,
  ): T => {
    const at = (key: string) => `${pointer}/${key}`;
    const pick = <K extends keyof T>(
      key: K,
      read: (v: unknown, p: string) => T[K] | undefined,
    ): T[K] =>
      input[key as string] === undefined
        ? base[key]
        : (read(input[key as string], at(key as string)) ?? base[key]);
    return {
      ...base,
      consumerLag: pick(
        'consumerLag',
        (v, p) => levels(v, p, base.consumerLag) as T['consumerLag'],
      ),
      processingP99Seconds: pick('processingP99Seconds', positive as never),
      rebalancesPerHour: pick('rebalancesPerHour', positive as never),
      breakerOpenFor: pick('breakerOpenFor', duration as never),
      retryRiseFactor: pick('retryRiseFactor', positive as never),
      notReadyFor: pick('notReadyFor', duration as never),
      deadLetterDepth: pick('deadLetterDepth', positive as never),
      redeliveriesPerMinute: pick('redeliveriesPerMinute', positive as never),
      pollStallSeconds: pick('pollStallSeconds', positive as never),
    };
  };

  const root = object(value, '', 'the alerts file') ?? {};
  onlyKeys(root, '', ['consumers', 'defaults', 'events']);
  let defaults: DefaultThresholds = DEFAULT_THRESHOLDS;
  if (root.defaults !== undefined) {
    const given = object(root.defaults, '/defaults', '"defaults"');
    if (given !== undefined) {
      onlyKeys(given, '/defaults', DEFAULT_KEYS);
      defaults = consumerPart(given, '/defaults', DEFAULT_THRESHOLDS);
      defaults = {
        ...defaults,
        outboxOldestUnsentAgeSeconds:
          given.outboxOldestUnsentAgeSeconds === undefined
            ? defaults.outboxOldestUnsentAgeSeconds
            : levels(
                given.outboxOldestUnsentAgeSeconds,
                '/defaults/outboxOldestUnsentAgeSeconds',
                DEFAULT_THRESHOLDS.outboxOldestUnsentAgeSeconds,
              ),
        relayPublishFailuresPerMinute:
          given.relayPublishFailuresPerMinute === undefined
            ? defaults.relayPublishFailuresPerMinute
            : (positive(
                given.relayPublishFailuresPerMinute,
                '/defaults/relayPublishFailuresPerMinute',
              ) ?? defaults.relayPublishFailuresPerMinute),
        publishConfirmFailuresPerMinute:
          given.publishConfirmFailuresPerMinute === undefined
            ? defaults.publishConfirmFailuresPerMinute
            : (positive(
                given.publishConfirmFailuresPerMinute,
                '/defaults/publishConfirmFailuresPerMinute',
              ) ?? defaults.publishConfirmFailuresPerMinute),
      };
    }
  }
  const known = new Map(catalog.consumers.map((consumer) => [consumer.name, consumer]));
  const consumers: Record<string, ConsumerThresholds> = {};
  for (const consumer of catalog.consumers) consumers[consumer.name] = defaults;
  if (root.consumers !== undefined) {
    const given = object(root.consumers, '/consumers', '"consumers"') ?? {};
    for (const [name, overrides] of Object.entries(given).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const pointer = `/consumers/${pointerSegment(name)}`;
      if (!known.has(name)) {
        fail(
          pointer,
          'alerts-unknown-consumer',
          `no consumer ${JSON.stringify(name)} in the catalog`,
          known.size === 0
            ? 'declare it in _consumers/ first'
            : `use one of ${[...known.keys()].join(', ')}`,
        );
        continue;
      }
      const part = object(overrides, pointer, pointer);
      if (part === undefined) continue;
      onlyKeys(part, pointer, CONSUMER_KEYS);
      consumers[name] = consumerPart(part, pointer, defaults);
    }
  }
  const subscribed = new Set(catalog.consumers.flatMap((consumer) => consumer.subscribes));
  const events: Record<string, { processingP99Seconds: number }> = {};
  if (root.events !== undefined) {
    const given = object(root.events, '/events', '"events"') ?? {};
    for (const [type, overrides] of Object.entries(given).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const pointer = `/events/${pointerSegment(type)}`;
      if (!subscribed.has(type)) {
        fail(
          pointer,
          'alerts-unknown-event',
          `no consumer in the catalog subscribes to ${JSON.stringify(type)}`,
          subscribed.size === 0
            ? 'processing thresholds apply to subscribed event types; subscribe a consumer first'
            : `use a subscribed event type: ${[...subscribed].sort().join(', ')}`,
        );
        continue;
      }
      const part = object(overrides, pointer, pointer);
      if (part === undefined) continue;
      onlyKeys(part, pointer, ['processingP99Seconds']);
      if (part.processingP99Seconds === undefined) continue;
      const p99 = positive(part.processingP99Seconds, `${pointer}/processingP99Seconds`);
      if (p99 !== undefined) events[type] = { processingP99Seconds: p99 };
    }
  }
  problems.throwIfAny();
  return { defaults, consumers, events };
}
