/**
 * A payload survives writer → outbox row → relay → broker → inbox consumer → the handler's own
 * table exactly, on each real server: integers up to ±(2^53 − 1) as numbers and larger ones as
 * strings (the runtime's rule: JavaScript cannot hold them as numbers), and unicode byte for byte
 * — astral-plane characters, combining sequences never normalized, emoji ZWJ sequences,
 * right-to-left text, JSON's escapes. A number beyond ±(2^53 − 1) cannot be delivered as written
 * (every consumer's decoder refuses such a literal rather than round it, and PostgreSQL's jsonb
 * prints any such number as one), so the typed writer refuses it: a ValidationError naming each
 * such value, and nothing of the transaction written — never a dead letter later, never rounded.
 */
import { randomUUID } from 'node:crypto';
import { createEnvelope, ValidationError, type EventVersionDescriptor } from 'evgen-runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InProcessBroker,
  createOutboxRelay,
  migrateInbox,
  migrateOutbox,
  mysqlDatabase,
  postgresDatabase,
  type Database,
  type OutboxRelay,
} from 'evgen-runtime';
import { decodeMessageBody } from '../../src/runtime/decode-message-body.js';
import {
  createInventoryServiceConsumer,
  type InventoryServiceHandlers,
} from '../../generated/consumers/inventory-service.js';
import { writeOrderCreatedV2 } from '../../generated/order/order-created/outbox.js';
import type { OrderCreatedV2Payload } from '../../generated/order/order-created/types.js';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema } from '../support/postgres.js';

type Dialect = 'postgres' | 'mariadb';

interface Store {
  readonly db: Database;
  /** `$n` as the dialect's bind parameter. */
  readonly sql: (text: string) => string;
  /** A BIGINT column read as its decimal text (no rounding through a JavaScript number). */
  readonly bigintText: (column: string) => string;
  drop(): Promise<void>;
}

async function openStore(dialect: Dialect): Promise<Store> {
  const test =
    dialect === 'mariadb'
      ? await createMariadbDatabase('evgen_fidelity')
      : await createTestSchema('evgen_fidelity');
  const db =
    dialect === 'mariadb'
      ? mysqlDatabase((test as Awaited<ReturnType<typeof createMariadbDatabase>>).pool)
      : postgresDatabase((test as Awaited<ReturnType<typeof createTestSchema>>).pool);
  await migrateOutbox(db);
  await migrateInbox(db);
  // The handler's effect: the received text, stored in the service's own table.
  await db.query(
    dialect === 'mariadb'
      ? 'CREATE TABLE delivered (order_id CHAR(36) PRIMARY KEY, line1 TEXT NOT NULL, city TEXT NOT NULL, coupon TEXT NOT NULL, amount BIGINT NOT NULL)'
      : 'CREATE TABLE delivered (order_id uuid PRIMARY KEY, line1 text NOT NULL, city text NOT NULL, coupon text NOT NULL, amount bigint NOT NULL)',
  );
  return {
    db,
    sql: dialect === 'mariadb' ? (text) => text.replace(/\$\d+/g, '?') : (text) => text,
    bigintText: (column) => (dialect === 'mariadb' ? `CAST(${column} AS CHAR)` : `${column}::text`),
    drop: () => test.drop(),
  };
}

/** Text that breaks whatever normalizes, re-encodes or mis-counts unicode (no NUL: PostgreSQL's text refuses it). */
const LINE1 = [
  'Stra\u00dfe 1', // BMP, precomposed
  'Cafe\u0301 A\u030a \u1100\u1161', // combining acute, ring above, Hangul jamo: not NFC, must stay so
  '\u{1F600} \u{1D11E} \u{20BB7}\u91ce\u5bb6', // astral: emoji, musical symbol, CJK extension B
  '\u{1F469}\u200d\u{1F469}\u200d\u{1F467} \u{1F44D}\u{1F3FD}', // ZWJ family, skin-tone modifier
  '\u05e9\u05dc\u05d5\u05dd \u202eevil\u202c', // right-to-left, bidi override
  '"quoted" \\back\\slash\t\u0001 \u2028\u2029', // JSON escapes, control char, JS line separators
  '\u{10FFFD}', // last plane
].join(' | ');
const CITY = '\u6771\u4eac\u90fd \u{20B9F} \u{1F3D9}\ufe0f';
/** Digits beyond 2^53 travel as a string, unchanged. */
const BIG_AS_STRING = '9007199254740993';

