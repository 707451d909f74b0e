/**
 * From the HTTP request to the consumer, on real PostgreSQL and MariaDB and a real RabbitMQ: the
 * service writes the example catalog's OrderCancelled through the generated outbox writer inside
 * an idempotent request (idempotentFetch), the relay publishes it, and the generated
 * inventory-service consumer (inbox-guarded) handles it.
 * - 20 racing requests of one intent → one event → handled once.
 * - The same intent executed twice (the client retried after the key's retention pruned it, and
 *   the outbox row was cleaned up after SENT): the second execution's event has the identical
 *   derived messageId, is published a second time, and the consumer's inbox drops it: the
 *   consumer's effect happens once.
 * - Two keys are two intents: two messageIds, handled twice.
 * - `evgen trace --key` shows the stored request and where its events went, and refuses bad
 *   input with exit 2.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  createOutboxRelay,
  defaultRequestFingerprint,
  idempotentFetch,
  migrateIdempotency,
  migrateInbox,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  pruneIdempotencyKeys,
  pruneOutbox,
  rabbitRelayPublisher,
  requestEventMessageId,
  runIdempotent,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type Database,
  type Envelope,
} from 'evgen/runtime';
import { runCli } from '../../src/cli/main.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from '../../src/cli/exit-codes.js';
import { captureOutput } from '../cli/capture-output.js';
import {
  loadExampleRabbitService,
  type ExampleRabbitService,
} from '../support/example-rabbit-service.js';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
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

interface Server {
  readonly schema: string;
  readonly db: Database;
  /** Another pool on the same data, for racing requests. */
  readonly wide: Database;
  readonly url: string;
  drop(): Promise<void>;
}

async function openServer(dialect: 'postgres' | 'mariadb'): Promise<Server> {
  if (dialect === 'mariadb') {
    const test = await createMariadbDatabase();
    return {
      schema: test.schema,
      db: mysqlDatabase(test.pool),
      wide: mysqlDatabase(test.newPool(10)),
      url: test.url,
      drop: () => test.drop(),
    };
  }
  const test = await createTestSchema();
  return {
    schema: test.schema,
    db: postgresDatabase(test.pool),
    wide: postgresDatabase(test.newPool(10)),
    url: TEST_DATABASE_URL,
    drop: () => test.drop(),
  };
}

const CANCEL_BODY = (orderId: string) => ({
  orderId,
  cancelledAt: '2026-12-04T09:00:00.000Z',
  reason: 'customer_request',
});

