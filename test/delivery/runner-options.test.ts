/**
 * Every runner's options are resolved one way (delivery/runner-options.ts): a value that cannot
 * work is refused when the runner is created, with a RunnerOptionsError naming the runner, the
 * option, the value and what is allowed — before anything connects (the RabbitMQ URL and Kafka
 * brokers below answer nothing; a runner that tried would not throw synchronously). The shared
 * options behave alike on every runner: `maxAttempts` is taken from the runner (the conformance
 * suite runs every transport with it, see support/transports.ts); here the in-process broker
 * shows an explicit value overriding the default and a dead letter after exactly that many.
 */
import {
  createKafkaConsumerRunner,
  createOutboxRelay,
  createRabbitMqConsumerRunner,
  InProcessBroker,
  NonRetryableError,
  RetryableError,
  RunnerOptionsError,
  UnavailableError,
  type Database,
  type KafkaConsumerRoutes,
  type Publisher,
} from 'evgen/runtime';
import { handler, rabbitRoutes } from './support/runner-option-fixtures.js';
import { kafkajsClient } from '../../src/runtime/kafka/kafkajs-client.js';
import { describe, expect, it } from 'vitest';

const kafkaRoutes: KafkaConsumerRoutes = {
  consumer: 'inventory-service',
  groupId: 'opts-inventory-service',
  topics: ['order.events'],
  retry: [{ topic: 'inventory-service.retry', delayMs: 100 }],
  deadLetter: 'inventory-service.dlt',
};

/** Nothing listens on port 1: a runner that connected at creation could not return. */
const NOWHERE_AMQP = 'amqp://guest:guest@127.0.0.1:1';
const kafkaClient = kafkajsClient({ brokers: ['127.0.0.1:1'] });

/** Shared options every consumer runner refuses alike: [option path, options, value]. */
const SHARED_BAD: readonly (readonly [string, Record<string, unknown>, unknown])[] = [
  ['maxAttempts', { maxAttempts: 0 }, 0],
  ['maxAttempts', { maxAttempts: 2.5 }, 2.5],
  ['maxAttempts', { maxAttempts: Number.NaN }, Number.NaN],
  ['messageLimits.maxBytes', { messageLimits: { maxBytes: 0 } }, 0],
  ['messageLimits.maxDepth', { messageLimits: { maxDepth: -3 } }, -3],
  ['circuitBreaker.backoff.baseMs', { circuitBreaker: { backoff: { baseMs: -1 } } }, -1],
  [
    'circuitBreaker.backoff.capMs',
    { circuitBreaker: { backoff: { baseMs: 1_000, capMs: 10 } } },
    10,
  ],
  ['circuitBreaker.backoff.jitter', { circuitBreaker: { backoff: { jitter: 2 } } }, 2],
  ['circuitBreaker.healthCheck', { circuitBreaker: { healthCheck: 'SELECT 1' } }, 'SELECT 1'],
  ['classify', { classify: 'retryable' }, 'retryable'],
  ['onEvent', { onEvent: 42 }, 42],
  ['now', { now: 1_700_000_000_000 }, 1_700_000_000_000],
  ['random', { random: 0.5 }, 0.5],
  ['timers', { timers: { setTimeout: () => 1 } }, { setTimeout: expect.any(Function) }],
];

interface RunnerUnderTest {
  readonly runner: string;
  readonly create: (extra: Record<string, unknown>) => unknown;
  /** Options only this runner has, refused: [option path, options, value, allowed]. */
  readonly own: readonly (readonly [string, Record<string, unknown>, unknown, RegExp])[];
}

