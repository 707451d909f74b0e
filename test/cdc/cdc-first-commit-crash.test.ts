/**
 * A SIGKILL of the Kafka Connect worker inside the connector's first-offset-commit window, and
 * another after its first commit (real private mariadbd with a row binlog or PostgreSQL with
 * logical decoding, the project's Connect worker with Debezium's connector as evgen generates it,
 * the shared broker, evgen's consumer runner with the inbox). PostgreSQL is the control: its
 * replication slot keeps the position from its creation, so nothing is refused and nothing lost.
 *
 * The window: MariaDB keeps no read position for a binlog reader, and Debezium keeps its position
 * only in Connect's offsets topic, flushed every `offset.flush.interval.ms` (20 s here, 60 s by
 * default). A connector killed before its first flush restarts with no offset, takes a new
 * `snapshot.mode=no_data` snapshot at the binlog's end and never reads what was written before
 * that moment: before the kill, while the worker was down, and after its restart until the new
 * snapshot (seconds: the worker answers REST and reports RUNNING before the snapshot runs, and
 * the killed worker's `Binlog Dump` thread stays in the process list meanwhile). Measured before
 * the fix: every one of those events was lost.
 *
 * Checked: each write attempt in the window is either refused (CdcServerNotReadyError, nothing
 * committed) or, once committed, handled; `evgen outbox cdc-confirm` exits 1 while Connect has
 * committed nothing and 0 once it has (the connector's heartbeat carries a position), after which
 * writes are accepted, and a kill after the commit loses nothing either (the restart re-sends
 * from the commit; the inbox absorbs the copies). Every committed event has exactly one effect.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CdcServerNotReadyError, type KafkaConsumerRunnerEvent } from 'evgen/runtime';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { randomUUID } from 'node:crypto';
import { writeOrderCancelledV1 } from '../../generated/order/order-cancelled/outbox.js';
import { cdcConnectorOffsets } from '../../src/runtime/outbox/cdc-connector-offsets.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { waitFor } from '../kafka-consumer/support/inventory-on-kafka.js';
import { cdcConsumer } from './support/cdc-consumer.js';
import { CDC_SOURCE_KINDS, startCdcSource, type AnyCdcSource } from './support/cdc-source.js';

const OFFSET_FLUSH_MS = 20_000;

describe.each(CDC_SOURCE_KINDS)(
  'Connect worker SIGKILLed in the connector first-offset-commit window (%s)',
  (kind) => {
    let cdc: AnyCdcSource | undefined;
    const consumer = cdcConsumer();
    afterEach(async () => {
      await consumer.stop();
      await cdc?.destroy();
      cdc = undefined;
    });

    it('every committed event is handled once: writes refused until the first commit is confirmed, then a kill re-sends', async () => {
      const c = (cdc = await startCdcSource(kind, { offsetFlushIntervalMs: OFFSET_FLUSH_MS }));
      await c.startConnector({ confirm: false });
      const events: KafkaConsumerRunnerEvent[] = [];
      const s = await consumer.start(kafkajsClient, (event) => events.push(event));

      /** messageIds of committed transactions, by phase. */
      const committed = new Map<string, string[]>();
      const refused: string[] = [];
      /** One transaction of 5 events: committed, or refused with nothing written. */
      const attempt = async (phase: string) => {
        try {
          const ids = await c.db.transaction(async (tx) => {
            const batch: string[] = [];
            for (let i = 0; i < 5; i++) {
              const envelope = await writeOrderCancelledV1(
                tx,
                {
                  orderId: randomUUID(),
                  cancelledAt: new Date().toISOString(),
                  reason: 'customer_request',
                  note: `${phase}-${i}`,
                },
                {},
                { mode: 'cdc', topicPrefix: s.kafka.prefix },
              );
              batch.push(envelope.messageId);
            }
            return batch;
          });
          committed.set(phase, ids);
        } catch (error) {
          if (!(error instanceof CdcServerNotReadyError)) throw error;
          expect(error.setting).toBe('connector offsets');
          refused.push(phase);
        }
        expect(await c.count('outbox_cdc_event')).toBe(0);
      };
      /** Phases with a committed event not handled (yet). */
      const missing = async () => {
        const effects = await s.effects();
        return [...committed].flatMap(([phase, ids]) =>
          ids.some((id) => !effects.has(id)) ? [phase] : [],
        );
      };
      /** Waits until nothing committed is missing, or `ms` passed. */
      const settle = async (ms: number) => {
        const deadline = Date.now() + ms;
        while ((await missing()).length > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250));
        }
      };
      const kill = async () => {
        await c.worker.kill();
      };
      const restart = async () => {
        await c.worker.restart();
        await c.worker.waitForRunning(c.connector);
      };

      const confirm = (...wait: string[]) =>
        runCliCaptured(
          'outbox',
          'cdc-confirm',
          '--database-url',
          c.url,
          '--connect-url',
          c.worker.restUrl,
          '--connector',
          c.connector,
          ...wait,
        );

      // Inside the window: the connector streams, Connect has committed nothing.
      await attempt('window: before the kill');
      expect(await cdcConnectorOffsets(c.worker.restUrl, c.connector)).toEqual([]);
      const early = await confirm();
      expect(early.code).toBe(1);
      expect(early.stdout).toContain(
        `connector offsets is none committed by connector ${c.connector} yet`,
      );
      await kill();
      await attempt('window: worker down');
      await restart();
      await attempt('window: right after the restart');
      // Whatever the window committed must arrive (today's code committed all three and lost them).
      await settle(60_000);
      expect(await missing()).toEqual([]);

      // The first commit (the heartbeat's position), confirmed: writes are accepted from now on.
      const confirmed = await confirm('--wait', String(OFFSET_FLUSH_MS / 1000 + 60));
      expect(confirmed.stderr).toBe('');
      expect(confirmed.code).toBe(0);
      expect(await cdcConnectorOffsets(c.worker.restUrl, c.connector)).not.toEqual([]);
      await attempt('after the commit: before the kill');
      const first = committed.get('after the commit: before the kill') ?? [];
      await waitFor(
        async () => {
          const effects = await s.effects();
          return first.every((id) => effects.has(id));
        },
        60_000,
        'the events written after the commit handled',
      );
      await kill();
      await attempt('after the commit: worker down');
      await restart();
      await attempt('after the commit: right after the restart');
      // PostgreSQL: the slot kept the position from its creation, so nothing is refused.
      if (kind === 'postgres') expect(refused).toEqual([]);
      expect([...committed.keys()]).toEqual(
        expect.arrayContaining([
          'after the commit: before the kill',
          'after the commit: worker down',
          'after the commit: right after the restart',
        ]),
      );

      // Committed phases with an event never handled: data lost.
      await settle(120_000);
      expect(await missing()).toEqual([]);
      const all = [...committed.values()].flat();
      const effects = await s.effects();
      expect(all.filter((id) => effects.get(id) !== 1)).toEqual([]);
      const handled = events.filter(
        (e): e is Extract<KafkaConsumerRunnerEvent, { type: 'handled' }> => e.type === 'handled',
      );
      const duplicates = handled.filter((e) => e.result === 'duplicate').length;
      expect(handled.length).toBe(all.length + duplicates);
      process.stdout.write(
        `cdc first-commit crash (${kind}, offset flush ${OFFSET_FLUSH_MS} ms): ${all.length} events committed in ${committed.size} transactions, ${refused.length} refused (${refused.join('; ')}), ${duplicates} duplicates absorbed\n`,
      );
    }, 600_000);
  },
);