describe.each(['postgres', 'mariadb'] as const)(
  'an idempotent request to the consumer (real %s and RabbitMQ)',
  { timeout: 180_000 },
  (dialect) => {
    let server: Server;
    let broker: TestBroker;
    let confirmed: ConfirmedPublisher;
    let runner: ConsumerRunner | undefined;
    let events: ConsumerRunnerEvent[];
    /** orderIds the consumer's handler ran for: its business effect. */
    let effects: string[];

    beforeEach(async () => {
      server = await openServer(dialect);
      const { db, schema } = server;
      await migrateOutbox(db, { schema });
      await migrateInbox(db, { schema });
      await migrateIdempotency(db, { schema });
      broker = await createTestBroker();
      const topology = await broker.declare(generated.rabbitTopology, { tiers: [100] });
      confirmed = new ConfirmedPublisher(broker.connection);
      events = [];
      effects = [];
      runner = createRabbitMqConsumerRunner({
        handler: generated.createInventoryServiceConsumer({
          db,
          inbox: { schema },
          handlers: {
            'order.OrderCreated': { 2: async () => undefined },
            'order.OrderCancelled': {
              1: async (envelope: Envelope<string, number, { orderId: string }>) => {
                effects.push(envelope.payload.orderId);
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
      await runner?.stop();
      await confirmed.close();
      await broker.cleanup();
      await server.drop();
    });

    /** The service's `POST /orders/cancel` as a fetch-style handler on `db`. */
    const service = (db: Database) =>
      idempotentFetch(
        db,
        async (tx, { body }) => {
          const envelope = await generated.writeOrderCancelledV1(
            tx,
            body,
            {},
            { schema: server.schema, notifyChannel: false },
          );
          return { status: 202, body: { messageId: envelope.messageId } };
        },
        { schema: server.schema, waitMs: 30_000 },
      );
    const cancel = (
      handle: (request: Request) => Promise<Response>,
      key: string,
      orderId: string,
    ) =>
      handle(
        new Request('http://orders.test/orders/cancel', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(CANCEL_BODY(orderId)),
        }),
      );
    const relayOnce = () =>
      createOutboxRelay({
        db: server.db,
        publisher: rabbitRelayPublisher(confirmed, generated.rabbitRoutes, {
          prefix: broker.prefix,
        }),
        schema: server.schema,
        notifyChannel: false,
      }).runOnce();
    const handled = () => events.filter((e) => e.type === 'handled');

    async function evgen(...args: string[]) {
      const output = captureOutput();
      try {
        const code = await runCli([
          'trace',
          ...args,
          '--events',
          eventsDir,
          '--database-url',
          server.url,
          '--schema',
          server.schema,
          '--amqp-url',
          TEST_RABBITMQ_URL,
          '--prefix',
          broker.prefix,
        ]);
        return { code, stdout: output.stdout(), stderr: output.stderr() };
      } finally {
        output.restore();
      }
    }

    it('20 racing requests of one intent: one event, handled once; trace --key follows it', async () => {
      const orderId = randomUUID();
      const handle = service(server.wide);
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => cancel(handle, 'cancel-1', orderId)),
      );
      const bodies = await Promise.all(
        replies.map((r) => r.json() as Promise<{ messageId: string }>),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill(202));
      const messageIds = new Set(bodies.map((b) => b.messageId));
      expect(messageIds.size).toBe(1);
      const [messageId] = [...messageIds];
      expect(await relayOnce()).toMatchObject({ published: 1 });
      await waitFor('handled', () => (handled().length === 1 ? true : undefined));
      expect(effects).toEqual([orderId]);

      const traced = await evgen('--key', 'cancel-1');
      expect(traced.code).toBe(EXIT_OK);
      const fingerprint = defaultRequestFingerprint({
        method: 'POST',
        path: '/orders/cancel',
        body: CANCEL_BODY(orderId),
      });
      expect(traced.stdout).toContain('idempotency key cancel-1\n');
      expect(traced.stdout).toContain(
        `request: COMPLETED, fingerprint ${fingerprint}, executions 1`,
      );
      expect(traced.stdout).toContain(`stored response: HTTP 202 {"messageId":"${messageId}"}`);
      expect(traced.stdout).toContain('events: 1 written by this request');
      expect(traced.stdout).toContain(
        'event 1 (position 0, messageId derived from the key; outbox row carries the key header)',
      );
      expect(traced.stdout).toContain(`  messageId ${messageId}`);
      expect(traced.stdout).toContain('  outbox: SENT, order.OrderCancelled v1');
      expect(traced.stdout).toContain('  inbox: inventory-service committed it at');
      expect(traced.stdout).toContain('  dead letters: none');

      const json = JSON.parse((await evgen('--key', 'cancel-1', '--json')).stdout) as unknown;
      expect(json).toMatchObject({
        key: 'cancel-1',
        request: { status: 'COMPLETED', requestHash: fingerprint, attempts: 1 },
        events: [
          {
            position: 0,
            keyHeader: true,
            trace: {
              messageId,
              outbox: { status: 'SENT' },
              inbox: [{ consumer: 'inventory-service' }],
              notHandledBy: [],
              deadLetters: [],
            },
          },
        ],
      });
    });

    it('one intent executed twice after its key was pruned: the same messageId, handled once', async () => {
      const orderId = randomUUID();
      const handle = service(server.db);
      const first = (await (await cancel(handle, 'cancel-late', orderId)).json()) as {
        messageId: string;
      };
      expect(await relayOnce()).toMatchObject({ published: 1 });
      await waitFor('handled', () => (handled().length === 1 ? true : undefined));
      // Retention passes: the SENT outbox row and the key are cleaned up.
      expect(await pruneOutbox(server.db, { schema: server.schema, olderThanMs: 0 })).toBe(1);
      expect(await pruneIdempotencyKeys(server.db, { schema: server.schema, olderThanMs: 0 })).toBe(
        1,
      );
      // The events are now found through the inbox by the derived id, the key row is gone.
      const between = await evgen('--key', 'cancel-late');
      expect(between.code).toBe(EXIT_FINDINGS);
      expect(between.stdout).toContain('request: no row for this key');

      // A very late client retry executes the intent again: a second outbox event...
      const again = await cancel(handle, 'cancel-late', orderId);
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      const second = (await again.json()) as { messageId: string };
      // ...with the identical messageId, derived from key + fingerprint + position.
      expect(second.messageId).toBe(first.messageId);
      expect(first.messageId).toBe(
        requestEventMessageId(
          'cancel-late',
          defaultRequestFingerprint({
            method: 'POST',
            path: '/orders/cancel',
            body: CANCEL_BODY(orderId),
          }),
          0,
        ),
      );
      expect(await relayOnce()).toMatchObject({ published: 1 });
      await waitFor('second copy settled', () => (handled().length === 2 ? true : undefined));
      // The consumer's inbox dropped the second copy: one effect.
      expect(handled().map((e) => e.messageId)).toEqual([first.messageId, first.messageId]);
      expect(effects).toEqual([orderId]);

      const traced = await evgen('--key', 'cancel-late');
      expect(traced.code).toBe(EXIT_OK);
      expect(traced.stdout).toContain('events: 1 written by this request');
      expect(traced.stdout).toContain('  inbox: inventory-service committed it at');
    });

    it('two keys are two intents: two messageIds, two effects', async () => {
      const orderId = randomUUID();
      const handle = service(server.db);
      const a = (await (await cancel(handle, 'cancel-a', orderId)).json()) as { messageId: string };
      const b = (await (await cancel(handle, 'cancel-b', orderId)).json()) as { messageId: string };
      expect(a.messageId).not.toBe(b.messageId);
      expect(await relayOnce()).toMatchObject({ published: 2 });
      await waitFor('both handled', () => (handled().length === 2 ? true : undefined));
      expect(effects).toEqual([orderId, orderId]);
    });

    it('trace --key: in flight, unknown, malformed key, missing table, both or no target', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const running = runIdempotent(
        server.wide,
        { key: 'in-flight', fingerprint: 'f-1' },
        async () => {
          await held;
          return 'done';
        },
        { schema: server.schema },
      );
      await waitFor('claimed', async () =>
        (await evgen('--key', 'in-flight')).code === EXIT_OK ? true : undefined,
      );
      const inFlight = await evgen('--key', 'in-flight');
      expect(inFlight.stdout).toContain('request: IN_PROGRESS, fingerprint f-1, executions 1');
      expect(inFlight.stdout).toMatch(
        /leased until \d{4}-\d\d-\d\dT[\d:.]+Z: until then a retry is answered 409/,
      );
      expect(inFlight.stdout).toContain('events: none committed yet');
      release();
      expect(await running).toMatchObject({ kind: 'fresh', result: 'done' });

      const unknown = await evgen('--key', 'never-sent');
      expect(unknown.code).toBe(EXIT_FINDINGS);
      expect(unknown.stdout).toBe(
        'idempotency key never-sent\n' +
          'request: no row for this key (never used here, released after a failed or 5xx execution, or pruned after its retention)\n' +
          'events: none found (the request wrote none, or their outbox rows were cleaned up and no consumer has committed them)\n',
      );

      const malformed = await evgen('--key', 'cl\u00e9');
      expect(malformed.code).toBe(EXIT_BAD_INPUT);
      expect(malformed.stderr).toContain('--key');
      expect(malformed.stderr).toContain('Idempotency-Key must be printable ASCII');
      expect(malformed.stdout).toBe('');

      const noTable = await evgen('--key', 'k', '--idempotency-table', 'no_such_keys');
      expect(noTable.code).toBe(EXIT_BAD_INPUT);
      expect(noTable.stderr).toContain('no idempotency table');
      expect(noTable.stderr).toContain('no_such_keys');
      expect(noTable.stderr).toContain('migrateIdempotency');

      const both = await evgen(randomUUID(), '--key', 'k');
      expect(both.code).toBe(EXIT_BAD_INPUT);
      expect(both.stderr).toContain('not both');
      const neither = await evgen();
      expect(neither.code).toBe(EXIT_BAD_INPUT);
      expect(neither.stderr).toContain('nothing to trace');
    });
  },
);