const RUNNERS: readonly RunnerUnderTest[] = [
  {
    runner: 'createRabbitMqConsumerRunner',
    create: (extra) =>
      createRabbitMqConsumerRunner({
        connection: NOWHERE_AMQP,
        routes: rabbitRoutes,
        handler,
        ...extra,
      }),
    own: [
      ['prefetch', { prefetch: 0 }, 0, /positive integer/],
      ['gapWaitMs', { gapWaitMs: -1 }, -1, /≥ 0/],
      ['reconnectBackoff.jitter', { reconnectBackoff: { jitter: -0.5 } }, -0.5, /between 0 and 1/],
      ['connection', { connection: '' }, '', /AMQP URL/],
      ['handler', { handler: undefined }, undefined, /name and handle/],
      ['handler.handle', { handler: { name: 'x', handle: 'no' } }, 'no', /a function/],
      [
        'maxAttempts',
        { routes: { ...rabbitRoutes, tiers: [] }, maxAttempts: 3 },
        3,
        /no retry tier/,
      ],
    ],
  },
  {
    runner: 'createKafkaConsumerRunner',
    create: (extra) =>
      createKafkaConsumerRunner({
        client: kafkaClient,
        routes: kafkaRoutes,
        handler,
        ...extra,
      }),
    own: [
      ['partitionConcurrency', { partitionConcurrency: 0 }, 0, /positive integer/],
      ['sessionTimeoutMs', { sessionTimeoutMs: -5 }, -5, /positive number/],
      ['commitIntervalMs', { commitIntervalMs: -1 }, -1, /≥ 0/],
      ['rebalanceTimeoutMs', { rebalanceTimeoutMs: Infinity }, Infinity, /positive number/],
      ['strictBackoff.capMs', { strictBackoff: { capMs: -1 } }, -1, /≥ 0/],
      ['settleBackoff.baseMs', { settleBackoff: { baseMs: Number.NaN } }, Number.NaN, /≥ 0/],
      ['clientId', { clientId: '' }, '', /non-empty string/],
      ['routes.topics', { routes: { ...kafkaRoutes, topics: [] } }, [], /at least one/],
      [
        'routes.topics',
        { routes: { ...kafkaRoutes, topics: ['inventory-service.dlt'] } },
        'inventory-service.dlt',
        /not also a retry or dead-letter topic/,
      ],
      ['routes.maxAttempts', { routes: { ...kafkaRoutes, maxAttempts: 0 } }, 0, /positive/],
      ['client', { client: {} }, {}, /Kafka client adapter/],
      ['handler.name', { handler: { name: '', handle: () => 1 } }, '', /non-empty string/],
    ],
  },
  {
    runner: 'InProcessBroker',
    create: (extra) => new InProcessBroker({ autoStart: false, ...extra }),
    own: [
      ['retryDelaysMs[1]', { retryDelaysMs: [0, -10] }, -10, /≥ 0/],
      ['retryDelaysMs', { retryDelaysMs: 5 }, 5, /an array/],
      ['maxAttempts', { retryDelaysMs: [], maxAttempts: 2 }, 2, /retryDelaysMs is empty/],
      ['unroutable', { unroutable: 'drop' }, 'drop', /one of 'reject', 'accept'/],
      ['autoStart', { autoStart: 'yes' }, 'yes', /true or false/],
    ],
  },
];

function refusal(create: () => unknown): RunnerOptionsError {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(RunnerOptionsError);
    expect(error).toBeInstanceOf(RangeError);
    return error as RunnerOptionsError;
  }
  throw new Error('the options were accepted');
}

