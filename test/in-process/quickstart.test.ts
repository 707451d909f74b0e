/**
 * The README quickstart, in one process with nothing installed: openDatabase() (PGlite in
 * memory), the example catalog's generated outbox writer and consumer, the outbox relay and the
 * in-process broker. The README's block itself runs as written (a child process, as a reader runs
 * `npx tsx quickstart.ts` in a clone). Then what a service author tests with the same broker: duplicates absorbed
 * by the inbox, retries, dead letters, replay, and a raw producer without a messageId property.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InProcessBroker,
  NonRetryableError,
  RetryableError,
  createOutboxRelay,
  findInboxEntries,
  findOutboxEvent,
  migrateInbox,
  migrateOutbox,
  openDatabase,
  type OpenedDatabase,
  type OutboxRelay,
} from 'evgen-runtime';
import { orderCreatedV2 } from '../../generated/index.js';
import { writeOrderCreatedV2 } from '../../generated/order/order-created/outbox.js';
import {
  createInventoryServiceConsumer,
  type InventoryServiceHandlers,
} from '../../generated/consumers/inventory-service.js';
import type { OrderCreatedV2Payload } from '../../generated/order/order-created/types.js';
import { REPO, blockUnder } from '../docs/markdown-blocks.js';
import { spawnTypeScript } from '../support/typescript-child.js';

function orderPayload(): OrderCreatedV2Payload {
  return {
    orderId: randomUUID(),
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: { amountMinor: 500, currency: 'EUR' } }],
    total: { amountMinor: 1000, currency: 'EUR' },
    shippingAddress: { line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
  };
}

let db: OpenedDatabase;
let relay: OutboxRelay | undefined;
let broker: InProcessBroker;
/** What the handler should do on its next calls (default: reserve the stock). */
let behaviour: (orderId: string) => void;
let calls: string[];

const handlers: InventoryServiceHandlers = {
  'order.OrderCancelled': { 1: async () => undefined },
  'order.OrderCreated': {
    2: async (envelope, ctx) => {
      calls.push(envelope.messageId);
      behaviour(envelope.payload.orderId);
      await ctx.tx.query('INSERT INTO reservation (order_id, sku) VALUES ($1, $2)', [
        envelope.payload.orderId,
        envelope.payload.lines[0]!.sku,
      ]);
    },
  },
};

// One embedded database for the file (PGlite takes a while to start); each test empties it.
beforeAll(async () => {
  db = await openDatabase(undefined, { env: {} });
  await migrateOutbox(db);
  await migrateInbox(db);
  await db.query('CREATE TABLE reservation (order_id text, sku text)');
}, 300_000); // PGlite starts slowly on a loaded machine
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  calls = [];
  behaviour = () => undefined;
  for (const table of ['reservation', 'inbox_message', 'outbox_event']) {
    await db.query(`DELETE FROM ${table}`);
  }
  broker = new InProcessBroker({
    inProcess: {
      retryDelaysMs: [0, 0],
    },
  });
  broker.subscribe(createInventoryServiceConsumer({ db, handlers }));
});
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  broker.close();
});

async function reservations(): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM reservation',
  );
  return rows[0]!.count;
}

describe('quickstart: producer → outbox relay → consumer, in one process', () => {
  it('writes in a transaction, relays through the in-process broker and handles once', async () => {
    expect(db.kind).toBe('pglite');
    relay = createOutboxRelay({ db, publisher: broker.relayPublisher() });
    await relay.start();

    const payload = orderPayload();
    const written = await db.transaction((tx) => writeOrderCreatedV2(tx, payload));
    await broker.waitFor(() => broker.consumed.length === 1);
    await broker.settled();

    expect(broker.published.map((message) => message.messageId)).toEqual([written.messageId]);
    expect(broker.consumed).toEqual([
      {
        consumer: 'inventory-service',
        messageId: written.messageId,
        eventType: 'order.OrderCreated',
        attempt: 1,
        result: 'handled',
      },
    ]);
    await expect
      .poll(async () => (await findOutboxEvent(db, written.messageId))?.status)
      .toBe('SENT');
    const inbox = await findInboxEntries(db, written.messageId);
    expect(inbox.map((entry) => entry.consumer)).toEqual(['inventory-service']);
    expect(await reservations()).toBe(1);
  });
});