function payload(orderId: string, amountMinor: number): OrderCreatedV2Payload {
  return {
    orderId,
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [
      {
        sku: 'SKU-9007199254740993',
        quantity: Number.MAX_SAFE_INTEGER,
        unitPrice: { amountMinor, currency: 'EUR' },
      },
    ],
    total: { amountMinor, currency: 'EUR' },
    shippingAddress: {
      line1: LINE1,
      line2: '\u{1F4E6}',
      city: CITY,
      postalCode: '\u{1D7D8}\u{1D7D9}',
      country: 'DE',
    },
    couponCode: BIG_AS_STRING,
  };
}

describe.each<Dialect>(['postgres', 'mariadb'])('payload fidelity on %s', (dialect) => {
  let store: Store;
  let relay: OutboxRelay | undefined;
  let broker: InProcessBroker;
  let received: OrderCreatedV2Payload[];

  const handlers: InventoryServiceHandlers = {
    'order.OrderCancelled': { 1: async () => undefined },
    'order.OrderCreated': {
      2: async (envelope, ctx) => {
        const p = envelope.payload;
        received.push(p);
        await ctx.tx.query(
          store.sql(
            'INSERT INTO delivered (order_id, line1, city, coupon, amount) VALUES ($1, $2, $3, $4, $5)',
          ),
          [
            p.orderId,
            p.shippingAddress.line1,
            p.shippingAddress.city,
            p.couponCode,
            p.total.amountMinor,
          ],
        );
      },
    },
  };

  beforeEach(async () => {
    store = await openStore(dialect);
    received = [];
    broker = new InProcessBroker({
      inProcess: {
        retryDelaysMs: [0],
      },
    });
    broker.subscribe(createInventoryServiceConsumer({ db: store.db, handlers }));
    relay = createOutboxRelay({
      db: store.db,
      publisher: broker.relayPublisher(),
      notifyChannel: false,
      pollIntervalMs: 50,
    });
    await relay.start();
  });
  afterEach(async () => {
    await relay?.stop();
    broker?.close();
    await store?.drop();
  });

  it('delivers the largest safe integers, big integers as strings and unicode byte for byte', async () => {
    const written = payload(randomUUID(), Number.MAX_SAFE_INTEGER);
    const envelope = await store.db.transaction((tx) => writeOrderCreatedV2(tx, written));
    await broker.waitFor(() => broker.consumed.length >= 1);

    // The published body is UTF-8 JSON carrying the very characters (no escapes to re-decode,
    // no normalization) and the digits as written.
    const [message] = broker.published;
    expect(message!.messageId).toBe(envelope.messageId);
    const body = Buffer.from(message!.body, 'utf8');
    for (const text of [LINE1.split(' | ')[2]!, '\u0065\u0301', CITY, '9007199254740991']) {
      expect(body.includes(Buffer.from(text, 'utf8'))).toBe(true);
    }
    expect(decodeMessageBody(body)).toMatchObject({ payload: written });

    // The handler got exactly what was written, and so did the service's table.
    expect(received).toEqual([written]);
    const got = received[0]!;
    expect(Buffer.from(got.shippingAddress.line1)).toEqual(Buffer.from(LINE1));
    expect(got.shippingAddress.line1.normalize('NFC')).not.toBe(got.shippingAddress.line1);
    const { rows } = await store.db.query(
      `SELECT line1, city, coupon, ${store.bigintText('amount')} AS amount FROM delivered`,
    );
    expect(rows).toEqual([
      { line1: LINE1, city: CITY, coupon: BIG_AS_STRING, amount: '9007199254740991' },
    ]);
    expect(broker.deadLettered).toEqual([]);
  });

  it('refuses an integer beyond 2^53 at write time: a validation error, nothing written, nothing published', async () => {
    const unsafe = 2 ** 53 + 2; // exactly representable: JSON would carry these digits
    const written = payload(randomUUID(), unsafe);
    const quantities = { ...written.lines[0]!, quantity: 2 ** 60 };
    const attempt = store.db.transaction(async (tx) => {
      // The business row of the same transaction: it must roll back with the refused event.
      await tx.query(
        store.sql(
          'INSERT INTO delivered (order_id, line1, city, coupon, amount) VALUES ($1, $2, $3, $4, $5)',
        ),
        [written.orderId, 'x', 'y', 'z', 1],
      );
      return writeOrderCreatedV2(tx, { ...written, lines: [quantities] });
    });
    const error = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    const { violations, message } = error as ValidationError;
    expect(violations.map((v) => v.pointer).sort()).toEqual([
      '/lines/0/quantity',
      '/lines/0/unitPrice/amountMinor',
      '/total/amountMinor',
    ]);
    expect(message).toContain('/total/amountMinor is 9007199254740994, beyond ±(2^53 − 1)');
    expect(message).toContain('/lines/0/quantity is 1152921504606847000, beyond ±(2^53 − 1)');
    expect(message).toContain('as strings of digits');

    for (const table of ['outbox_event', 'delivered']) {
      const { rows } = await store.db.query<{ n: unknown }>(`SELECT count(*) AS n FROM ${table}`);
      expect(Number(rows[0]!.n), table).toBe(0);
    }
    // The relay had nothing to publish; the largest safe integer still goes through.
    await store.db.transaction((tx) =>
      writeOrderCreatedV2(tx, payload(randomUUID(), Number.MAX_SAFE_INTEGER)),
    );
    await broker.waitFor(() => broker.consumed.length >= 1);
    expect(broker.published).toHaveLength(1);
    expect(broker.deadLettered).toEqual([]);
    expect(received).toHaveLength(1);
  });

  it('still refuses, on the consumer side, an unsafe integer a foreign producer published', () => {
    expect(() =>
      decodeMessageBody(Buffer.from('{"payload":{"amountMinor":9007199254740994}}')),
    ).toThrow(/2\^53/);
  });
});

