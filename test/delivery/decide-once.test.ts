/**
 * Failures are decided once: one classifier (delivery/failure.ts, with the user's `classify`
 * hook) for the consumers' pipeline and the outbox relay, and the pipeline alone says retry or
 * dead letter; a transport only places a retry (a tier, a retry topic, in place). Table tests:
 * the same error gets the same answer from the pipeline and the relay, and a retry outcome
 * becomes a dead letter only when its copy could not be sent.
 */
import type { ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { NonRetryableError, RetryableError, UnavailableError } from '../../src/runtime/errors.js';
import { createDeliveryPipeline } from '../../src/runtime/delivery/delivery-pipeline.js';
import type { DeliveryOutcome } from '../../src/runtime/delivery/delivery-outcome.js';
import { DeliveryCounters } from '../../src/runtime/delivery/delivery-outcome.js';
import {
  classifyFailure,
  type FailureClass,
  type FailureClassifier,
} from '../../src/runtime/delivery/failure.js';
import type { FailedOutcome } from '../../src/runtime/delivery/outcome-settlement.js';
import { relayDecision } from '../../src/runtime/outbox/record-failure.js';
import { placeRetry } from '../../src/runtime/kafka/consumer/failure-routing.js';
import { createAmqpSettler } from '../../src/runtime/rabbitmq/amqp-settler.js';
import type { ConfirmedPublisher } from '../../src/runtime/rabbitmq/confirmed-publisher.js';
import type { ConsumerRoutes } from '../../src/runtime/rabbitmq/topology.js';

const MAX_ATTEMPTS = 3;

/** A user hook: quota errors are never worth retrying, whatever they say of themselves. */
const classify: FailureClassifier = (error) =>
  error instanceof Error && error.message.includes('quota') ? 'non-retryable' : undefined;

const ERRORS: readonly {
  readonly name: string;
  readonly error: unknown;
  readonly expected: FailureClass;
  /** With the user's hook, when it decides otherwise. */
  readonly hooked?: FailureClass;
}[] = [
  { name: 'RetryableError', error: new RetryableError('busy'), expected: 'retryable' },
  { name: 'NonRetryableError', error: new NonRetryableError('illegal'), expected: 'non-retryable' },
  { name: 'a plain Error', error: new Error('boom'), expected: 'retryable' },
  {
    name: 'a plain error saying retryable: false',
    error: Object.assign(new Error('refused'), { retryable: false }),
    expected: 'non-retryable',
  },
  {
    name: 'a plain object saying retryable: false',
    error: { message: 'refused', retryable: false },
    expected: 'non-retryable',
  },
  { name: 'UnavailableError', error: new UnavailableError('db down'), expected: 'unavailable' },
  {
    // A record the broker refuses for what it is, inside an outage-looking wrapper: never an outage.
    name: 'a record the broker refuses (MESSAGE_TOO_LARGE) inside an unavailable error',
    error: new UnavailableError('send failed', {
      cause: Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' }),
    }),
    expected: 'non-retryable',
  },
  {
    name: 'a unique violation (23505)',
    error: Object.assign(new Error('duplicate key'), { code: '23505' }),
    expected: 'non-retryable',
  },
  {
    name: 'a serialization failure (40001)',
    error: Object.assign(new Error('could not serialize'), { code: '40001' }),
    expected: 'retryable',
  },
  {
    name: 'a retryable quota error, with a hook that says otherwise',
    error: new RetryableError('quota exceeded'),
    expected: 'retryable',
    hooked: 'non-retryable',
  },
];

describe('one classifier, with the user hook', () => {
  it.each(ERRORS)('$name', ({ error, expected, hooked }) => {
    expect(classifyFailure(error)).toBe(expected);
    expect(classifyFailure(error, classify)).toBe(hooked ?? expected);
    // A hook that answers nothing (or nonsense) leaves the decision to evgen.
    expect(classifyFailure(error, () => undefined)).toBe(expected);
    expect(classifyFailure(error, () => 'maybe' as FailureClass)).toBe(expected);
  });

  it('a gap (AggregateVersionGapError) is its own class', () => {
    expect(classifyFailure({ code: 'AggregateVersionGapError' })).toBe('gap');
  });
});

async function outcomeOf(error: unknown, attempt: number, hook?: FailureClassifier) {
  const pipeline = createDeliveryPipeline({
    handler: {
      name: 'c',
      handle: async () => {
        throw error;
      },
    },
    maxAttempts: MAX_ATTEMPTS,
    classify: hook,
  });
  return pipeline.process({
    body: Buffer.from(JSON.stringify({ messageId: 'm-1', eventType: 'order.Tested' })),
    attempt,
    facts: { transport: 'in-process', redelivered: attempt > 1, headers: {} },
  });
}

describe('the pipeline decides, and the relay decides the same for the same error', () => {
  const rows = ERRORS.flatMap((row) =>
    [1, MAX_ATTEMPTS].flatMap((attempt) => [
      { ...row, attempt, hook: undefined, cls: row.expected },
      { ...row, attempt, hook: classify, cls: row.hooked ?? row.expected },
    ]),
  );
  it.each(rows)('$name, attempt $attempt, hook: $hook', async ({ error, attempt, hook, cls }) => {
    const outcome = await outcomeOf(error, attempt, hook);
    const expected: DeliveryOutcome['kind'] =
      cls === 'unavailable'
        ? 'unavailable'
        : cls === 'non-retryable' || attempt >= MAX_ATTEMPTS
          ? 'dead-letter'
          : 'retry';
    expect(outcome.kind).toBe(expected);
    expect(relayDecision(error, attempt, MAX_ATTEMPTS, hook)).toBe(
      ({ unavailable: 'outage', 'dead-letter': 'dead', retry: 'retry' } as const)[expected],
    );
    if (outcome.kind === 'dead-letter')
      expect(outcome.letter.reason).toBe(
        cls === 'non-retryable' ? 'non-retryable' : 'attempts-exhausted',
      );
  });
});

describe('a retry outcome becomes a dead letter only when its copy could not be sent', () => {
  const routes = {
    consumer: 'c',
    queue: 'c.work',
    retryExchange: 'c.retry',
    deadRoutingKey: 'c.dead',
    maxAttempts: MAX_ATTEMPTS,
    tiers: [{ delayMs: 100, queue: 'c.retry.100', routingKey: 'c.retry.100' }],
  } as unknown as ConsumerRoutes;
  const message = {
    content: Buffer.from('{"messageId":"m-1"}'),
    fields: { exchange: 'order', routingKey: 'order.tested', redelivered: false, deliveryTag: 1 },
    properties: { headers: {}, messageId: 'm-1' },
  } as unknown as ConsumeMessage;

  async function settleOverAmqp(outcome: FailedOutcome, copyFails: boolean) {
    const published: string[] = [];
    const publisher = {
      publish: async (_exchange: string, routingKey: string) => {
        if (copyFails && routingKey !== routes.deadRoutingKey) throw new Error('nack');
        published.push(routingKey);
      },
    } as unknown as ConfirmedPublisher;
    const counters = new DeliveryCounters();
    let acked = 0;
    const settled = await createAmqpSettler({
      routes,
      counters,
      counts: { settleFailures: 0, gapWaits: 0 },
      emit: () => undefined,
    })({ publisher, message, attempt: 1, ack: () => acked++ }, outcome);
    return { settled, published, counters: counters.snapshot(), acked };
  }

  const retries = ERRORS.filter((row) => row.expected === 'retryable');
  it.each(retries)('$name: a retry copy over AMQP, or a dead letter if it fails', async (row) => {
    const outcome = await outcomeOf(row.error, 1);
    expect(outcome.kind).toBe('retry');
    const sent = await settleOverAmqp(outcome as FailedOutcome, false);
    expect(sent).toMatchObject({ settled: true, acked: 1, published: ['c.retry.100'] });
    expect(sent.counters).toMatchObject({ retried: 1, deadLettered: 0 });
    const failed = await settleOverAmqp(outcome as FailedOutcome, true);
    expect(failed).toMatchObject({ settled: true, acked: 1, published: ['c.dead'] });
    expect(failed.counters).toMatchObject({ retried: 0, deadLettered: 1 });
  });

  it('a retry placed on Kafka is never a dead letter, with or without retry topics', () => {
    for (const tiers of [[], [{ topic: 'c.retry', delayMs: 100 }]])
      for (const strict of [false, true])
        expect(placeRetry({ attempt: 1, strict, tiers, now: 0 }).kind).toMatch(/^retry-/);
  });
});
