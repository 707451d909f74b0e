/**
 * `evgen dlq` and `evgen trace` over Kafka: a record the generated inventory-service consumer
 * refuses lands in its dead-letter topic (real broker; the inbox on the real PostgreSQL or the
 * real MariaDB, one test body for both); the CLI lists it with its diagnostics, traces it
 * (`--database-url postgres://…` or `mysql://…`), and replays it through the consumer's retry
 * topic and inbox. Cases that involve no database run once.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import { createKafkaConsumerRunner, migrateOutbox, type KafkaConsumerRunner } from 'evgen/runtime';
import { runCli } from '../../src/cli/main.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../../src/cli/exit-codes.js';
import { captureOutput, runCliCaptured } from '../cli/capture-output.js';
import {
  inventoryOnKafka,
  waitFor,
  type InventoryOnKafka,
} from '../kafka-consumer/support/inventory-on-kafka.js';

const eventsDir = fileURLToPath(new URL('../../events/', import.meta.url));

describe.each(['postgres', 'mariadb'] as const)(
  'operator commands over Kafka (real broker, %s)',
  (dialect) => {
    let setup: InventoryOnKafka | undefined;
    let runner: KafkaConsumerRunner | undefined;

    afterEach(async () => {
      await runner?.stop();
      runner = undefined;
      await setup?.cleanup();
      setup = undefined;
    });

    async function evgen(s: InventoryOnKafka, ...args: string[]) {
      return evgenWith(s, eventsDir, ...args);
    }

    function evgenWith(s: InventoryOnKafka, events: string, ...args: string[]) {
      return runCliCaptured(
        ...args,
        '--events',
        events,
        '--kafka-brokers',
        s.kafka.brokers,
        '--kafka-tiers',
        '300,600',
        '--prefix',
        s.kafka.prefix,
        ...(args[0] === 'trace' ? ['--database-url', s.databaseUrl, '--schema', s.schema] : []),
      );
    }

    it('lists, shows, traces and replays a Kafka dead letter; the replay is handled once', async () => {
      const s = await inventoryOnKafka(kafkajsClient, {
        tiersMs: [300, 600],
        partitions: 1,
        dialect,
      });
      setup = s;
      await migrateOutbox(s.db, { schema: s.schema });
      const good = await s.publish();
      const poison = await s.publish();
      s.failures.set(poison.messageId, { kind: 'non-retryable', times: 99 });
      runner = createKafkaConsumerRunner({
        handler: s.handler(),
        kafka: {
          client: s.client,
          routes: s.routes,
        },
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

    it.runIf(dialect === 'postgres')(
      'without --consumer reads every consumer on Kafka; one whose dead-letter topic does not exist yet has none',
      async () => {
        const s = await inventoryOnKafka(kafkajsClient, { tiersMs: [300, 600], partitions: 1 });
        setup = s;
        const poison = await s.publish();
        s.failures.set(poison.messageId, { kind: 'non-retryable', times: 99 });
        runner = createKafkaConsumerRunner({
          handler: s.handler(),
          kafka: {
            client: s.client,
            routes: s.routes,
          },
        });
        await runner.start();
        await waitFor(() => runner!.metrics().deadLettered === 1, 60_000, 'one dead-lettered');

        // shipping-service never ran under this prefix: it has no dead-letter topic.
        const listed = await evgen(s, 'dlq', 'list', '--json');
        expect(listed.stderr).not.toContain('dead-queue-missing');
        expect(listed.code).toBe(EXIT_OK);
        expect(JSON.parse(listed.stdout)).toMatchObject([
          { consumer: 'inventory-service', messageId: poison.messageId },
        ]);
        expect(listed.stderr).toContain(
          `shipping-service has no dead-letter topic ${s.kafka.prefix}shipping-service.dlt yet`,
        );
        const text = await evgen(s, 'dlq', 'list');
        expect(text.code).toBe(EXIT_OK);
        expect(text.stdout).toContain('inventory-service: 1 dead letter(s)');
        expect(text.stdout).toContain('shipping-service: 0 dead letter(s)');
        const shown = await evgen(s, 'dlq', 'show', poison.messageId);
        expect(shown.code).toBe(EXIT_OK);
        expect(shown.stdout).toContain(`"messageId":"${poison.messageId}"`);
        const dryRun = await evgen(s, 'dlq', 'replay', '--all', '--dry-run');
        expect(dryRun.code).toBe(EXIT_OK);
        expect(dryRun.stdout).toContain(
          `inventory-service: would replay 1 (${poison.messageId}), kept 0`,
        );
        expect(dryRun.stdout).toContain('shipping-service: would replay 0, kept 0');

        // A mixed catalog: shipping-service's events are on RabbitMQ only, so it is not looked for.
        const mixed = mkdtempSync(join(tmpdir(), 'evgen-dlq-mixed-'));
        try {
          cpSync(eventsDir, mixed, { recursive: true });
          for (const event of ['inventory/StockReserved', 'order/OrderPaid']) {
            const file = join(mixed, event, 'event.json');
            const { kafka: _kafka, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Record<
              string,
              unknown
            >;
            writeFileSync(file, `${JSON.stringify(rest, null, 2)}\n`);
          }
          const onKafka = await evgenWith(s, mixed, 'dlq', 'list');
          expect(onKafka.code).toBe(EXIT_OK);
          expect(onKafka.stdout).toContain('inventory-service: 1 dead letter(s)');
          expect(onKafka.stdout).not.toContain('shipping-service');
          expect(onKafka.stderr).not.toContain('shipping-service');
          const replayed = await evgenWith(s, mixed, 'dlq', 'replay', '--all', '--dry-run');
          expect(replayed.code).toBe(EXIT_OK);
          expect(replayed.stdout).not.toContain('shipping-service');
          const notOnKafka = await evgenWith(
            s,
            mixed,
            'dlq',
            'list',
            '--consumer',
            'shipping-service',
          );
          expect(notOnKafka.code).toBe(EXIT_BAD_INPUT);
          expect(notOnKafka.stderr).toContain('subscribes to no event published on Kafka');
        } finally {
          rmSync(mixed, { recursive: true, force: true });
        }
      },
    );

    it.runIf(dialect === 'postgres')(
      'refuses --transport kafka without brokers, and bad tiers (exit 2)',
      async () => {
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
      },
    );
  },
);
