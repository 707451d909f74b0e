/**
 * The polling outbox relay publishing to Pulsar while the broker (one of this file's own, never
 * the shared one) is SIGKILLed and restarted on the same data dir, or SIGSTOPped and continued.
 * Rows are written all along (8 aggregates, one event each per round, versions 1, 2, 3, …); an
 * evgen Pulsar consumer runner with the inbox reads the topic from the same broker and records
 * one effect per message as it comes (no `inOrder` guard, so an aggregate's effects are in the
 * order the broker delivered its first copies).
 *
 * Asserted: every row ends SENT, none DEAD (the relay allows 3 message-specific attempts, the
 * outage uses none), every event has exactly one effect (0 lost, 0 doubled), each aggregate's
 * effects in version order, nothing dead-lettered. Measured and printed, not asserted: the time
 * from the end of the fault until every aggregate has a row SENT again and a new effect again.
 */
import { describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  createPulsarProducers,
  pulsarRelayPublisher,
  writeOutboxEvent,
} from 'evgen/runtime';
import { checkEffects, ORDER_EVENT } from '../support/effect-oracle.js';
import {
  BROKER_FAULTS,
  faultFixture,
  machineLoad,
  privateFaultBroker,
  recoveryTime,
  sleep,
  startEffectRunner,
  until,
} from './support/broker-faults.js';

const AGGREGATES = Array.from({ length: 8 }, (_, i) => `order-${i}`);
const ROUND_MS = 150;

const { broker, closers } = privateFaultBroker();

describe('the outbox relay publishing to Pulsar through broker faults', () => {
  it.each(BROKER_FAULTS)(
    'broker $name: every row SENT, none DEAD, 0 lost, 0 doubled, order kept',
    async (fault) => {
      const f = await faultFixture(broker(), closers, 'evgen_pulsar_relay_fault', {
        outbox: true,
      });
      const { db, schema, prefix } = f;
      const { events } = await startEffectRunner(f, closers, { maxUnsettled: 20 });

      const producers = createPulsarProducers(f.client, { sendTimeoutMs: 2_000 });
      closers.push(() => producers.close());
      const relay = createOutboxRelay({
        db,
        schema,
        notifyChannel: false,
        pollIntervalMs: 100,
        // Message-specific failures allowed before DEAD: an outage counted as attempts would
        // make rows DEAD within the first seconds of the fault.
        maxAttempts: 3,
        publisher: pulsarRelayPublisher(
          producers,
          { [ORDER_EVENT.eventType]: { topic: 'order.events' } },
          { prefix },
        ),
      });
      await relay.start();
      closers.push(() => relay.stop());

      // The writer: one event per aggregate each round, until told to stop.
      const expected = new Map<string, string>();
      let round = 0;
      let writing = true;
      const writer = (async () => {
        while (writing) {
          round++;
          await db.transaction(async (tx) => {
            for (const orderId of AGGREGATES) {
              const envelope = await writeOutboxEvent(
                tx,
                ORDER_EVENT,
                { orderId, seq: round },
                { aggregateVersion: round },
                { schema, notifyChannel: false },
              );
              expected.set(envelope.messageId, orderId);
            }
          });
          await sleep(ROUND_MS);
        }
      })();
      closers.push(async () => {
        writing = false;
        await writer;
      });

      const sent = () =>
        f.perAggregate(
          `SELECT aggregate_id, count(*) AS n FROM "${schema}".outbox_event WHERE status = 'SENT' GROUP BY aggregate_id`,
        );
      const effects = f.effects;
      const statuses = async () => {
        const { rows } = await f.pg.pool.query<{ status: string; n: string }>(
          `SELECT status, count(*) AS n FROM "${schema}".outbox_event GROUP BY status`,
        );
        return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      };

      await until('every aggregate flowing end to end before the fault', async () => {
        const now = await effects();
        return AGGREGATES.every((a) => (now.get(a) ?? 0) >= 3);
      });

      const { endedAt, restartMs, serving } = await fault.inject(broker());
      const [relayMs, endToEndMs] = await Promise.all([
        recoveryTime('relay (rows SENT)', endedAt, AGGREGATES, sent),
        recoveryTime('consumer (effects)', endedAt, AGGREGATES, effects),
      ]);
      writing = false;
      await writer;

      const total = expected.size;
      await until('every row SENT', async () => (await statuses()).SENT === total);
      await until('every event applied', async () => {
        const now = await effects();
        return [...now.values()].reduce((sum, n) => sum + n, 0) >= total;
      });
      // Redelivered duplicates still on their way would be doubled effects: give them a moment.
      await sleep(500);

      const report = await checkEffects(db, schema, expected);
      expect(report).toEqual({ effects: total, lost: [], doubled: [], outOfOrder: [] });
      expect(await statuses()).toEqual({ SENT: total });
      expect(events.filter((event) => event.type === 'dead-lettered')).toEqual([]);
      console.log(
        `pulsar relay, broker ${fault.name}: ${total} rows of ${AGGREGATES.length} aggregates, ` +
          `0 lost, 0 doubled, 0 DEAD; every aggregate SENT again ${relayMs} ms and applied again ` +
          `${endToEndMs} ms after the fault ended` +
          (restartMs === undefined ? '' : ` (broker restart took ${restartMs} ms)`) +
          `, the broker serving a new producer ${await serving} ms after it` +
          `; ${machineLoad()}`,
      );
    },
    240_000,
  );
});
