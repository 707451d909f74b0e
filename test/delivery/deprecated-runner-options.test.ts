/**
 * The old option shape, transport settings at the top level beside the shared options, still
 * works for one release: each runner reads its settings from there (a bad one is refused under
 * its top-level name) and says once per process, as a DeprecationWarning with code
 * EVGEN_FLAT_RUNNER_OPTIONS, to group them under its section. Every other test and the docs use
 * the grouped shape. In a file of its own: the warning is given once per runner and process.
 */
import {
  createKafkaConsumerRunner,
  createRabbitMqConsumerRunner,
  InProcessBroker,
  RunnerOptionsError,
  type KafkaConsumerRoutes,
} from 'evgen/runtime';
import { handler, rabbitRoutes } from './support/runner-option-fixtures.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkajsClient } from '../../src/runtime/kafka/kafkajs-client.js';

const kafkaRoutes: KafkaConsumerRoutes = {
  consumer: 'inventory-service',
  groupId: 'inventory-service',
  topics: ['order'],
  retry: [],
  deadLetter: 'inventory-service.dlt',
};

/** Nothing answers here: a runner that connected would not be created synchronously. */
const NOWHERE_AMQP = 'amqp://guest:guest@127.0.0.1:1';
const kafkaClient = kafkajsClient({ brokers: ['127.0.0.1:1'] });

const warnings: Error[] = [];
const record = (warning: Error) => warnings.push(warning);
beforeAll(() => process.on('warning', record));
afterAll(() => process.off('warning', record));

/** Warnings are emitted on the next tick. */
const emitted = () => new Promise<void>((resolve) => setImmediate(resolve));

const FLAT: readonly {
  readonly runner: string;
  readonly section: string;
  readonly create: (extra?: Record<string, unknown>) => { state: string; close?: () => void };
  /** A setting refused at the top level: [key, value]. */
  readonly bad: readonly [string, unknown];
}[] = [
  {
    runner: 'createRabbitMqConsumerRunner',
    section: 'rabbitmq',
    create: (extra = {}) =>
      createRabbitMqConsumerRunner({
        handler,
        connection: NOWHERE_AMQP,
        routes: rabbitRoutes,
        maxAttempts: 2,
        ...extra,
      }),
    bad: ['prefetch', 0],
  },
  {
    runner: 'createKafkaConsumerRunner',
    section: 'kafka',
    create: (extra = {}) =>
      createKafkaConsumerRunner({ handler, client: kafkaClient, routes: kafkaRoutes, ...extra }),
    bad: ['clientId', ''],
  },
  {
    runner: 'InProcessBroker',
    section: 'inProcess',
    create: (extra = {}) => new InProcessBroker({ autoStart: false, retryDelaysMs: [0], ...extra }),
    bad: ['unroutable', 'drop'],
  },
];

describe.each(FLAT)('$runner: the deprecated flat shape', ({ runner, section, create, bad }) => {
  it('still creates the runner, and warns once to group the settings', async () => {
    const before = warnings.length;
    const made = create();
    expect(made.state).toBe('new');
    made.close?.();
    create().close?.();
    await emitted();
    const own = warnings.slice(before);
    expect(own.map((warning) => [warning.name, (warning as { code?: string }).code])).toEqual([
      ['DeprecationWarning', 'EVGEN_FLAT_RUNNER_OPTIONS'],
    ]);
    expect(own[0]!.message).toContain(`${runner}: transport settings at the top level`);
    expect(own[0]!.message).toContain(`group them under \`${section}\``);
  });

  it('reads the settings from the top level: a bad one is refused under its own name', () => {
    const [key, value] = bad;
    let refused: unknown;
    try {
      create({ [key]: value });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(RunnerOptionsError);
    expect((refused as RunnerOptionsError).option).toBe(key);
    expect((refused as RunnerOptionsError).runner).toBe(runner);
  });
});
