/**
 * `evgen dlq` and `evgen trace` over Kafka: a record the generated inventory-service consumer
 * refuses lands in its dead-letter topic (real broker, real PostgreSQL); the CLI lists it with its
 * diagnostics, traces it, and replays it through the consumer's retry topic and inbox.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { createKafkaConsumerRunner, migrateOutbox, type KafkaConsumerRunner } from 'evgen/runtime';
import { runCli } from '../../src/cli/main.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../../src/cli/exit-codes.js';
import { captureOutput } from '../cli/capture-output.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
} from '../kafka-consumer/support/inventory-on-kafka.js';

const eventsDir = fileURLToPath(new URL('../../events/', import.meta.url));

describe('operator commands over Kafka (real broker and PostgreSQL)', () => {
  let setup: InventoryOnKafka | undefined;
  let runner: KafkaConsumerRunner | undefined;

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await setup?.cleanup();
    setup = undefined;
  });

  async function evgen(s: InventoryOnKafka, ...args: string[]) {
    const output = captureOutput();
    try {
      const code = await runCli([
        ...args,
        '--events',
        eventsDir,
        '--kafka-brokers',
        s.kafka.brokers,
        '--kafka-tiers',
        '300,600',
        '--prefix',
        s.kafka.prefix,
        ...(args[0] === 'trace'
          ? ['--database-url', TEST_DATABASE_URL, '--schema', s.pg.schema]
          : []),
      ]);
      return { code, stdout: output.stdout(), stderr: output.stderr() };
    } finally {
      output.restore();
    }
  }

  it('lists, shows, traces and replays a Kafka dead letter; the replay is handled once', async () => {
    const s = await inventoryOnKafka(kafkajsClient, { tiersMs: [300, 600], partitions: 1 });
    setup = s;
    await migrateOutbox(s.db, { schema: s.pg.schema });
    const good = await s.publish();
    const poison = await s.publish();
    s.failures.set(poison.messageId, { kind: 'non-retryable', times: 99 });
    runner = createKafkaConsumerRunner({
      client: s.client,
      routes: s.routes,
      handler: s.handler(),
    });
    await runner.start();
    await waitFor(
      () => runner!.metrics().handled === 1 && runner!.metrics().deadLettered === 1,
      60_000,
      'one handled, one dead-lettered',
    );

    const listed = await evgen(s, 'dlq', 'list', '--consumer', 'inventory-service', '--json');
    expect(listed.code).toBe(EXIT_OK);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        transport: 'kafka',
        consumer: 'inventory-service',
        messageId: poison.messageId,
        eventType: 'order.OrderCancelled',
        errorType: 'NonRetryableError',
        attempts: 1,
        origin: `topic ${s.routes.topics[0]}, partition 0, offset 1`,
      },
    ]);
    const shown = await evgen(
      s,
      'dlq',
      'show',
      poison.messageId,
      '--consumer',
      'inventory-service',
    );
    expect(shown.code).toBe(EXIT_OK);
    expect(shown.stdout).toContain('kafka_dlt-original-topic');
    expect(shown.stdout).toContain(`"messageId":"${poison.messageId}"`);

    const traced = await evgen(s, 'trace', poison.messageId, '--json');
    expect(JSON.parse(traced.stdout)).toMatchObject({
      outbox: null,
      inbox: [],
      notHandledBy: ['inventory-service'],
      deadLetters: [{ transport: 'kafka', errorType: 'NonRetryableError' }],
    });
    const goodTrace = await evgen(s, 'trace', good.messageId, '--json');
    expect(JSON.parse(goodTrace.stdout)).toMatchObject({
      inbox: [{ consumer: 'inventory-service' }],
      deadLetters: [],
    });

    s.failures.delete(poison.messageId);
    const replayed = await evgen(
      s,
      'dlq',
      'replay',
      '--consumer',
      'inventory-service',
      '--message-id',
      poison.messageId,
    );
    expect(replayed.code).toBe(EXIT_OK);
    expect(replayed.stdout).toContain(
      `inventory-service: replayed 1 (${poison.messageId}), kept 0`,
    );
    await waitFor(() => runner!.metrics().handled === 2, 60_000, 'replayed letter handled');
    expect((await s.effects()).get(poison.messageId)).toBe(1);
    const after = JSON.parse((await evgen(s, 'trace', poison.messageId, '--json')).stdout);
    expect(after).toMatchObject({ inbox: [{ consumer: 'inventory-service' }], notHandledBy: [] });
  });

  it('refuses --transport kafka without brokers, and bad tiers (exit 2)', async () => {
    const previous = process.env.KAFKA_BROKERS;
    delete process.env.KAFKA_BROKERS;
    const output = captureOutput();
    try {
      expect(await runCli(['dlq', 'list', '--events', eventsDir, '--transport', 'kafka'])).toBe(
        EXIT_BAD_INPUT,
      );
      expect(output.stderr()).toContain('neither --kafka-brokers nor KAFKA_BROKERS is set');
      expect(
        await runCli([
          'dlq',
          'list',
          '--events',
          eventsDir,
          '--kafka-brokers',
          '127.0.0.1:1',
          '--kafka-tiers',
          '600,300',
        ]),
      ).toBe(EXIT_BAD_INPUT);
      expect(output.stderr()).toContain('is not a list of ascending positive milliseconds');
    } finally {
      output.restore();
      if (previous !== undefined) process.env.KAFKA_BROKERS = previous;
    }
  });
});
