/**
 * The in-process broker's DeadLetterSource: the record shape every transport's source returns
 * (RabbitMQ's and Kafka's are exercised by the conformance suite and the operator commands), the
 * filter, and a replay that sends only the selected letters back, with their messageId, through
 * the handler again.
 */
import {
  InProcessBroker,
  inProcessDeadLetterSource,
  matchesDeadLetterFilter,
  NonRetryableError,
} from 'evgen/runtime';
import { describe, expect, it } from 'vitest';

const ids = ['0190a1b2-0000-7000-8000-00000000000a', '0190a1b2-0000-7000-8000-00000000000b'];

function envelope(messageId: string, aggregateId: string): string {
  return JSON.stringify({
    messageId,
    eventType: 'order.OrderCancelled',
    schemaVersion: 1,
    aggregateType: 'order',
    aggregateId,
    occurredAt: '2026-01-01T00:00:00.000Z',
    payload: {},
  });
}

describe('inProcessDeadLetterSource', () => {
  it('lists the consumer’s letters as records, filters them and replays only the selected', async () => {
    const broker = new InProcessBroker({
      inProcess: {
        retryDelaysMs: [0],
      },
    });
    let failing = true;
    const handled: string[] = [];
    broker.subscribe({
      name: 'inventory-service',
      subscribes: ['order.OrderCancelled'],
      handle: (raw) => {
        const { messageId } = raw as { messageId: string };
        if (failing) return Promise.reject(new NonRetryableError(`unknown sku in ${messageId}`));
        handled.push(messageId);
        return Promise.resolve('handled');
      },
    });
    ids.forEach((messageId, index) =>
      broker.publishRaw({
        messageId,
        eventType: 'order.OrderCancelled',
        body: envelope(messageId, `o-${index}`),
        headers: { traceId: `trace-${index}` },
      }),
    );
    await broker.settled();
    const source = inProcessDeadLetterSource(broker);
    const records = await source.list('inventory-service');
    expect(records.map((record) => record.messageId)).toEqual(ids);
    expect(records[0]).toMatchObject({
      transport: 'in-process',
      consumer: 'inventory-service',
      eventType: 'order.OrderCancelled',
      errorType: 'NonRetryableError',
      errorMessage: `unknown sku in ${ids[0]}`,
      attempts: 1,
      traceId: 'trace-0',
      replays: 0,
      headers: { traceId: 'trace-0' },
      body: envelope(ids[0]!, 'o-0'),
    });
    expect(await source.list('billing')).toEqual([]);
    expect(
      records.filter((record) => matchesDeadLetterFilter(record, { messageId: ids[1] })),
    ).toHaveLength(1);
    expect(
      records.filter((record) =>
        matchesDeadLetterFilter(record, { errorType: 'NonRetryableError', until: '2000-01-01' }),
      ),
    ).toEqual([]);

    failing = false;
    const outcome = await source.replay('inventory-service', (record) =>
      matchesDeadLetterFilter(record, { messageId: ids[1] }),
    );
    expect(outcome).toEqual({ replayed: [ids[1]], kept: 1 });
    await broker.settled();
    expect(handled).toEqual([ids[1]]);
    expect((await source.list('inventory-service')).map((record) => record.messageId)).toEqual([
      ids[0],
    ]);
    await source.close();
    broker.close();
  });
});