describe('numbers JSON cannot carry faithfully', () => {
  // A descriptor whose schema accepts anything: the rule holds whatever the schema allows.
  const anything: EventVersionDescriptor<'test.Anything', 1, Record<string, unknown>> = {
    eventType: 'test.Anything',
    schemaVersion: 1,
    aggregateType: 'Thing',
    aggregateIdProperty: 'id',
    validatePayload: (value) => ({ ok: true, value: value as Record<string, unknown> }),
    readPayload: (value) => ({ ok: true, value: value as Record<string, unknown> }),
  };

  it('are refused by every envelope constructor: beyond ±(2^53 − 1), NaN, ±Infinity', () => {
    const refused = (value: unknown) => {
      try {
        createEnvelope(anything, { id: 'a', deep: { list: [1, value] } });
        return undefined;
      } catch (error) {
        return (error as ValidationError).violations;
      }
    };
    for (const value of [2 ** 53, -(2 ** 53), 1e21, 1e300, Number.NaN, Infinity, -Infinity]) {
      expect(refused(value), String(value)).toEqual([
        { pointer: '/deep/list/1', keyword: 'type', message: expect.any(String) as string },
      ]);
    }
    for (const value of [
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      0.5,
      1e-300,
      '9007199254740993',
    ]) {
      expect(refused(value), String(value)).toBeUndefined();
    }
  });
});
