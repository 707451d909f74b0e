/**
 * SIGKILL of the Kafka Connect worker while Debezium streams the CDC outbox (real PostgreSQL with
 * logical decoding, real broker, evgen's consumer runner with the inbox):
 * - at least once (the default): the worker had committed no source offsets when it died (offset
 *   flush every 10 min here), so after the restart it sends every record again; 0 lost, each
 *   messageId has one effect, the redelivered copies are inbox duplicates;
 * - exactly once (`exactly.once.support=required` on a worker with
 *   `exactly.once.source.support=enabled`): 0 lost and not a single duplicate delivered.
 * Each mode starts its own worker and database (the kill must not hit another test's worker).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KafkaConsumerRunnerEvent } from 'evgen/runtime';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { randomUUID } from 'node:crypto';
import { writeOrderCancelledV1 } from '../../generated/order/order-cancelled/outbox.js';
import { waitFor } from '../kafka-consumer/support/inventory-on-kafka.js';
import { cdcConsumer } from './support/cdc-consumer.js';
import { startCdcPostgres, type CdcPostgres } from './support/cdc-postgres.js';

describe.each([
  { mode: 'at least once', exactlyOnce: false },
  { mode: 'exactly once', exactlyOnce: true },
])('Connect worker SIGKILLed mid-stream ($mode)', ({ exactlyOnce }) => {
  let cdc: CdcPostgres | undefined;
  const consumer = cdcConsumer();
  afterEach(async () => {
    await consumer.stop();
    await cdc?.destroy();
    cdc = undefined;
  });

  it('0 lost, one effect per messageId; duplicates only without exactly-once', async () => {
    const c = (cdc = await startCdcPostgres({
      exactlyOnce,
      // At least once: no offset commit before the kill, so the restart re-sends everything.
      offsetFlushIntervalMs: exactlyOnce ? 1_000 : 600_000,
    }));
    await c.startConnector({ exactlyOnce });
    const events: KafkaConsumerRunnerEvent[] = [];
    const s = await consumer.start(kafkajsClient, (event) => events.push(event));

    const aggregates = Array.from({ length: 8 }, () => randomUUID());
    const written: string[] = [];
    let killed = false;
    let afterRestart = 0;
    // Transactions of 10 events, paced, until 40 more were written after the restart began.
    const writing = (async () => {
      for (let round = 0; !killed || afterRestart < 40; round++) {
        const ids = await c.db.transaction(async (tx) => {
          const batch: string[] = [];
          for (let i = 0; i < 10; i++) {
            const envelope = await writeOrderCancelledV1(
              tx,
              {
                orderId: aggregates[(round * 10 + i) % aggregates.length]!,
                cancelledAt: new Date().toISOString(),
                reason: 'customer_request',
                note: `r${round}-${i}`,
              },
              {},
              { mode: 'cdc', topicPrefix: s.kafka.prefix },
            );
            batch.push(envelope.messageId);
          }
          return batch;
        });
        written.push(...ids);
        if (killed) afterRestart++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    // Kill once records are flowing: the worker is mid-stream, rows keep coming.
    await waitFor(
      async () => (await s.effects()).size >= 150,
      60_000,
      '150 events handled before the kill',
    );
    const writtenAtKill = written.length;
    await c.worker.kill();
    killed = true;
    await c.worker.restart();
    await writing;
    expect(written.length).toBeGreaterThan(writtenAtKill);

    await waitFor(
      async () => (await s.effects()).size >= written.length,
      180_000,
      `all ${written.length} events handled after the restart`,
    );
    const effects = await s.effects();
    expect(written.filter((id) => effects.get(id) !== 1)).toEqual([]);
    expect(effects.size).toBe(written.length);
    const handled = events.filter(
      (e): e is Extract<KafkaConsumerRunnerEvent, { type: 'handled' }> => e.type === 'handled',
    );
    const duplicates = handled.filter((e) => e.result === 'duplicate').length;
    if (exactlyOnce) {
      expect(duplicates).toBe(0);
      expect(handled).toHaveLength(written.length);
    } else {
      // Every record sent before the kill came again, and the inbox absorbed each copy.
      expect(duplicates).toBeGreaterThanOrEqual(150);
      expect(handled).toHaveLength(written.length + duplicates);
    }
    process.stdout.write(
      `cdc worker kill (${exactlyOnce ? 'exactly once' : 'at least once'}): ${written.length} events, ${duplicates} duplicates delivered and absorbed\n`,
    );
  }, 360_000);
});
