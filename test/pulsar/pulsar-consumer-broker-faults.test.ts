/**
 * The evgen Pulsar consumer runner (inbox-guarded, one effect per message) consuming while its
 * broker (one of this file's own, never the shared one) is SIGKILLed and restarted on the same
 * data dir, or SIGSTOPped and continued. 600 events of 24 aggregates are in the topic before the
 * runner starts; each takes the handler 40 ms, at most 10 unsettled, so the fault lands with most
 * of every aggregate still to do. The effects are recorded as they come (no `inOrder` guard):
 * their order per aggregate is the order the runner got the first copies in.
 *
 * Asserted: every event has exactly one effect (0 lost; redelivered copies of messages whose ack
 * the broker never recorded are absorbed by the inbox, 0 doubled), each aggregate's effects in
 * version order, nothing dead-lettered. Measured and printed, not asserted: the time from the end
 * of the fault until every aggregate has a new effect again.
 */
import { describe, expect, it } from 'vitest';
import { createEnvelope, envelopeToPulsarMessage } from 'evgen/runtime';
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

const AGGREGATES = Array.from({ length: 24 }, (_, i) => `order-${i}`);
const PER_AGGREGATE = 25;
const HANDLER_MS = 40;

const { broker, closers } = privateFaultBroker();

describe('the Pulsar consumer runner through broker faults', () => {
  it.each(BROKER_FAULTS)(
    'broker $name: 0 lost, 0 doubled effects, order kept',
    async (fault) => {
      const f = await faultFixture(broker(), closers, 'evgen_pulsar_consumer_fault');
      const { db, schema } = f;

      const producer = await f.client.producer(f.topic);
      const expected = new Map<string, string>();
      for (let version = 1; version <= PER_AGGREGATE; version++) {
        const sends: Promise<string>[] = [];
        for (const orderId of AGGREGATES) {
          const envelope = createEnvelope(
            ORDER_EVENT,
            { orderId, seq: version },
            { aggregateVersion: version },
          );
          expected.set(envelope.messageId, orderId);
          sends.push(producer.send(envelopeToPulsarMessage(envelope)));
        }
        await Promise.all(sends);
      }
      await producer.close();

      const { runner, events } = await startEffectRunner(f, closers, {
        maxUnsettled: 10,
        handlerMs: HANDLER_MS,
      });

      const applied = async () => [...(await f.effects()).values()].reduce((sum, n) => sum + n, 0);

      await until('a quarter of the events applied', async () => (await applied()) >= 150);
      const { endedAt, restartMs, serving } = await fault.inject(broker());
      const atEnd = await applied();
      const recoveryMs = await recoveryTime('consumer (effects)', endedAt, AGGREGATES, f.effects, {
        perAggregate: PER_AGGREGATE,
      });
      await until('every event applied', async () => (await applied()) >= expected.size);
      // Redelivered duplicates still on their way would be doubled effects: give them a moment.
      await sleep(500);

      const report = await checkEffects(db, schema, expected);
      expect(atEnd).toBeLessThan(expected.size - AGGREGATES.length);
      expect(report).toEqual({ effects: expected.size, lost: [], doubled: [], outOfOrder: [] });
      expect(events.filter((event) => event.type === 'dead-lettered')).toEqual([]);
      const metrics = runner.metrics();
      console.log(
        `pulsar consumer, broker ${fault.name}: ${expected.size} events of ${AGGREGATES.length} aggregates, ` +
          `0 lost, 0 doubled, ${metrics.duplicates} duplicate deliveries absorbed by the inbox, ${metrics.retried} retried; ` +
          `every aggregate applied again ${recoveryMs} ms after the fault ended` +
          (restartMs === undefined ? '' : ` (broker restart took ${restartMs} ms)`) +
          `, the broker serving a new producer ${await serving} ms after it` +
          `; ${machineLoad()}`,
      );
    },
    240_000,
  );
});
