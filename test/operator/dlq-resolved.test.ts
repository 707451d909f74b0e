/**
 * Kafka dead letters stay in their topic after a replay; `evgen dlq list`, `show`, `replay` and
 * `evgen trace` tell the open ones from the settled ones by the inbox row of the messageId (real
 * broker; the inbox on the real PostgreSQL or the real MariaDB, one test body for both): `replay`
 * skips a resolved letter unless --force. The topology prefix and retry tiers come from
 * evgen.config.json instead of being repeated as flags.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

describe('resolved dead letters and the deployment config (real broker and database)', () => {
  let setup: InventoryOnKafka | undefined;
  let runner: KafkaConsumerRunner | undefined;
  let configDir: string | undefined;

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await setup?.cleanup();
    setup = undefined;
    if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
    configDir = undefined;
  });

  /** Runs the CLI with only --config and connection flags: no --prefix, no --kafka-tiers. */
  function evgen(s: InventoryOnKafka, config: string, ...args: string[]) {
    return runCliCaptured(
      ...args,
      '--config',
      config,
      '--kafka-brokers',
      s.kafka.brokers,
      '--database-url',
      s.databaseUrl,
      '--schema',
      s.schema,
    );
  }

  it.each(['postgres', 'mariadb'] as const)(
    'marks a replayed and handled letter resolved in dlq list and trace; --unresolved counts the open ones (%s)',
    async (dialect) => {
      const s = await inventoryOnKafka(kafkajsClient, {
        tiersMs: [300, 600],
        partitions: 1,
        dialect,
      });
      setup = s;
      await migrateOutbox(s.db, { schema: s.schema }); // trace reads the outbox too
      configDir = await mkdtemp(join(tmpdir(), 'evgen-config-'));
      const config = join(configDir, 'evgen.config.json');
      await writeFile(
        config,
        JSON.stringify({ events: eventsDir, prefix: s.kafka.prefix, kafkaTiers: [300, 600] }),
      );
      const fixed = await s.publish();
      const open = await s.publish();
      for (const poison of [fixed, open])
        s.failures.set(poison.messageId, { kind: 'non-retryable', times: 99 });
      runner = createKafkaConsumerRunner({
        handler: s.handler(),
        kafka: {
          client: s.client,
          routes: s.routes,
        },
      });
      await runner.start();
      await waitFor(() => runner!.metrics().deadLettered === 2, 60_000, 'two dead letters');

      const before = await evgen(s, config, 'dlq', 'list', '--consumer', 'inventory-service');
      expect(before.code).toBe(EXIT_OK);
      expect(before.stdout).toContain('inventory-service: 2 dead letter(s), 2 unresolved');
      expect(before.stdout.match(/UNRESOLVED/g)).toHaveLength(2);

      s.failures.delete(fixed.messageId);
      const replayed = await evgen(
        s,
        config,
        'dlq',
        'replay',
        '--consumer',
        'inventory-service',
        '--message-id',
        fixed.messageId,
      );
      expect(replayed.stderr).toBe('');
      expect(replayed.code).toBe(EXIT_OK);
      // The tiers from the config: the replay went to the 300 ms tier's topic, where the runner reads.
      expect(replayed.stdout).toContain(
        `inventory-service: replayed 1 (${fixed.messageId}), kept 1`,
      );
      await waitFor(() => runner!.metrics().handled === 1, 60_000, 'the replayed letter handled');

      const after = await evgen(
        s,
        config,
        'dlq',
        'list',
        '--consumer',
        'inventory-service',
        '--json',
      );
      const letters = JSON.parse(after.stdout) as {
        messageId: string;
        resolved: boolean;
        resolvedAt?: string;
      }[];
      // Both letters are still in the topic; only the replayed one is resolved. The two messages
      // have different keys, so the runner handles them side by side and their letters reach the
      // dead-letter topic in either order: compare by messageId, not by position.
      expect(
        letters
          .map((l) => [l.messageId, l.resolved])
          .sort(([a], [b]) => String(a).localeCompare(String(b))),
      ).toEqual(
        [
          [fixed.messageId, true],
          [open.messageId, false],
        ].sort(([a], [b]) => String(a).localeCompare(String(b))),
      );
      const resolvedAt = letters.find((l) => l.messageId === fixed.messageId)!.resolvedAt!;
      expect(Date.parse(resolvedAt)).not.toBeNaN();
      const unresolved = await evgen(
        s,
        config,
        'dlq',
        'list',
        '--consumer',
        'inventory-service',
        '--unresolved',
        '--json',
      );
      expect(
        (JSON.parse(unresolved.stdout) as { messageId: string }[]).map((l) => l.messageId),
      ).toEqual([open.messageId]);
      const text = await evgen(s, config, 'dlq', 'list', '--consumer', 'inventory-service');
      expect(text.stdout).toContain('inventory-service: 2 dead letter(s), 1 unresolved');

      // show: the letter in full says whether it is resolved (only this consumer's topics exist).
      const only = ['--consumer', 'inventory-service'];
      const shownFixed = await evgen(s, config, 'dlq', 'show', fixed.messageId, ...only);
      expect(shownFixed.code).toBe(EXIT_OK);
      expect(shownFixed.stdout).toMatch(
        /^status: resolved: inventory-service committed the message at \S+ \(a replay or a later copy was handled\)\n/,
      );
      const shownOpen = await evgen(s, config, 'dlq', 'show', open.messageId, ...only);
      expect(shownOpen.stdout).toMatch(
        /^status: UNRESOLVED: inventory-service has not committed the message\n/,
      );
      expect(
        JSON.parse(
          (await evgen(s, config, 'dlq', 'show', open.messageId, '--json', ...only)).stdout,
        ),
      ).toMatchObject([{ messageId: open.messageId, resolved: false }]);

      // replay: the resolved letter (still in its topic) is skipped and named; the open one is not.
      const dryRun = await evgen(
        s,
        config,
        'dlq',
        'replay',
        '--consumer',
        'inventory-service',
        '--all',
        '--dry-run',
        '--json',
      );
      expect(JSON.parse(dryRun.stdout)).toEqual({
        dryRun: true,
        force: false,
        resolvedLookedAt: true,
        consumers: [
          {
            consumer: 'inventory-service',
            replayed: [open.messageId],
            kept: 1,
            alreadyResolved: [{ messageId: fixed.messageId, resolvedAt }],
          },
        ],
      });
      const again = await evgen(
        s,
        config,
        'dlq',
        'replay',
        '--consumer',
        'inventory-service',
        '--message-id',
        fixed.messageId,
      );
      expect(again.code).toBe(EXIT_OK);
      expect(again.stdout).toBe(
        `inventory-service: replayed 0, kept 2\n` +
          `  already resolved, skipped (its consumer committed the messageId; --force replays anyway): 1 (${fixed.messageId} at ${resolvedAt})\n`,
      );
      // --force sends it anyway: the consumer's inbox absorbs it as a duplicate.
      const forced = await evgen(
        s,
        config,
        'dlq',
        'replay',
        '--consumer',
        'inventory-service',
        '--message-id',
        fixed.messageId,
        '--force',
      );
      expect(forced.code).toBe(EXIT_OK);
      expect(forced.stdout).toContain(`inventory-service: replayed 1 (${fixed.messageId}), kept 1`);
      expect(forced.stdout).toContain(
        'already resolved, replayed because of --force (the inbox absorbs them as duplicates): 1',
      );
      await waitFor(() => runner!.metrics().duplicates === 1, 60_000, 'the forced copy absorbed');
      expect(runner.metrics()).toMatchObject({ handled: 2, duplicates: 1, deadLettered: 2 });
      expect(await s.effects()).toEqual(new Map([[fixed.messageId, 1]]));

      const traced = await evgen(s, config, 'trace', fixed.messageId);
      expect(traced.code).toBe(EXIT_OK);
      expect(traced.stdout).toContain('inbox: inventory-service committed it at');
      expect(traced.stdout).toMatch(
        /dead letter: inventory-service \(kafka\), NonRetryableError: .*\n.*\n {2}resolved: inventory-service committed the message at \S+\n/,
      );
      const tracedOpen = JSON.parse(
        (await evgen(s, config, 'trace', open.messageId, '--json')).stdout,
      );
      expect(tracedOpen).toMatchObject({
        notHandledBy: ['inventory-service'],
        deadLetters: [{ messageId: open.messageId, resolved: false }],
      });
    },
  );

  it('--unresolved without a database is refused; so are descending kafkaTiers in the config', async () => {
    configDir = await mkdtemp(join(tmpdir(), 'evgen-config-'));
    const config = join(configDir, 'evgen.config.json');
    await writeFile(config, JSON.stringify({ events: eventsDir, kafkaTiers: [600, 300] }));
    const previous = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    const output = captureOutput();
    try {
      expect(
        await runCli([
          'dlq',
          'list',
          '--events',
          eventsDir,
          '--kafka-brokers',
          '127.0.0.1:1',
          '--unresolved',
        ]),
      ).toBe(EXIT_BAD_INPUT);
      expect(output.stderr()).toContain('--unresolved: database-url-missing');
      expect(
        await runCli(['dlq', 'list', '--config', config, '--kafka-brokers', '127.0.0.1:1']),
      ).toBe(EXIT_BAD_INPUT);
      expect(output.stderr()).toContain('#/kafkaTiers: invalid-config: [600,300] is not ascending');
    } finally {
      output.restore();
      if (previous !== undefined) process.env.DATABASE_URL = previous;
    }
  });
});
