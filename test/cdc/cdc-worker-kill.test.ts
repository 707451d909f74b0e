/**
 * SIGKILL of the Kafka Connect worker while Debezium streams the CDC outbox (real PostgreSQL with
 * logical decoding or real MariaDB with a row binlog, real broker, evgen's consumer runner with
 * the inbox):
 * - at least once (the default): the worker had committed no source offsets when it died (offset
 *   flush every 10 min here), so after the restart it sends every record again; 0 lost, each
 *   messageId has one effect, the redelivered copies are inbox duplicates;
 * - exactly once (`exactly.once.support=required` on a worker with
 *   `exactly.once.source.support=enabled`): 0 lost and not a single duplicate delivered.
 * Each database and mode starts its own worker and database (the kill must not hit another
 * test's worker).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KafkaConsumerRunnerEvent } from 'evgen/runtime';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { randomUUID } from 'node:crypto';
import { writeOrderCancelledV1 } from '../../generated/order/order-cancelled/outbox.js';
import { waitFor } from '../kafka-consumer/support/inventory-on-kafka.js';
import { heartbeatTopic } from '../../src/cdc/connector-config.js';
import { confirmCdcConnectorOffsets } from '../../src/runtime/outbox/cdc-connector-offsets.js';
import { TEST_KAFKA_BROKERS } from '../support/kafka/test-kafka.js';
import { cdcConsumer } from './support/cdc-consumer.js';
import { CDC_SOURCE_KINDS, startCdcSource, type CdcSource } from './support/cdc-source.js';

describe.each(
  CDC_SOURCE_KINDS.flatMap((kind) => [
    { kind, mode: 'at least once', exactlyOnce: false },
    { kind, mode: 'exactly once', exactlyOnce: true },
  ]),
)('Connect worker SIGKILLed mid-stream ($kind, $mode)', ({ kind, exactlyOnce }) => {
  let cdc: CdcSource | undefined;
  const consumer = cdcConsumer();
  afterEach(async () => {
    await consumer.stop();
    await cdc?.destroy();
    cdc = undefined;
  });

  it('0 lost, one effect per messageId; duplicates only without exactly-once', async () => {
    const c = (cdc = await startCdcSource(kind, {
      exactlyOnce,
      // At least once: no offset commit before the kill, so the restart re-sends everything.
      offsetFlushIntervalMs: exactlyOnce ? 1_000 : 600_000,
    }));
    // MariaDB at least once: offsets are flushed every 10 min here, so the connector's first
    // commit comes from a clean stop below.
    const firstCommitByStop = kind === 'mariadb' && !exactlyOnce;
    await c.startConnector({ exactlyOnce, confirm: !firstCommitByStop });
    const events: KafkaConsumerRunnerEvent[] = [];
    const s = await consumer.start(kafkajsClient, (event) => events.push(event));

    const aggregates = Array.from({ length: 8 }, () => randomUUID());
    const written: string[] = [];
    /** One transaction of 10 events. */
    const writeRound = async (round: number) => {
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
    };
    if (firstCommitByStop) {
      // MariaDB keeps no position for a binlog reader (PostgreSQL's slot does): a connector that
      // has never committed source offsets starts at the binlog's end after a crash, so the new
      // CDC outbox refuses writes until its committed offsets are confirmed. Its heartbeat
      // carries a position; a clean stop after the first heartbeat commits it; from then on a
      // crash re-sends everything after that commit.
      const admin = await kafkajsClient({ brokers: [TEST_KAFKA_BROKERS] }).admin();
      try {
        await waitFor(
          async () => {
            const offsets = await admin.topicOffsets(heartbeatTopic(c.connector)).catch(() => []);
            return offsets.some((p) => Number(p.end) > 0);
          },
          60_000,
          'a heartbeat record of the connector',
        );
      } finally {
        await admin.close();
      }
      await c.worker.stop();
      await c.worker.restart();
      await c.worker.waitForRunning(c.connector);
      await confirmCdcConnectorOffsets(c.db, {
        connectUrl: c.worker.restUrl,
        connector: c.connector,
        waitMs: 30_000,
        pollMs: 250,
      });
      await writeRound(0);
      await waitFor(async () => (await s.effects()).size >= 10, 60_000, 'first 10 handled');
    }
    const handledBefore = events.filter((e) => e.type === 'handled').length;

    let killed = false;
    let afterRestart = 0;
    // Transactions of 10 events, paced, until 40 more were written after the restart began.
    const writing = (async () => {
      for (let round = 1; !killed || afterRestart < 40; round++) {
        await writeRound(round);
        if (killed) afterRestart++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    // Kill once records are flowing: the worker is mid-stream, rows keep coming.
    await waitFor(
      async () => (await s.effects()).size >= handledBefore + 150,
      120_000,
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
      `cdc worker kill (${kind}, ${exactlyOnce ? 'exactly once' : 'at least once'}): ${written.length} events, ${duplicates} duplicates delivered and absorbed\n`,
    );
  }, 600_000);
});
