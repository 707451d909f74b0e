/**
 * One scrape is consistent: a handler run is timed before its delivery is counted as settled, so
 * no scrape may count more handled deliveries than it shows handler observations, even when the
 * runner's health answer (a database query for a relay) is slow and messages settle meanwhile.
 * The runner here is a fake (pure logic): its health answer is held until the test releases it.
 */
import { describe, expect, it } from 'vitest';
import { createPrometheusMetrics, type MeteredConsumerRunner } from 'evgen/runtime';
import { parsePrometheusText, valueOf } from './support/prometheus-text.js';

describe('a scrape whose health answer is slow', () => {
  it('never counts more settled deliveries than the handler observations it shows', async () => {
    const metrics = createPrometheusMetrics();
    const counts = { handled: 0, duplicates: 0, skipped: 0, retried: 0, deadLettered: 0 };
    let release!: () => void;
    const healthHeld = new Promise<void>((resolve) => (release = resolve));
    const runner: MeteredConsumerRunner = {
      metrics: () => ({ ...counts }),
      health: async () => {
        await healthHeld;
        return {
          status: 'up',
          ready: true,
          live: true,
          reasons: [],
          facts: { state: 'running', inFlight: 0 },
        };
      },
    };
    metrics.watchConsumer('inventory', runner);
    const timed = metrics.instrumentHandler({ name: 'inventory', handle: async () => 'handled' });

    const scraping = metrics.text();
    // While the scrape waits for the health answer, one message is handled and settled.
    await timed.handle({ eventType: 'order.OrderCreated' });
    counts.handled++;
    release();
    const s = parsePrometheusText(await scraping);

    const settled = valueOf(s, 'evgen_consumer_handled_total', { consumer: 'inventory' });
    const observed =
      valueOf(s, 'evgen_consumer_processing_seconds_count', {
        consumer: 'inventory',
        event_type: 'order.OrderCreated',
        outcome: 'handled',
      }) ?? 0;
    expect(settled).toBeLessThanOrEqual(observed);
    // The next scrape shows both.
    const next = parsePrometheusText(await metrics.text());
    expect(valueOf(next, 'evgen_consumer_handled_total', { consumer: 'inventory' })).toBe(1);
    expect(
      valueOf(next, 'evgen_consumer_processing_seconds_count', {
        consumer: 'inventory',
        event_type: 'order.OrderCreated',
        outcome: 'handled',
      }),
    ).toBe(1);
  });
});
