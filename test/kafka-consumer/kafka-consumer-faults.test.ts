/**
 * Faults against the real broker and the real PostgreSQL, on every client adapter:
 * - a consumer process SIGKILLed after the inbox commit and before the offset commit: the record
 *   is redelivered, the inbox says duplicate, one effect;
 * - a broker (an extra instance, never the shared one) SIGKILLed mid-stream and restarted: the
 *   runner recovers by itself, nothing is lost, nothing has two effects.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKafkaConsumerRunner,
  type KafkaConsumerRunner,
  type KafkaConsumerRunnerEvent,
} from 'evgen/runtime';
import { startExtraKafkaBroker, type ExtraKafkaBroker } from '../support/kafka/broker.js';
import { KAFKA_CLIENTS } from '../support/kafka/test-kafka.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import { inventoryOnKafka, waitFor, type InventoryOnKafka } from './support/inventory-on-kafka.js';

const child = fileURLToPath(new URL('./support/kill-after-inbox-commit.ts', import.meta.url));

describe.each(KAFKA_CLIENTS)('Kafka consumer faults ($name, real broker)', ({ name, create }) => {
  let setup: InventoryOnKafka | undefined;
  let runner: KafkaConsumerRunner | undefined;
  let extra: ExtraKafkaBroker | undefined;

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await setup?.cleanup().catch(() => undefined);
    setup = undefined;
    await extra?.destroy();
    extra = undefined;
  });

  it('killed after the inbox commit, before the offset commit: redelivered, inbox says duplicate, one effect', async () => {
    const s = (setup = await inventoryOnKafka(create, { partitions: 1 }));
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await s.publish());
    const target = sent[2]!;
    const proc = spawnTypeScript(
      child,
      [
        name,
        s.kafka.brokers,
        TEST_DATABASE_URL,
        s.pg.schema,
        JSON.stringify(s.routes),
        target.messageId,
      ],
      'ignore',
    );
    let output = '';
    proc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      proc.on('exit', (_code, sig) => resolve(sig)),
    );
    expect(signal, output).toBe('SIGKILL');
    expect(output).toContain('killing after inbox commit');
    // The effect is committed; the group's offset does not cover the record.
    expect((await s.effects()).get(target.messageId)).toBe(1);
    const committed = await s.kafka.admin.committedOffsets(s.routes.groupId, s.routes.topics[0]!);
    expect(Number(committed.get(0) ?? '0')).toBeLessThanOrEqual(2);

    const events: KafkaConsumerRunnerEvent[] = [];
    runner = createKafkaConsumerRunner({
      handler: s.handler(),
      onEvent: (event) => events.push(event),
      kafka: {
        client: s.client,
        routes: s.routes,
      },
    });
    await runner.start();
    await waitFor(async () => (await s.effects()).size === 5, 60_000, 'all five applied');
    await waitFor(
      () => events.some((e) => e.type === 'handled' && e.messageId === target.messageId),
      30_000,
      'target redelivered',
    );
    const redelivered = events.find(
      (e) => e.type === 'handled' && e.messageId === target.messageId,
    ) as Extract<KafkaConsumerRunnerEvent, { type: 'handled' }>;
    expect(redelivered.result).toBe('duplicate');
    const effects = await s.effects();
    for (const e of sent) expect(effects.get(e.messageId)).toBe(1);
    // Records 3 and 4 may have been handled beside the target before the kill: their redelivered
    // copies (duplicates) settle beside the target's, so the position reaches 5 once they have.
    await waitFor(
      async () => {
        await runner!.flushCommits();
        const after = await s.kafka.admin.committedOffsets(s.routes.groupId, s.routes.topics[0]!);
        return after.get(0) === '5';
      },
      30_000,
      'offset 5 committed',
    );
  }, 120_000);

  it('broker SIGKILLed mid-stream and restarted: the runner recovers by itself, 0 lost, 0 double effects', async () => {
    extra = await startExtraKafkaBroker();
    const s = (setup = await inventoryOnKafka(create, { partitions: 2, brokers: extra.brokers }));
    const events: KafkaConsumerRunnerEvent[] = [];
    runner = createKafkaConsumerRunner({
      handler: s.handler(),
      onEvent: (event) => events.push(event),
      kafka: {
        client: s.client,
        routes: s.routes,
        sessionTimeoutMs: 10_000,
      },
    });
    await runner.start();
    const total = 40;
    const sent: string[] = [];
    // A producer that keeps each record until the broker acknowledged it (acks = all).
    const produce = async () => {
      for (let i = 0; i < total; i++) {
        const envelope = s.envelope(undefined, `n${i}`);
        sent.push(envelope.messageId);
        for (;;) {
          try {
            // The same envelope until acknowledged: an unacknowledged send may still be stored.
            await s.send(envelope);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 500));
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const producing = produce();
    await waitFor(
      async () => (await s.effects()).size >= 10,
      60_000,
      'ten applied before the kill',
    );
    await extra.kill();
    await new Promise((r) => setTimeout(r, 2_000));
    await extra.restart();
    await producing;
    await waitFor(async () => (await s.effects()).size === total, 150_000, 'every record applied');
    const effects = await s.effects();
    expect(sent).toHaveLength(total);
    for (const id of sent) expect(effects.get(id)).toBe(1);
    expect(effects.size).toBe(total);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    expect(runner.metrics().deadLettered).toBe(0);
  }, 300_000);
});
