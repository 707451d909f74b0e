/**
 * The Kafka consumer runner's routing logic over an in-memory stand-in of the transport
 * interface (the real-broker behaviour — rebalances, restarts, kills — is in the *.broker tests).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NonRetryableError, RetryableError } from '../../src/runtime/errors.js';
import type { MessageHandler } from '../../src/runtime/delivery/message-handler.js';
import {
  KAFKA_CONSUMER_HEADERS as H,
  SPRING_DLT_HEADERS as S,
} from '../../src/runtime/kafka/consumer/consumer-headers.js';
import { createKafkaConsumerRunner } from '../../src/runtime/kafka/consumer/kafka-consumer-runner.js';
import type {
  KafkaConsumerRoutes,
  KafkaConsumerRunner,
  KafkaConsumerRunnerEvent,
} from '../../src/runtime/kafka/consumer/kafka-consumer-types.js';
import { MemoryKafka } from './support/memory-kafka.js';

const routes: KafkaConsumerRoutes = {
  consumer: 'inventory-service',
  groupId: 'inventory-service',
  topics: ['order.events'],
  retry: [
    { topic: 'inventory-service.retry.100ms', delayMs: 100 },
    { topic: 'inventory-service.retry.200ms', delayMs: 200 },
  ],
  deadLetter: 'inventory-service.dlt',
  strictEventTypes: ['order.OrderPaid'],
};

function envelope(overrides: Record<string, unknown> = {}) {
  return {
    messageId: randomUUID(),
    eventType: 'order.OrderCreated',
    schemaVersion: 2,
    aggregateType: 'Order',
    aggregateId: `o-${randomUUID().slice(0, 8)}`,
    occurredAt: '2026-01-01T00:00:00.000Z',
    traceId: 'trace-1',
    payload: {},
    ...overrides,
  };
}

const waitFor = async (condition: () => boolean, ms = 5_000) => {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('Kafka consumer runner routing (in-memory transport)', () => {
  let kafka: MemoryKafka;
  let runner: KafkaConsumerRunner | undefined;
  let events: KafkaConsumerRunnerEvent[];

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
  });

  async function start(
    handle: MessageHandler['handle'],
    partitions = 1,
    now?: () => number,
    commitIntervalMs?: number,
  ) {
    kafka = new MemoryKafka();
    kafka.createTopic('order.events', partitions);
    for (const tier of routes.retry) kafka.createTopic(tier.topic, partitions);
    kafka.createTopic(routes.deadLetter, partitions);
    events = [];
    runner = createKafkaConsumerRunner({
      handler: { name: 'inventory-service', handle },
      onEvent: (event) => events.push(event),
      now,
      kafka: {
        client: kafka,
        routes,
        strictBackoff: { baseMs: 20, capMs: 50, jitter: 0 },
        settleBackoff: { baseMs: 10, capMs: 40 },
        ...(commitIntervalMs === undefined ? {} : { commitIntervalMs }),
      },
    });
    await runner.start();
  }

  function publish(body: unknown, headers: Record<string, string> = {}, key?: string) {
    const value = typeof body === 'string' ? body : JSON.stringify(body);
    const id = (body as { messageId?: string }).messageId;
    kafka.append({
      topic: 'order.events',
      key: key ?? (body as { aggregateId?: string }).aggregateId ?? 'k',
      value,
      headers: { ...(id !== undefined ? { messageId: id } : {}), ...headers },
    });
  }

  const committed = (topic: string, partition = 0) =>
    kafka.committed.get(`inventory-service/${topic}:${partition}`);

  it('commits offset + 1 only once the handler resolved, and counts duplicates', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen = new Set<string>();
    let entered = 0;
    await start(async (raw) => {
      const id = (raw as { messageId: string }).messageId;
      entered++;
      await gate;
      if (seen.has(id)) return 'duplicate';
      seen.add(id);
      return 'handled';
    });
    const e = envelope();
    publish(e);
    publish(e); // the same messageId again: the inbox absorbs it
    // The first in the handler, the second (same key) waiting behind it.
    await waitFor(() => entered === 1 && runner!.inFlight === 2);
    await runner!.flushCommits();
    expect(committed('order.events')).toBeUndefined();
    release();
    await waitFor(() => runner!.metrics().handled === 2);
    await runner!.flushCommits();
    expect(committed('order.events')).toBe('2');
    expect(runner!.metrics()).toMatchObject({
      handled: 2,
      duplicates: 1,
      retried: 0,
      deadLettered: 0,
    });
  });

  it('commits a stream of records in one request per commitIntervalMs (100 ms by default), the first at once', async () => {
    await start(async () => {
      await new Promise((r) => setImmediate(r));
      return 'handled';
    });
    // A lone record after a quiet spell is committed at once, without a flush.
    publish(envelope());
    await waitFor(() => committed('order.events') === '1', 1_000);
    expect(runner!.metrics().commits).toBe(1);
    // 300 records in a burst: their positions ride on a few requests, none past a record not
    // settled; the last position is stored within an interval, again without a flush.
    const started = performance.now();
    for (let i = 0; i < 300; i++) publish(envelope());
    await waitFor(() => runner!.metrics().handled === 301);
    await waitFor(() => committed('order.events') === '301', 1_000);
    const elapsedMs = performance.now() - started;
    expect(runner!.metrics().commits).toBeLessThanOrEqual(2 + Math.ceil(elapsedMs / 100));
    expect(runner!.metrics().commits).toBeLessThan(20);
  });

  it('commitIntervalMs 0: the next commit goes out as soon as the one before is answered', async () => {
    await start(
      async () => {
        await new Promise((r) => setImmediate(r));
        return 'handled';
      },
      1,
      undefined,
      0,
    );
    for (let i = 0; i < 100; i++) publish(envelope());
    await waitFor(() => runner!.metrics().handled === 100);
    await runner!.flushCommits();
    expect(committed('order.events')).toBe('100');
    expect(runner!.metrics().commits).toBeGreaterThan(10);
  });

  it('sends a retryable failure through the retry tiers (same key, value, messageId) and handles it when due', async () => {
    const attempts: number[] = [];
    await start(async () => {
      attempts.push(attempts.length + 1);
      if (attempts.length < 3) throw new RetryableError('database busy');
      return 'handled';
    });
    const e = envelope();
    publish(e, { traceparent: '00-abc-def-01' });
    await waitFor(() => runner!.metrics().handled === 1);
    const [first] = kafka.records(routes.retry[0]!.topic);
    const [second] = kafka.records(routes.retry[1]!.topic);
    for (const copy of [first!, second!]) {
      expect(copy.key).toBe(e.aggregateId);
      expect(copy.value?.toString()).toBe(JSON.stringify(e));
      expect(copy.headers.messageId).toBe(e.messageId);
      expect(copy.headers.traceparent).toBe('00-abc-def-01');
      expect(copy.headers[H.originalTopic]).toBe('order.events');
      expect(copy.headers[H.originalOffset]).toBe('0');
      expect(copy.headers[H.lastErrorType]).toBe('RetryableError');
    }
    expect(first!.headers[H.attempt]).toBe('2');
    expect(second!.headers[H.attempt]).toBe('3');
    expect(second!.headers[H.firstFailureAt]).toBe(first!.headers[H.firstFailureAt]);
    // Due one tier delay after the failure.
    for (const [copy, delayMs] of [
      [first!, 100],
      [second!, 200],
    ] as const) {
      const due = Date.parse(copy.headers[H.retryDueAt]!);
      expect(due - Date.parse(copy.headers[H.lastFailureAt]!)).toBe(delayMs);
    }
    const handledAt = events.find((ev) => ev.type === 'handled');
    expect(handledAt).toMatchObject({ attempt: 3, topic: routes.retry[1]!.topic });
    await runner!.flushCommits();
    expect(committed('order.events')).toBe('1');
    expect(committed(routes.retry[0]!.topic)).toBe('1');
    expect(committed(routes.retry[1]!.topic)).toBe('1');
    expect(runner!.metrics()).toMatchObject({ handled: 1, retried: 2, deadLettered: 0 });
  });

  it('a copy waiting out its delay never holds up the main topic', async () => {
    const handled: string[] = [];
    // The runner's clock stands still until the later records are handled, so the copy is not
    // due before then however slowly a loaded machine publishes them.
    let frozenAt: number | undefined = Date.now();
    await start(
      async (raw) => {
        const e = raw as { messageId: string; payload: { n: number } };
        if (e.payload.n === 0 && !handled.includes('retry-0')) {
          handled.push('retry-0');
          throw new RetryableError('later');
        }
        handled.push(`n${e.payload.n}`);
        return 'handled';
      },
      1,
      () => frozenAt ?? Date.now(),
    );
    publish(envelope({ payload: { n: 0 } }));
    await waitFor(() => kafka.records(routes.retry[0]!.topic).length === 1);
    for (let n = 1; n <= 5; n++) publish(envelope({ payload: { n } }));
    await waitFor(() => handled.length === 6);
    frozenAt = undefined;
    await waitFor(() => handled.length === 7);
    // All five later records were handled while the copy waited its 100 ms.
    expect(handled).toEqual(['retry-0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n0']);
  });

  it('dead-letters after the last attempt with diagnostics (evgen headers and Spring kafka_dlt-*, original coordinates)', async () => {
    await start(async () => {
      throw new RetryableError('still down');
    });
    const e = envelope();
    publish(envelope()); // offset 0: also dead-lettered, moves e to offset 1
    publish(e);
    await waitFor(() => runner!.metrics().deadLettered === 2);
    const letter = kafka
      .records(routes.deadLetter)
      .find((r) => r.headers.messageId === e.messageId)!;
    const raw = letter.rawHeaders;
    expect(letter.key).toBe(e.aggregateId);
    expect(letter.value?.toString()).toBe(JSON.stringify(e));
    expect(letter.headers[H.attempts]).toBe('3');
    expect(letter.headers[H.errorType]).toBe('RetryableError');
    expect(letter.headers[H.errorMessage]).toBe('still down');
    expect(letter.headers[H.consumer]).toBe('inventory-service');
    expect(letter.headers[H.traceId]).toBe('trace-1');
    expect(Date.parse(letter.headers[H.firstFailureAt]!)).toBeLessThan(
      Date.parse(letter.headers[H.lastFailureAt]!),
    );
    // Spring Kafka's names and encodings; the original is the main-topic record, not a retry copy.
    expect(raw[S.originalTopic]).toBe('order.events');
    expect((raw[S.originalPartition] as Buffer).readInt32BE(0)).toBe(0);
    expect((raw[S.originalOffset] as Buffer).readBigInt64BE(0)).toBe(1n);
    const mainRecord = kafka.records('order.events')[1]!;
    expect((raw[S.originalTimestamp] as Buffer).readBigInt64BE(0)).toBe(
      BigInt(mainRecord.timestamp),
    );
    expect(raw[S.exceptionFqcn]).toBe('RetryableError');
    expect(raw[S.exceptionMessage]).toBe('still down');
    expect(String(raw[S.exceptionStacktrace])).toContain('RetryableError: still down');
    expect(raw[S.originalConsumerGroup]).toBe('inventory-service');
    await runner!.flushCommits();
    expect(committed('order.events')).toBe('2');
    expect(runner!.metrics()).toMatchObject({ retried: 4, deadLettered: 2, handled: 0 });
  });

  it('sends non-retryable failures and malformed records straight to the dead-letter topic', async () => {
    await start(async () => {
      throw new NonRetryableError('illegal state');
    });
    // One key: records of different keys are handled concurrently, their letters in any order.
    publish(envelope({ aggregateId: 'k1' }));
    publish('{not json', {}, 'k1');
    publish({ eventType: 'order.OrderCreated' }, {}, 'k1'); // no messageId
    const e = envelope({ aggregateId: 'k1' });
    publish(e, { messageId: 'another-id' }); // header and value disagree
    await waitFor(() => runner!.metrics().deadLettered === 4);
    const letters = kafka.records(routes.deadLetter);
    expect(letters.map((l) => l.headers[H.errorType])).toEqual([
      'NonRetryableError',
      'MalformedMessageError',
      'MalformedMessageError',
      'MalformedMessageError',
    ]);
    expect(letters.map((l) => l.headers[H.attempts])).toEqual(['1', '1', '1', '1']);
    expect(letters[1]!.headers[H.errorMessage]).toMatch(/not JSON/);
    expect(letters[3]!.headers[H.errorMessage]).toMatch(/differs/);
    expect(kafka.records(routes.retry[0]!.topic)).toHaveLength(0);
    expect(runner!.metrics().retried).toBe(0);
  });

  it('does not trust attempt, due-time or dead-letter headers a producer put on a main-topic record', async () => {
    let calls = 0;
    await start(async () => {
      calls++;
      if (calls === 1) throw new RetryableError('once');
      return 'handled';
    });
    publish(envelope(), {
      [H.attempt]: '99',
      [H.retryDueAt]: '2999-01-01T00:00:00.000Z',
      [H.firstFailureAt]: '2000-01-01T00:00:00.000Z',
      [H.originalTopic]: 'forged',
      [S.exceptionMessage]: 'forged',
    });
    await waitFor(() => runner!.metrics().handled === 1);
    // Attempt 99 would have been dead-lettered; instead it was retried as attempt 1.
    expect(runner!.metrics()).toMatchObject({ deadLettered: 0, retried: 1 });
    const [copy] = kafka.records(routes.retry[0]!.topic);
    expect(copy!.headers[H.attempt]).toBe('2');
    expect(copy!.headers[H.originalTopic]).toBe('order.events');
    expect(copy!.headers[H.firstFailureAt]).not.toBe('2000-01-01T00:00:00.000Z');
    expect(copy!.headers[S.exceptionMessage]).toBeUndefined();
  });

  it("clamps a retry copy's due time to its tier's delay (a broken header cannot park a partition)", async () => {
    const handledAt: number[] = [];
    await start(async () => {
      handledAt.push(Date.now());
      return 'handled';
    });
    const e = envelope();
    const written = Date.now();
    kafka.append(
      {
        topic: routes.retry[0]!.topic,
        key: e.aggregateId,
        value: JSON.stringify(e),
        headers: {
          messageId: e.messageId,
          [H.attempt]: '2',
          [H.retryDueAt]: '2999-01-01T00:00:00.000Z',
        },
      },
      written,
    );
    await waitFor(() => handledAt.length === 1);
    expect(handledAt[0]! - written).toBeGreaterThanOrEqual(95);
    expect(handledAt[0]! - written).toBeLessThan(2_000);
  });

  it('retries a strict event in place: its partition waits, nothing behind it overtakes, then dead letter', async () => {
    const order: string[] = [];
    await start(async (raw) => {
      const e = raw as { eventType: string; payload: { n: number } };
      order.push(`n${e.payload.n}`);
      if (e.eventType === 'order.OrderPaid') throw new RetryableError('payment service down');
      return 'handled';
    });
    publish(envelope({ eventType: 'order.OrderPaid', payload: { n: 1 } }), {}, 'same');
    publish(envelope({ payload: { n: 2 } }), {}, 'same');
    await waitFor(() => runner!.metrics().deadLettered === 1 && runner!.metrics().handled === 1);
    expect(order).toEqual(['n1', 'n1', 'n1', 'n2']);
    expect(kafka.records(routes.retry[0]!.topic)).toHaveLength(0); // never a retry topic
    expect(runner!.metrics()).toMatchObject({ retried: 2, retriedInPlace: 2 });
    const retried = events.filter((ev) => ev.type === 'retried');
    expect(retried.map((ev) => (ev as { via: string }).via)).toEqual(['in-place', 'in-place']);
    const [letter] = kafka.records(routes.deadLetter);
    expect(letter!.headers[H.attempts]).toBe('3');
  });

  it('keeps a record whose dead letter was not acknowledged, commits nothing, and tries again', async () => {
    await start(async () => {
      throw new NonRetryableError('poison');
    });
    kafka.failSends = 2;
    // One key, so the second record waits for the first (other keys would fail beside it).
    publish(envelope({ aggregateId: 'o-1' }));
    publish(envelope({ aggregateId: 'o-1' }));
    await waitFor(() => runner!.metrics().deadLettered === 2);
    expect(runner!.metrics().settleFailures).toBe(2);
    const failed = events.filter((ev) => ev.type === 'settle-failed');
    expect(failed.map((ev) => (ev as { offset: string }).offset)).toEqual(['0', '0']);
    expect(kafka.records(routes.deadLetter)).toHaveLength(2);
    await runner!.flushCommits();
    expect(committed('order.events')).toBe('2');
  });
});
