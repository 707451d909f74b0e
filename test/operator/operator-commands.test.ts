/**
 * The operator commands (`evgen outbox status`, `evgen trace`, `evgen dlq list|show|replay`)
 * against the real PostgreSQL or MariaDB (one test body, both servers) and RabbitMQ, with events written, relayed, handled and
 * dead-lettered by the generated code and the runtime, as a service would.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  NonRetryableError,
  createRabbitMqConsumerRunner,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  rabbitRelayPublisher,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type Database,
  type Envelope,
  type ResolvedTopology,
} from 'evgen/runtime';
import { runCli } from '../../src/cli/main.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from '../../src/cli/exit-codes.js';
import { captureOutput, type CapturedOutput } from '../cli/capture-output.js';
import {
  loadExampleRabbitService,
  type ExampleRabbitService,
} from '../support/example-rabbit-service.js';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { dialectSql, type DialectSql } from '../outbox/support/dialects.js';

/** The server a test's outbox and inbox live on, and how the CLI reaches it. */
interface TestServer extends DialectSql {
  readonly schema: string;
  readonly db: Database;
  readonly url: string;
  drop(): Promise<void>;
}

async function openServer(dialect: 'postgres' | 'mariadb'): Promise<TestServer> {
  if (dialect === 'mariadb') {
    const test = await createMariadbDatabase();
    return {
      ...dialectSql(dialect, test.schema),
      schema: test.schema,
      db: mysqlDatabase(test.pool),
      url: test.url,
      drop: () => test.drop(),
    };
  }
  const test = await createTestSchema();
  return {
    ...dialectSql(dialect, test.schema),
    schema: test.schema,
    db: postgresDatabase(test.pool),
    url: TEST_DATABASE_URL,
    drop: () => test.drop(),
  };
}
import {
  createTestBroker,
  TEST_RABBITMQ_URL,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

const eventsDir = fileURLToPath(new URL('../../events/', import.meta.url));

let example: GeneratedExample;
let generated: ExampleRabbitService;

beforeAll(async () => {
  example = await generateExample(import.meta.url);
  generated = await loadExampleRabbitService(example);
});
afterAll(() => example?.remove());

describe.each(['postgres', 'mariadb'] as const)(
  'operator commands (real %s and RabbitMQ)',
  (dialect) => {
    let pg: TestServer;
    let db: Database;
    let broker: TestBroker;
    let topology: ResolvedTopology;
    let confirmed: ConfirmedPublisher;
    let runner: ConsumerRunner | undefined;
    let events: ConsumerRunnerEvent[];
    let output: CapturedOutput | undefined;
    /** orderIds the handler refuses (a business rule), until removed. */
    let refused: Set<string>;

    beforeEach(async () => {
      pg = await openServer(dialect);
      db = pg.db;
      await migrateOutbox(db, { schema: pg.schema });
      await migrateInbox(db, { schema: pg.schema });
      broker = await createTestBroker();
      topology = await broker.declare(generated.rabbitTopology, { tiers: [100] });
      confirmed = new ConfirmedPublisher(broker.connection);
      events = [];
      refused = new Set();
      runner = createRabbitMqConsumerRunner({
        handler: generated.createInventoryServiceConsumer({
          db,
          inbox: { schema: pg.schema },
          handlers: {
            'order.OrderCreated': { 2: async () => undefined },
            'order.OrderCancelled': {
              1: async (envelope: Envelope<string, number, { orderId: string }>) => {
                if (refused.has(envelope.payload.orderId))
                  throw new NonRetryableError('cannot cancel a shipped order');
              },
            },
          },
          upcasters: { 'order.OrderCreated': { v1ToV2: (payload: object) => payload } },
        }),
        onEvent: (event) => events.push(event),
        rabbitmq: {
          connection: broker.connection,
          routes: topology.consumers['inventory-service']!,
        },
      });
      await runner.start();
    });

    afterEach(async () => {
      output?.restore();
      output = undefined;
      await runner?.stop();
      await confirmed.close();
      await broker.cleanup();
      await pg.drop();
    });

    const count = (type: ConsumerRunnerEvent['type']) =>
      events.filter((e) => e.type === type).length;

    /** Runs the CLI with the test's database, broker, prefix and catalog; returns code and output. */
    async function evgen(...args: string[]) {
      output = captureOutput();
      try {
        const code = await runCli([
          ...args,
          ...(['trace', 'dlq'].includes(args[0]!) ? ['--events', eventsDir] : []),
          ...(['trace', 'outbox'].includes(args[0]!)
            ? ['--database-url', pg.url, '--schema', pg.schema]
            : []),
          ...(['trace', 'dlq'].includes(args[0]!)
            ? ['--amqp-url', TEST_RABBITMQ_URL, '--prefix', broker.prefix]
            : []),
        ]);
        return { code, stdout: output.stdout(), stderr: output.stderr() };
      } finally {
        output.restore();
        output = undefined;
      }
    }

    async function writeAndRelay(orderIds: string[]): Promise<Envelope[]> {
      const written: Envelope[] = [];
      for (const orderId of orderIds) {
        written.push(
          await db.transaction((tx) =>
            generated.writeOrderCancelledV1(
              tx,
              { orderId, cancelledAt: new Date().toISOString(), reason: 'customer_request' },
              { traceId: 'trace-operator' },
              { schema: pg.schema, notifyChannel: false },
            ),
          ),
        );
      }
      await createOutboxRelay({
        db,
        publisher: rabbitRelayPublisher(confirmed, generated.rabbitRoutes, {
          prefix: broker.prefix,
        }),
        schema: pg.schema,
        notifyChannel: false,
      }).runOnce();
      return written;
    }

    it('traces a handled event and a dead-lettered one, lists, dry-runs and replays the dead letter', async () => {
      const poisonOrder = randomUUID();
      refused.add(poisonOrder);
      const [good, poison] = await writeAndRelay([randomUUID(), poisonOrder]);
      await waitFor('one handled, one dead-lettered', () =>
        count('handled') === 1 && count('dead-lettered') === 1 ? true : undefined,
      );

      const goodTrace = await evgen('trace', good!.messageId, '--json');
      expect(goodTrace.code).toBe(EXIT_OK);
      expect(JSON.parse(goodTrace.stdout)).toMatchObject({
        messageId: good!.messageId,
        outbox: { status: 'SENT', eventType: 'order.OrderCancelled', attempts: 1 },
        inbox: [{ consumer: 'inventory-service' }],
        notHandledBy: [],
        deadLetters: [],
      });

      const poisonTrace = await evgen('trace', poison!.messageId);
      expect(poisonTrace.code).toBe(EXIT_OK);
      expect(poisonTrace.stdout).toContain('outbox: SENT, order.OrderCancelled v1');
      expect(poisonTrace.stdout).toContain(
        'inbox: inventory-service (subscribed) has not committed it',
      );
      expect(poisonTrace.stdout).toMatch(
        /dead letter: inventory-service \(rabbitmq\), NonRetryableError: .*cannot cancel a shipped order/,
      );

      const listed = await evgen('dlq', 'list', '--consumer', 'inventory-service', '--json');
      expect(listed.code).toBe(EXIT_OK);
      const letters = JSON.parse(listed.stdout) as { messageId: string; traceId: string }[];
      expect(letters).toMatchObject([
        {
          transport: 'rabbitmq',
          consumer: 'inventory-service',
          messageId: poison!.messageId,
          eventType: 'order.OrderCancelled',
          errorType: 'NonRetryableError',
          attempts: 1,
          traceId: 'trace-operator',
        },
      ]);
      const filteredOut = await evgen('dlq', 'list', '--error-type', 'RetryableError', '--json');
      expect(JSON.parse(filteredOut.stdout)).toEqual([]);

      const shown = await evgen('dlq', 'show', poison!.messageId);
      expect(shown.code).toBe(EXIT_OK);
      expect(shown.stdout).toContain(`"orderId":"${poisonOrder}"`);
      expect(shown.stdout).toContain('x-evgen-error-type: NonRetryableError');

      const dryRun = await evgen('dlq', 'replay', '--all', '--dry-run', '--json');
      expect(JSON.parse(dryRun.stdout)).toEqual({
        dryRun: true,
        force: false,
        resolvedLookedAt: false,
        consumers: [
          {
            consumer: 'inventory-service',
            replayed: [poison!.messageId],
            kept: 0,
            alreadyResolved: [],
          },
          { consumer: 'shipping-service', replayed: [], kept: 0, alreadyResolved: [] },
        ],
      });
      const routes = topology.consumers['inventory-service']!;
      expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(1);
      expect(count('handled')).toBe(1);

      // The cause is fixed; the replay goes through the inbox with the same messageId.
      refused.delete(poisonOrder);
      const replayed = await evgen('dlq', 'replay', '--message-id', poison!.messageId);
      expect(replayed.code).toBe(EXIT_OK);
      expect(replayed.stdout).toContain(
        `inventory-service: replayed 1 (${poison!.messageId}), kept 0`,
      );
      await waitFor('replay handled', () => (count('handled') === 2 ? true : undefined));
      const after = JSON.parse((await evgen('trace', poison!.messageId, '--json')).stdout);
      expect(after).toMatchObject({
        inbox: [{ consumer: 'inventory-service' }],
        notHandledBy: [],
        deadLetters: [],
      });
    });

    it('dlq show and replay say whether a letter is resolved; replay skips a resolved one unless --force', async () => {
      const order = randomUUID();
      refused.add(order);
      const [letter] = await writeAndRelay([order]);
      await waitFor('dead-lettered', () => (count('dead-lettered') === 1 ? true : undefined));
      const withDb = ['--database-url', pg.url, '--schema', pg.schema];

      const open = await evgen('dlq', 'show', letter!.messageId, ...withDb);
      expect(open.code).toBe(EXIT_OK);
      expect(open.stdout).toMatch(
        /^status: UNRESOLVED: inventory-service has not committed the message\n/,
      );
      const notLooked = await evgen('dlq', 'show', letter!.messageId);
      expect(notLooked.stdout).not.toContain('status:');
      expect(notLooked.stdout).toContain('resolved or not: not looked at');

      // The cause is fixed and the producer sends the event again (same messageId): handled,
      // so the letter still in the dead queue is resolved.
      refused.delete(order);
      await confirmed.publish(
        `${broker.prefix}order`,
        'order.cancelled',
        Buffer.from(JSON.stringify(letter)),
        { persistent: true, messageId: letter!.messageId, type: letter!.eventType, headers: {} },
      );
      await waitFor('the copy handled', () => (count('handled') === 1 ? true : undefined));
      const resolved = await evgen('dlq', 'show', letter!.messageId, ...withDb);
      expect(resolved.stdout).toMatch(
        /^status: resolved: inventory-service committed the message at \S+ \(a replay or a later copy was handled\)\n/,
      );
      const [shown] = JSON.parse(
        (await evgen('dlq', 'show', letter!.messageId, '--json', ...withDb)).stdout,
      ) as { resolved: boolean; resolvedAt: string }[];
      expect(shown!.resolved).toBe(true);
      expect(Date.parse(shown!.resolvedAt)).not.toBeNaN();

      const skipped = await evgen('dlq', 'replay', '--message-id', letter!.messageId, ...withDb);
      expect(skipped.code).toBe(EXIT_OK);
      expect(skipped.stdout).toBe(
        `inventory-service: replayed 0, kept 1\n` +
          `  already resolved, skipped (its consumer committed the messageId; --force replays anyway): 1 (${letter!.messageId} at ${shown!.resolvedAt})\n` +
          `shipping-service: replayed 0, kept 0\n`,
      );
      const routes = topology.consumers['inventory-service']!;
      expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(1);

      const forced = await evgen(
        'dlq',
        'replay',
        '--message-id',
        letter!.messageId,
        '--force',
        ...withDb,
      );
      expect(forced.code).toBe(EXIT_OK);
      expect(forced.stdout).toContain(
        `inventory-service: replayed 1 (${letter!.messageId}), kept 0\n` +
          `  already resolved, replayed because of --force (the inbox absorbs them as duplicates): 1`,
      );
      await waitFor('the replay absorbed', () =>
        events.some((e) => e.type === 'handled' && e.result === 'duplicate') ? true : undefined,
      );
      expect((await broker.channel.checkQueue(routes.deadQueue)).messageCount).toBe(0);
    });

    it('outbox status counts by status, DEAD rows per aggregate type and what they block; --fail-on-dead', async () => {
      const [first, second] = await writeAndRelay([randomUUID(), randomUUID()]);
      await waitFor('both handled', () => (count('handled') === 2 ? true : undefined));
      let status = await evgen('outbox', 'status', '--json', '--fail-on-dead');
      expect(status.code).toBe(EXIT_OK);
      expect(JSON.parse(status.stdout)).toMatchObject({
        ready: 0,
        sent: 2,
        dead: 0,
        blockedByDead: 0,
        deadByAggregateType: [],
        leases: [],
      });
      // A row the relay gave up on, and a later event of the same aggregate waiting behind it.
      const outbox = pg.table('outbox_event');
      await db.query(
        pg.sql(`UPDATE ${outbox} SET status = 'DEAD', last_error = 'poison' WHERE event_id = $1`),
        [first!.messageId],
      );
      await db.query(
        pg.sql(
          `INSERT INTO ${outbox} (event_id, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers, available_at, created_at)
       SELECT $1, aggregate_type, aggregate_id, event_type, schema_version, payload, occurred_at, headers, available_at, created_at
         FROM ${outbox} WHERE event_id = $2`,
        ),
        [randomUUID(), first!.messageId],
      );
      status = await evgen('outbox', 'status', '--json', '--fail-on-dead');
      expect(status.code).toBe(EXIT_FINDINGS);
      expect(JSON.parse(status.stdout)).toMatchObject({
        ready: 1,
        sent: 1,
        dead: 1,
        blockedByDead: 1,
        deadByAggregateType: [{ aggregateType: 'Order', dead: 1, aggregates: 1 }],
      });
      const text = await evgen('outbox', 'status');
      expect(text.code).toBe(EXIT_OK);
      expect(text.stdout).toMatch(/^DEAD +1$/m);
      expect(text.stdout).toContain('blocked behind a DEAD row of their aggregate: 1');
      expect(text.stdout).toContain('Order: 1 row(s) in 1 aggregate(s)');
      expect(second).toBeDefined();

      const dead = await evgen('outbox', 'dead', '--json');
      expect(dead.code).toBe(EXIT_OK);
      const deadRows = JSON.parse(dead.stdout) as { id: string; messageId: string }[];
      expect(deadRows).toMatchObject([
        { messageId: first!.messageId, lastError: 'poison', blocked: 1, aggregateType: 'Order' },
      ]);
      const deadText = await evgen('outbox', 'dead', '--aggregate-type', 'Order');
      expect(deadText.stdout).toContain(`id ${deadRows[0]!.id}  ${first!.messageId}`);
      expect(deadText.stdout).toContain('1 later row(s) waiting; last error: poison');
      expect(
        JSON.parse((await evgen('outbox', 'dead', '--json', '--event-type', 'x.Y')).stdout),
      ).toEqual([]);

      const unselected = await evgen('outbox', 'revive');
      expect(unselected.code).toBe(EXIT_BAD_INPUT);
      expect(unselected.stderr).toContain('give outbox ids, --message-id, or --all');
      const badId = await evgen('outbox', 'revive', '--message-id', 'not-a-uuid');
      expect(badId.code).toBe(EXIT_BAD_INPUT);

      const revived = await evgen('outbox', 'revive', '--message-id', first!.messageId);
      expect(revived.code).toBe(EXIT_OK);
      expect(revived.stdout).toContain('revived 1 row(s)');
      // The relay publishes the revived row, then the one that waited behind it.
      await createOutboxRelay({
        db,
        publisher: rabbitRelayPublisher(confirmed, generated.rabbitRoutes, {
          prefix: broker.prefix,
        }),
        schema: pg.schema,
        notifyChannel: false,
      }).runOnce();
      status = await evgen('outbox', 'status', '--json', '--fail-on-dead');
      expect(status.code).toBe(EXIT_OK);
      expect(JSON.parse(status.stdout)).toMatchObject({
        ready: 0,
        sent: 3,
        dead: 0,
        blockedByDead: 0,
      });
    });

    it('answers exit 1 for an unknown messageId and exit 2 with a hint for bad input', async () => {
      const unknown = await evgen('trace', randomUUID());
      expect(unknown.code).toBe(EXIT_FINDINGS);
      expect(unknown.stdout).toContain('outbox: no row');

      const badConsumer = await evgen('dlq', 'list', '--consumer', 'billing');
      expect(badConsumer.code).toBe(EXIT_BAD_INPUT);
      expect(badConsumer.stderr).toContain('use one of: inventory-service, shipping-service');

      const unselected = await evgen('dlq', 'replay');
      expect(unselected.code).toBe(EXIT_BAD_INPUT);
      expect(unselected.stderr).toContain('replay needs a filter or --all');

      const badTime = await evgen('dlq', 'list', '--since', 'yesterday');
      expect(badTime.code).toBe(EXIT_BAD_INPUT);
      expect(badTime.stderr).toContain('--since yesterday is not a time');

      const noTables = await evgen('outbox', 'status', '--outbox-table', 'no_such_table');
      expect(noTables.code).toBe(EXIT_BAD_INPUT);
      expect(noTables.stderr).toContain('no_such_table');

      const captured = captureOutput();
      try {
        const wrongPrefix = await runCli([
          'dlq',
          'list',
          '--events',
          eventsDir,
          '--amqp-url',
          TEST_RABBITMQ_URL,
          '--prefix',
          `${broker.prefix}missing.`,
        ]);
        expect(wrongPrefix).toBe(EXIT_BAD_INPUT);
        expect(captured.stderr()).toContain('give the --prefix your services declare');
      } finally {
        captured.restore();
      }
    });
  },
);

describe('operator commands given a database URL they cannot use', () => {
  it('stop with a problem naming the supported schemes (exit 2), never a driver error', async () => {
    for (const url of [
      'mssql://sa@h/db',
      'redis://h:6379',
      'sqlite:///tmp/x.db',
      'file:///tmp/pg',
      './data',
    ]) {
      for (const command of [
        ['outbox', 'status'],
        ['outbox', 'dead'],
        ['outbox', 'revive', '--all'],
        ['trace', randomUUID(), '--events', eventsDir],
      ]) {
        const output = captureOutput();
        try {
          expect(await runCli([...command, '--database-url', url])).toBe(EXIT_BAD_INPUT);
          expect(output.stderr()).toMatch(/postgres:\/\/.*mysql:\/\/.*mariadb:\/\//);
          expect(output.stderr()).not.toMatch(/\n\s+at /);
        } finally {
          output.restore();
        }
      }
    }
  });
});

describe('operator commands without connection settings', () => {
  it('refuse with what to set (exit 2)', async () => {
    const previous = { db: process.env.DATABASE_URL, amqp: process.env.AMQP_URL };
    delete process.env.DATABASE_URL;
    delete process.env.AMQP_URL;
    const output = captureOutput();
    try {
      expect(await runCli(['outbox', 'status'])).toBe(EXIT_BAD_INPUT);
      expect(await runCli(['dlq', 'list', '--events', eventsDir])).toBe(EXIT_BAD_INPUT);
      expect(output.stderr()).toContain('neither --database-url nor DATABASE_URL is set');
      expect(output.stderr()).toContain('neither --amqp-url nor AMQP_URL is set');
    } finally {
      output.restore();
      if (previous.db !== undefined) process.env.DATABASE_URL = previous.db;
      if (previous.amqp !== undefined) process.env.AMQP_URL = previous.amqp;
    }
  });
});