describe.each(RUNNERS)('$runner options', ({ runner, create, own }) => {
  it.each(SHARED_BAD)('refuses the shared option %s = %j', (option, extra, value) => {
    const error = refusal(() => create(extra));
    expect(error.runner).toBe(runner);
    expect(error.option).toBe(option);
    expect(error.value).toStrictEqual(value);
    expect(error.message).toMatch(
      new RegExp(`^${runner.replace('$', '\\$')}: ${escape(option)} must be .+, got .+$`),
    );
  });

  it.each(own)('refuses its own option %s', (option, extra, value, allowed) => {
    const error = refusal(() => create(extra));
    expect(error.option).toBe(option);
    expect(error.value).toStrictEqual(value);
    expect(error.allowed).toMatch(allowed);
    expect(error.message).toContain(`${runner}: ${option} must be ${error.allowed}, got `);
  });

  it('takes valid options, an explicit undefined as the default', () => {
    const made = create({
      maxAttempts: undefined,
      messageLimits: { maxBytes: Infinity, maxDepth: undefined },
      circuitBreaker: { backoff: { baseMs: 0, capMs: 0, jitter: 0 } },
      onEvent: undefined,
    }) as { state: string; close?: () => void };
    expect(made.state).toBe('new');
    made.close?.();
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the shared maxAttempts', () => {
  it('overrides the transport default (retry delays + 1) and dead-letters after exactly that many', async () => {
    const seen: number[] = [];
    // One delay: the default would be 2 attempts; the shared option asks for 4.
    const broker = new InProcessBroker({ retryDelaysMs: [0], maxAttempts: 4 });
    broker.subscribe({
      name: 'inventory-service',
      subscribes: ['order.OrderCancelled'],
      handle: (_raw, context) => {
        seen.push(context!.attempt);
        return Promise.reject(new RetryableError('database busy'));
      },
    });
    broker.publishRaw({
      messageId: '0190a1b2-0000-7000-8000-000000000001',
      eventType: 'order.OrderCancelled',
      body: JSON.stringify({
        messageId: '0190a1b2-0000-7000-8000-000000000001',
        eventType: 'order.OrderCancelled',
        schemaVersion: 1,
        aggregateType: 'order',
        aggregateId: 'o-1',
        occurredAt: '2026-01-01T00:00:00.000Z',
        payload: {},
      }),
      headers: {},
    });
    await broker.settled();
    broker.close();
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(broker.deadLettered.map((letter) => letter.attempts)).toEqual([4]);
    expect(broker.metrics()).toMatchObject({ retried: 3, deadLettered: 1 });
  });

  it('a non-retryable failure is dead-lettered at once whatever maxAttempts says', async () => {
    const broker = new InProcessBroker({ retryDelaysMs: [0], maxAttempts: 5 });
    broker.subscribe({
      name: 'inventory-service',
      subscribes: ['order.OrderCancelled'],
      handle: () => Promise.reject(new NonRetryableError('unknown sku')),
    });
    broker.publishRaw({
      messageId: '0190a1b2-0000-7000-8000-000000000002',
      eventType: 'order.OrderCancelled',
      body: JSON.stringify({
        messageId: '0190a1b2-0000-7000-8000-000000000002',
        eventType: 'order.OrderCancelled',
        schemaVersion: 1,
        aggregateType: 'order',
        aggregateId: 'o-2',
        occurredAt: '2026-01-01T00:00:00.000Z',
        payload: {},
      }),
      headers: {},
    });
    await broker.settled();
    broker.close();
    expect(broker.deadLettered.map((letter) => letter.attempts)).toEqual([1]);
  });
});

/** Each runner with its transport settings grouped, as `{ …shared, [section]: settings }`. */
const GROUPED: readonly {
  readonly runner: string;
  readonly section: string;
  readonly create: (settings: Record<string, unknown>, extra?: Record<string, unknown>) => unknown;
  readonly valid: Record<string, unknown>;
  /** A setting refused inside the section: [key, value]. */
  readonly bad: readonly [string, unknown];
}[] = [
  {
    runner: 'createRabbitMqConsumerRunner',
    section: 'rabbitmq',
    create: (settings, extra = {}) =>
      createRabbitMqConsumerRunner({ handler, rabbitmq: settings, ...extra } as never),
    valid: { connection: NOWHERE_AMQP, routes: rabbitRoutes, prefetch: 5 },
    bad: ['prefetch', 0],
  },
  {
    runner: 'createKafkaConsumerRunner',
    section: 'kafka',
    create: (settings, extra = {}) =>
      createKafkaConsumerRunner({ handler, kafka: settings, ...extra } as never),
    valid: { client: kafkaClient, routes: kafkaRoutes, partitionConcurrency: 2 },
    bad: ['clientId', ''],
  },
  {
    runner: 'InProcessBroker',
    section: 'inProcess',
    create: (settings, extra = {}) => new InProcessBroker({ inProcess: settings, ...extra }),
    valid: { autoStart: false, retryDelaysMs: [0] },
    bad: ['unroutable', 'drop'],
  },
];

describe.each(GROUPED)(
  '$runner: settings grouped under $section',
  ({ runner, section, create, valid, bad }) => {
    it('takes the grouped shape beside the shared options', () => {
      const made = create(valid, { maxAttempts: 2 }) as { state: string; close?: () => void };
      expect(made.state).toBe('new');
      made.close?.();
    });

    it('names the grouped path of a refused setting', () => {
      const [key, value] = bad;
      const error = refusal(() => create({ ...valid, [key]: value }));
      expect(error.runner).toBe(runner);
      expect(error.option).toBe(`${section}.${key}`);
      expect(error.value).toStrictEqual(value);
    });

    it('refuses a setting given both grouped and at the top level (the old shape)', () => {
      const [key] = Object.keys(valid);
      const error = refusal(() => create(valid, { [key!]: valid[key!] }));
      expect(error.option).toBe(key);
      expect(error.allowed).toBe(
        `given in ${section}.${key} (beside ${section}, not at the top level)`,
      );
    });

    it('refuses a section that is not an object', () => {
      const error = refusal(() => create('settings' as never));
      expect(error.option).toBe(section);
    });
  },
);

describe('the shared clock, random and timers seams', () => {
  it('schedule the breaker’s pause and the retries on the given timers, with the given jitter', async () => {
    const scheduled: { ms: number; run: () => void; cleared: boolean }[] = [];
    const timers = {
      setTimeout: (run: () => void, ms: number) => {
        const entry = { ms, run, cleared: false };
        scheduled.push(entry);
        return entry;
      },
      clearTimeout: (handle: unknown) => {
        (handle as { cleared: boolean }).cleared = true;
      },
    };
    /** Runs the pending timers of `ms` (what they schedule waits for the next call). */
    const fire = async (ms: number) => {
      const due = scheduled.filter((entry) => !entry.cleared && entry.ms === ms);
      for (const entry of due) {
        entry.cleared = true;
        entry.run();
      }
      await new Promise((resolve) => setImmediate(resolve));
      return due.length;
    };
    const events: string[] = [];
    const broker = new InProcessBroker({
      inProcess: { retryDelaysMs: [60_000] },
      circuitBreaker: { backoff: { baseMs: 1_000, capMs: 1_000, jitter: 1 } },
      random: () => 0.25,
      timers,
      onEvent: (event) => {
        if (event.type === 'paused') events.push(`paused ${event.delayMs}`);
        if (event.type === 'resumed') events.push('resumed');
      },
    });
    const attempts: number[] = [];
    broker.subscribe({
      name: 'inventory-service',
      subscribes: ['order.OrderCancelled'],
      handle: (_raw, context) => {
        attempts.push(context!.attempt);
        if (attempts.length === 1) return Promise.reject(new UnavailableError('db down'));
        if (attempts.length === 2) return Promise.reject(new RetryableError('database busy'));
        return Promise.resolve();
      },
    });
    broker.publishRaw({
      messageId: '0190a1b2-0000-7000-8000-000000000003',
      eventType: 'order.OrderCancelled',
      body: JSON.stringify({
        messageId: '0190a1b2-0000-7000-8000-000000000003',
        eventType: 'order.OrderCancelled',
        schemaVersion: 1,
        aggregateType: 'order',
        aggregateId: 'o-3',
        occurredAt: '2026-01-01T00:00:00.000Z',
        payload: {},
      }),
      headers: {},
    });
    expect(scheduled.map((entry) => entry.ms)).toEqual([0]);
    // Started on construction; running once the opening's promise settled.
    await new Promise((resolve) => setImmediate(resolve));
    expect(broker.state).toBe('running');
    expect(await fire(0)).toBe(1);
    await broker.waitFor(() => events.length === 1);
    // 1 000 ms base plus jitter 1 × random 0.25: the pause is 1 250 ms, on the given timers.
    expect(events).toEqual(['paused 1250']);
    expect(scheduled.some((entry) => entry.ms === 1_250 && !entry.cleared)).toBe(true);
    expect(await fire(1_250)).toBe(1);
    await broker.waitFor(() => events.includes('resumed'));
    expect(await fire(0)).toBe(1);
    await broker.waitFor(() => attempts.length === 2);
    await broker.waitFor(() => scheduled.some((entry) => entry.ms === 60_000 && !entry.cleared));
    // The retry waits for its 60 s timer: nothing runs until the test fires it.
    expect(attempts).toEqual([1, 1]);
    expect(await fire(60_000)).toBe(1);
    await broker.settled();
    broker.close();
    expect(broker.consumed.map((record) => record.attempt)).toEqual([2]);
    expect(broker.retried.map((record) => record.delayMs)).toEqual([60_000]);
  });
});

describe('createOutboxRelay options (the same checks)', () => {
  const db = {} as Database;
  const publisher: Publisher = { publish: () => Promise.resolve() };
  it.each([
    ['batchSize', { batchSize: 0.5 }, 0.5],
    ['maxAttempts', { maxAttempts: 0 }, 0],
    ['maxInFlight', { maxInFlight: -1 }, -1],
    ['concurrency', { concurrency: 0 }, 0],
    ['leaseMs', { leaseMs: Infinity }, Infinity],
    ['backoff.jitter', { backoff: { jitter: 1.5 } }, 1.5],
    ['unavailableBackoff.capMs', { unavailableBackoff: { baseMs: 500, capMs: 100 } }, 100],
    ['random', { random: 0.5 }, 0.5],
    ['classify', { classify: {} }, {}],
  ] as const)('refuses %s', (option, extra, value) => {
    const error = refusal(() => createOutboxRelay({ db, publisher, ...extra } as never));
    expect(error.runner).toBe('createOutboxRelay');
    expect(error.option).toBe(option);
    expect(error.value).toStrictEqual(value);
  });
});
