/**
 * The operator commands and `evgen scaffold` in a consumer repository whose events come from a
 * catalog package of another repository (`catalogs` in its evgen.config.json): the billing
 * repository reads order.OrderPaid from the installed package `@acme/orders`. `evgen build` and
 * `evgen scaffold` write its consumer and handler stubs for that event; the scaffolded stub (it
 * throws NonRetryableError until implemented) runs in the generated consumer on the real RabbitMQ
 * and PostgreSQL and dead-letters a record the producer sent; `evgen dlq list|show` and
 * `evgen trace` find it through the dependency's event, with nothing but the consumer's config.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type InboxConsumer,
  type RabbitTopology,
} from 'evgen/runtime';
import { EXIT_OK } from '../../src/cli/exit-codes.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { consumerRepository } from '../cli/consumer-repository.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { createTestBroker, TEST_RABBITMQ_URL, waitFor } from '../support/rabbitmq.js';

/** What `evgen scaffold` writes for the billing consumer: its stub for OrderPaid, then the wiring. */
const SCAFFOLDED = ['order-paid.ts', 'index.ts'];

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a consumer repository reading a catalog package (real PostgreSQL and RabbitMQ)', () => {
  it('scaffolds handlers for the dependency event; its dead letter is listed, shown and traced', async () => {
    // Inside the repository, so the generated code resolves evgen-runtime and ajv as a service's would.
    const dir = fileURLToPath(
      new URL(`./fixtures/${randomBytes(4).toString('hex')}/`, import.meta.url),
    );
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const repo = await consumerRepository(dir);
    const config = join(repo, 'evgen.config.json');

    const build = await runCliCaptured('build', '--config', config, '--no-cache');
    expect(build.stderr).toBe('');
    expect(build.code).toBe(EXIT_OK);
    const scaffold = await runCliCaptured('scaffold', '--config', config);
    expect(scaffold.stderr).toBe('');
    expect(scaffold.code).toBe(EXIT_OK);
    const handlersDir = join(repo, 'handlers', 'billing');
    const stubs = SCAFFOLDED.map((file) => join(handlersDir, file));
    for (const stub of stubs) expect(existsSync(stub)).toBe(true);
    expect(await readFile(stubs[0]!, 'utf8')).toContain('order.OrderPaid');
    // The producer's own consumer (audit) is not this repository's: no stubs for it.
    expect(existsSync(join(repo, 'handlers', 'audit'))).toBe(false);
    // A second scaffold keeps the user's files as they are.
    const before = await Promise.all(stubs.map((stub) => readFile(stub, 'utf8')));
    const again = await runCliCaptured('scaffold', '--config', config);
    expect(again.code).toBe(EXIT_OK);
    expect(await Promise.all(stubs.map((stub) => readFile(stub, 'utf8')))).toEqual(before);

    const pg = await createTestSchema('evgen_dep_catalog');
    cleanups.push(() => pg.drop());
    const db = postgresDatabase(pg.pool);
    await migrateInbox(db, { schema: pg.schema });
    // evgen trace looks for an outbox row first and refuses a schema without the outbox table.
    await migrateOutbox(db, { schema: pg.schema });
    const broker = await createTestBroker();
    cleanups.push(() => broker.cleanup());
    const load = async <T>(path: string) =>
      (await import(pathToFileURL(join(repo, path)).href)) as T;
    const { rabbitTopology } = await load<{ rabbitTopology: RabbitTopology }>(
      'generated/rabbitmq/topology.ts',
    );
    const { createBillingConsumer } = await load<{
      createBillingConsumer: (options: object) => InboxConsumer;
    }>('generated/consumers/billing.ts');
    const { handlers } = await load<{ handlers: object }>('handlers/billing/index.ts');
    const topology = await broker.declare(rabbitTopology, { tiers: [100] });
    const events: ConsumerRunnerEvent[] = [];
    const runner: ConsumerRunner = createRabbitMqConsumerRunner({
      handler: createBillingConsumer({ db, inbox: { schema: pg.schema }, handlers }),
      onEvent: (event) => events.push(event),
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers.billing!,
      },
    });
    await runner.start();
    cleanups.push(() => runner.stop());

    // The producer (another repository, with evgen's publish helper) sends an OrderPaid.
    const orderId = randomUUID();
    const envelope = {
      messageId: randomUUID(),
      eventType: 'order.OrderPaid',
      schemaVersion: 1,
      aggregateType: 'Order',
      aggregateId: orderId,
      occurredAt: '2026-01-02T03:04:05Z',
      payload: { orderId, amount: 1200 },
    };
    const publisher = new ConfirmedPublisher(broker.connection);
    cleanups.push(() => publisher.close());
    await publisher.publish(
      `${broker.prefix}order`,
      'order.OrderPaid',
      Buffer.from(JSON.stringify(envelope)),
      {
        messageId: envelope.messageId,
        contentType: 'application/json',
        type: envelope.eventType, // as evgen's RabbitMQ publishers set it
      },
    );
    await waitFor('dead-lettered by the scaffolded stub', () =>
      events.some((event) => event.type === 'dead-lettered') ? true : undefined,
    );

    const operator = (...args: string[]) =>
      runCliCaptured(
        ...args,
        '--config',
        config,
        '--amqp-url',
        TEST_RABBITMQ_URL,
        '--prefix',
        broker.prefix,
      );
    const listed = await operator('dlq', 'list', '--json');
    expect(listed.stderr).toBe('');
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        transport: 'rabbitmq',
        consumer: 'billing',
        messageId: envelope.messageId,
        eventType: 'order.OrderPaid',
        errorType: 'NonRetryableError',
      },
    ]);
    const shown = await operator('dlq', 'show', envelope.messageId);
    expect(shown.code).toBe(EXIT_OK);
    expect(shown.stdout).toContain('billing: handler for order.OrderPaid v1 is not implemented');
    expect(shown.stdout).toContain(`"orderId":"${orderId}"`);
    const traced = await operator(
      'trace',
      envelope.messageId,
      '--json',
      '--database-url',
      TEST_DATABASE_URL,
      '--schema',
      pg.schema,
    );
    expect(traced.stderr).toBe('');
    expect(JSON.parse(traced.stdout)).toMatchObject({
      messageId: envelope.messageId,
      inbox: [],
      notHandledBy: ['billing'],
      deadLetters: [{ consumer: 'billing', eventType: 'order.OrderPaid' }],
    });
  });
});