describe('the in-process broker as a test harness for handlers', () => {
  it('delivers a redelivered message to the inbox, which absorbs it (one effect)', async () => {
    const envelope = orderCreatedV2(orderPayload());
    await broker.publish(envelope);
    await broker.publish(envelope);
    await broker.settled();
    expect(broker.consumed.map((record) => record.result).sort()).toEqual(['duplicate', 'handled']);
    expect(calls).toEqual([envelope.messageId]);
    expect(await reservations()).toBe(1);
  });

  it('retries a retryable failure with the same messageId, then dead-letters it when attempts run out; replay after the fix handles it', async () => {
    behaviour = () => {
      throw new RetryableError('stock service unavailable');
    };
    const envelope = orderCreatedV2(orderPayload());
    await broker.publish(envelope);
    await broker.settled();
    expect(calls).toEqual([envelope.messageId, envelope.messageId, envelope.messageId]);
    expect(broker.retried.map((retry) => [retry.attempt, retry.errorType])).toEqual([
      [1, 'RetryableError'],
      [2, 'RetryableError'],
    ]);
    expect(broker.deadLettered).toHaveLength(1);
    expect(broker.deadLettered[0]).toMatchObject({
      consumer: 'inventory-service',
      errorType: 'RetryableError',
      errorMessage: expect.stringContaining('stock service unavailable'),
      attempts: 3,
      replays: 0,
    });
    expect(broker.deadLettered[0]!.message.messageId).toBe(envelope.messageId);
    expect(broker.consumed).toEqual([]);
    expect(await reservations()).toBe(0); // each failed attempt rolled back

    behaviour = () => undefined;
    expect(broker.replayDeadLetters()).toBe(1);
    await broker.settled();
    expect(broker.deadLettered).toEqual([]);
    expect(broker.consumed).toMatchObject([{ messageId: envelope.messageId, result: 'handled' }]);
    expect(await reservations()).toBe(1);
  });

  it('dead-letters a non-retryable failure at once, and an invalid payload without calling the handler', async () => {
    behaviour = () => {
      throw new NonRetryableError('order is in an illegal state');
    };
    const poison = orderCreatedV2(orderPayload());
    await broker.publish(poison);
    const invalid = { ...orderCreatedV2(orderPayload()), messageId: randomUUID() };
    await broker.publish({ ...invalid, payload: { ...invalid.payload, lines: [] } });
    await broker.settled();
    expect(calls).toEqual([poison.messageId]);
    expect(broker.retried).toEqual([]);
    expect(
      broker.deadLettered.map((letter) => [letter.message.messageId, letter.errorType]).sort(),
    ).toEqual(
      [
        [poison.messageId, 'NonRetryableError'],
        [invalid.messageId, 'ValidationError'],
      ].sort(),
    );
  });

  it("takes the body's messageId from a raw producer that sets no messageId property; ids that differ are dead-lettered", async () => {
    const envelope = orderCreatedV2(orderPayload());
    const body = JSON.stringify(envelope);
    broker.publishRaw({ messageId: '', eventType: envelope.eventType, body, headers: {} });
    broker.publishRaw({
      messageId: randomUUID(),
      eventType: envelope.eventType,
      body: JSON.stringify({ ...envelope, messageId: randomUUID() }),
      headers: {},
    });
    await broker.settled();
    expect(broker.consumed).toMatchObject([{ messageId: envelope.messageId, result: 'handled' }]);
    expect(broker.deadLettered.map((letter) => letter.errorType)).toEqual([
      'MalformedMessageError',
    ]);
    expect(broker.deadLettered[0]!.errorMessage).toContain('differs from body messageId');
  });

  it('refuses a message nobody subscribes to (retryable, so the outbox keeps the row), unless told to accept it', async () => {
    const lonely = new InProcessBroker();
    await expect(lonely.publish(orderCreatedV2(orderPayload()))).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining('no consumer subscribes to order.OrderCreated'),
    });
    expect(lonely.published).toEqual([]);
    const recording = new InProcessBroker({
      inProcess: {
        unroutable: 'accept',
      },
    });
    await recording.publish(orderCreatedV2(orderPayload()));
    expect(recording.published).toHaveLength(1);
  });
});

describe('the README quickstart, as written', () => {
  it('runs: the event goes outbox → relay → broker → inbox → handler, and the program ends by itself', async () => {
    const block = blockUnder(
      'README.md',
      'Quickstart: producer → relay → consumer with nothing installed',
      'ts',
    );
    // A folder beside the clone's generated/ (gitignored), as a reader saves quickstart.ts.
    const dir = join(REPO, 'test/in-process/fixtures', `quickstart-${process.pid}`);
    await mkdir(dir, { recursive: true });
    try {
      await symlink(join(REPO, 'generated'), join(dir, 'generated'), 'dir');
      await writeFile(join(dir, 'quickstart.ts'), block.code);
      const child = spawnTypeScript(join(dir, 'quickstart.ts'), [], 'ignore');
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code, `${block.file}:${block.line} exited ${String(code)}\n${stdout}\n${stderr}`).toBe(
        0,
      );
      expect(stdout).toContain('inventory-service: reserve stock for');
      expect(stdout).toMatch(/consumer: 'inventory-service'[\s\S]*result: 'handled'/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
