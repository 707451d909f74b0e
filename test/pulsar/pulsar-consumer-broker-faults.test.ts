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
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createPulsarConsumerRunner,
  envelopeToPulsarMessage,
  migrateInbox,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarWebSocketClient,
  type PulsarConsumerRunnerEvent,
} from 'evgen/runtime';
import {
  checkEffects,
  createEffectsTable,
  effectConsumer,
  ORDER_EVENT,
} from '../support/effect-oracle.js';
import { createTestSchema } from '../support/postgres.js';
import { startExtraPulsarBroker, type ExtraPulsarBroker } from '../support/pulsar/broker.js';
import { createTestPulsar } from '../support/pulsar/test-pulsar.js';
import {
  BROKER_FAULTS,
  machineLoad,
  recoveryTime,
  until,
  type Progress,
} from './support/broker-faults.js';

const AGGREGATES = Array.from({ length: 24 }, (_, i) => `order-${i}`);
const PER_AGGREGATE = 25;
const HANDLER_MS = 40;
const CONSUMER = 'inventory-service';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let broker: ExtraPulsarBroker | undefined;
beforeAll(async () => {
  broker = await startExtraPulsarBroker();
}, 180_000);
afterAll(async () => {
  await broker?.destroy();
}, 60_000);

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
}, 60_000);

describe('the Pulsar consumer runner through broker faults', () => {
  it.each(BROKER_FAULTS)(
    'broker $name: 0 lost, 0 doubled effects, order kept',
    async (fault) => {
      const pulsar = await createTestPulsar(broker!.webUrl);
      const pg = await createTestSchema('evgen_pulsar_consumer_fault');
      closers.push(() => pg.drop());
      const db = postgresDatabase(pg.pool);
      const { schema } = pg;
      await migrateInbox(db, { schema });
      await createEffectsTable(db, schema);
      const topic = pulsar.topic('order.events');
      const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
      // A generous handshake bound: on a loaded machine a fresh broker took over 10 s to open the
      // first subscriptions.
      const client = pulsarWebSocketClient({
        webServiceUrl: broker!.webUrl,
        connectTimeoutMs: 30_000,
      });

      const producer = await client.producer(topic);
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

      const consumer = effectConsumer(db, schema, CONSUMER, undefined, { ordered: false });
      const events: PulsarConsumerRunnerEvent[] = [];
      const runner = createPulsarConsumerRunner({
        client,
        routes: pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [200, 1_000] }),
        maxUnsettled: 10,
        handler: {
          name: consumer.name,
          async handle(raw, context) {
            await sleep(HANDLER_MS);
            return consumer.handle(raw, context);
          },
        },
        onEvent: (event) => {
          if (event.type === 'dead-lettered' || event.type === 'retried') events.push(event);
        },
      });
      await runner.start();
      closers.push(() => runner.stop());

      const effects = async (): Promise<Progress> => {
        const { rows } = await pg.pool.query<{ aggregate_id: string; n: string }>(
          `SELECT aggregate_id, count(*) AS n FROM "${schema}".effects GROUP BY aggregate_id`,
        );
        return new Map(rows.map((row) => [row.aggregate_id, Number(row.n)]));
      };
      const applied = async () => [...(await effects()).values()].reduce((sum, n) => sum + n, 0);

      await until('a quarter of the events applied', async () => (await applied()) >= 150);
      const { endedAt, restartMs, serving } = await fault.inject(broker!);
      const atEnd = await applied();
      const recoveryMs = await recoveryTime('consumer (effects)', endedAt, AGGREGATES, effects, {
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
