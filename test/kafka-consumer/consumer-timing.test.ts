/**
 * Timing promises of the Kafka consumer runner on the real broker, for every client adapter:
 * - a retry copy is handled when its tier's delay is over: not before, and not later than 10 %
 *   plus one poll interval after (generous slack on top: the machine is shared);
 * - stop() of an idle runner returns within about a second (no fetch long poll to sit out);
 * - a handler slower than the group's session timeout keeps its membership: no expulsion, no
 *   record delivered twice, no failed commit; and stop() in the middle of one returns once it
 *   finished.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
} from 'evgen/runtime';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { inventoryOnKafka, waitFor, type InventoryOnKafka } from './support/inventory-on-kafka.js';

/** The adapters' longest fetch wait: a resumed partition is read again within it. */
const POLL_INTERVAL_MS = 500;
/** On top of every bound: a loaded machine delays timers and the broker. */
const SLACK_MS = 750;
/** The smallest session timeout the broker allows. */
const SESSION_TIMEOUT_MS = 6_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(KAFKA_CLIENTS)('Kafka consumer timing ($name, real broker)', ({ create }) => {
  let setup: InventoryOnKafka | undefined;
  const runners: KafkaConsumerRunner[] = [];

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((runner) => runner.stop()));
    await setup?.cleanup().catch(() => undefined);
    setup = undefined;
  });

  it('retry tiers of 1 s and 3 s: each copy is handled within its delay + 10 % + one poll interval', async () => {
    const s = (setup = await inventoryOnKafka(create, { partitions: 1, tiersMs: [1_000, 3_000] }));
    const inner = s.handler();
    const calls: { id: string; at: number; failedAt?: number }[] = [];
    const runner = createKafkaConsumerRunner({
      handler: {
        name: inner.name,
        async handle(raw) {
          const call = { id: String((raw as { messageId?: unknown }).messageId), at: Date.now() };
          calls.push(call);
          try {
            return await inner.handle(raw);
          } catch (error) {
            Object.assign(call, { failedAt: Date.now() });
            throw error;
          }
        },
      },
      kafka: {
        client: s.client,
        routes: { ...s.routes, maxAttempts: 3 },
      },
    });
    runners.push(runner);
    await runner.start();
    const envelope = s.envelope();
    s.failures.set(envelope.messageId, { kind: 'retryable', times: 2 });
    await s.send(envelope);
    await waitFor(async () => (await s.effects()).get(envelope.messageId) === 1, 60_000, 'handled');
    const attempts = calls.filter((call) => call.id === envelope.messageId);
    expect(attempts).toHaveLength(3);
    const observed = [1_000, 3_000].map((delayMs, i) => ({
      delayMs,
      waitedMs: attempts[i + 1]!.at - attempts[i]!.failedAt!,
    }));
    if (process.env.EVGEN_TIMING_REPORT) console.log(JSON.stringify(observed));
    for (const { delayMs, waitedMs } of observed) {
      expect(waitedMs, `${delayMs} ms tier`).toBeGreaterThanOrEqual(delayMs - 20);
      expect(waitedMs, `${delayMs} ms tier`).toBeLessThanOrEqual(
        delayMs * 1.1 + POLL_INTERVAL_MS + SLACK_MS,
      );
    }
  }, 120_000);

  it('stop() of an idle runner returns within about a second', async () => {
    const s = (setup = await inventoryOnKafka(create, { partitions: 2 }));
    const events: KafkaConsumerRunnerEvent[] = [];
    const runner = createKafkaConsumerRunner({
      handler: s.handler(),
      onEvent: (event) => events.push(event),
      kafka: {
        client: s.client,
        routes: s.routes,
      },
    });
    await runner.start();
    const sent = await s.publish();
    await waitFor(async () => (await s.effects()).get(sent.messageId) === 1, 60_000, 'handled');
    // Idle: fetches wait for records that do not come.
    await sleep(2 * POLL_INTERVAL_MS);
    const from = Date.now();
    await runner.stop();
    expect(Date.now() - from).toBeLessThanOrEqual(1_000 + SLACK_MS);
  }, 120_000);

  it('a handler slower than the session timeout: membership kept, nothing delivered twice, stop() bounded', async () => {
    const s = (setup = await inventoryOnKafka(create, { partitions: 4, tiersMs: [500] }));
    const slowMs = SESSION_TIMEOUT_MS + 3_000;
    const slow = new Set<string>();
    const started = new Set<string>();
    const events: KafkaConsumerRunnerEvent[][] = [[], []];
    for (const member of [0, 1]) {
      const inner = s.handler();
      const runner = createKafkaConsumerRunner({
        handler: {
          name: inner.name,
          async handle(raw) {
            const id = String((raw as { messageId?: unknown }).messageId);
            started.add(id);
            if (slow.has(id)) await sleep(slowMs);
            return inner.handle(raw);
          },
        },
        onEvent: (event) => events[member]!.push(event),
        kafka: {
          client: s.client,
          routes: s.routes,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
        },
      });
      runners.push(runner);
      await runner.start();
    }
    // Both members own partitions before anything is published.
    await waitFor(
      () =>
        runners.every((runner) =>
          runner.assignment().some((tp) => tp.topic === s.routes.topics[0]),
        ),
      60_000,
      'both members assigned',
    );
    await sleep(2_000);
    const settled = events.map((list) => list.length);
    const sent = [];
    for (let i = 0; i < 16; i++) {
      const envelope = s.envelope();
      if (i < 4) slow.add(envelope.messageId);
      sent.push(envelope);
      await s.send(envelope);
    }
    await waitFor(async () => (await s.effects()).size === sent.length, 120_000, 'all handled');
    const during = events.flatMap((list, member) => list.slice(settled[member]));
    expect(during.filter((e) => e.type === 'revoked' || e.type === 'assigned')).toEqual([]);
    expect(during.filter((e) => e.type === 'commit-failed')).toEqual([]);
    // Another slow record, and stop() of its member while it is being handled.
    const last = s.envelope();
    slow.add(last.messageId);
    await s.send(last);
    await waitFor(() => started.has(last.messageId), 30_000, 'slow record started');
    const owner = runners.findIndex((runner) => runner.inFlight > 0);
    expect(owner).toBeGreaterThanOrEqual(0);
    const from = Date.now();
    await runners[owner]!.stop();
    const stopMs = Date.now() - from;
    expect(stopMs).toBeLessThanOrEqual(slowMs + 5_000);

    const effects = await s.effects();
    for (const envelope of [...sent, last]) expect(effects.get(envelope.messageId)).toBe(1);
    // Nothing handled twice: every handler call is for a different message.
    const counts = new Map<string, number>();
    for (const id of s.calls) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
  }, 240_000);
});
