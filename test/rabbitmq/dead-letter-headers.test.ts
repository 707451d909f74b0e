import { describe, expect, it } from 'vitest';
import { EVGEN_HEADERS } from '../../src/runtime/rabbitmq/amqp-message.js';
import { deadLetterDiagnostics, replayHeaders } from '../../src/runtime/rabbitmq/dead-letters.js';

describe('replayHeaders', () => {
  const letter = {
    traceparent: 'tp-1',
    [EVGEN_HEADERS.traceId]: 'trace-1',
    [EVGEN_HEADERS.aggregateId]: 'o-1',
    [EVGEN_HEADERS.originalExchange]: 'order',
    [EVGEN_HEADERS.originalRoutingKey]: 'order.created',
    [EVGEN_HEADERS.firstFailureAt]: '2026-01-01T00:00:00.000Z',
    [EVGEN_HEADERS.lastError]: 'boom',
    [EVGEN_HEADERS.attempt]: 4,
    [EVGEN_HEADERS.attempts]: 4,
    [EVGEN_HEADERS.errorType]: 'RetryableError',
    [EVGEN_HEADERS.errorMessage]: 'boom',
    [EVGEN_HEADERS.consumer]: 'inventory-service',
    [EVGEN_HEADERS.deadLetteredAt]: '2026-01-01T00:01:00.000Z',
    [EVGEN_HEADERS.gapSince]: '2026-01-01T00:00:30.000Z',
    [EVGEN_HEADERS.gapExpected]: 3,
    [EVGEN_HEADERS.gapFirst]: '2026-01-01T00:00:00.000Z',
    'x-death': [{ count: 1 }],
    'x-first-death-queue': 'q',
  };

  it('starts a fresh attempt count and gap wait, drops one-dead-lettering diagnostics and broker history, keeps the rest', () => {
    const now = new Date('2026-02-01T00:00:00.000Z');
    expect(replayHeaders(letter, now)).toEqual({
      traceparent: 'tp-1',
      [EVGEN_HEADERS.traceId]: 'trace-1',
      [EVGEN_HEADERS.aggregateId]: 'o-1',
      [EVGEN_HEADERS.originalExchange]: 'order',
      [EVGEN_HEADERS.originalRoutingKey]: 'order.created',
      [EVGEN_HEADERS.firstFailureAt]: '2026-01-01T00:00:00.000Z',
      [EVGEN_HEADERS.lastError]: 'boom',
      [EVGEN_HEADERS.replays]: 1,
      [EVGEN_HEADERS.replayedAt]: '2026-02-01T00:00:00.000Z',
    });
  });

  it('counts replays of a letter that was replayed before', () => {
    expect(replayHeaders({ ...letter, [EVGEN_HEADERS.replays]: 2 })[EVGEN_HEADERS.replays]).toBe(3);
  });

  it('deadLetterDiagnostics reads every diagnostic header, text or Buffer, and omits what is absent', () => {
    expect(
      deadLetterDiagnostics({
        ...letter,
        [EVGEN_HEADERS.consumer]: Buffer.from('inventory-service'),
        [EVGEN_HEADERS.traceId]: 'trace-1',
      }),
    ).toEqual({
      consumer: 'inventory-service',
      errorType: 'RetryableError',
      errorMessage: 'boom',
      attempts: 4,
      firstFailureAt: '2026-01-01T00:00:00.000Z',
      deadLetteredAt: '2026-01-01T00:01:00.000Z',
      traceId: 'trace-1',
      originalExchange: 'order',
      originalRoutingKey: 'order.created',
    });
    expect(deadLetterDiagnostics({ 'x-death': [] })).toEqual({});
  });
});
