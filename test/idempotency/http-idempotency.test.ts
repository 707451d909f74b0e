/**
 * Real HTTP servers (Express, Fastify) on real PostgreSQL and MariaDB: one Idempotency-Key → one
 * order row, one outbox event, and the same stored response for every retry; the IETF draft's
 * status codes for another payload (422), a request in flight (409) and bad keys (400).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  idempotentFetch,
  migrateIdempotency,
} from 'evgen/runtime';
import { openOutbox, outboxRows, type OutboxFixture } from '../outbox/support/dialects.js';
import {
  countRows as count,
  createOrdersTable,
  FRAMEWORKS,
  startOrdersApp,
  type Framework,
  type OrdersAppOptions,
  type RunningApp,
} from './support/orders-app.js';

const SERVER_DIALECTS = ['postgres', 'mariadb'] as const;
const noPglite = { get: () => Promise.reject(new Error('server dialects only')) };

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Headers;
}

async function post(
  app: RunningApp,
  key: string | undefined,
  body: unknown,
  signal?: AbortSignal,
): Promise<Reply> {
  const response = await fetch(`${app.url}/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? undefined : JSON.parse(text),
    headers: response.headers,
  };
}

describe.each(SERVER_DIALECTS.flatMap((d) => FRAMEWORKS.map((fw) => [d, fw] as const)))(
  'Idempotency-Key over HTTP on %s with %s',
  { timeout: 180_000 },
  (dialect, framework: Framework) => {
    let fixture: OutboxFixture | undefined;
    const apps: RunningApp[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
      await fixture?.close();
      fixture = undefined;
    });
    const setUp = async () => {
      const f = (fixture = await openOutbox(dialect, noPglite));
      await migrateIdempotency(f.db, { schema: f.schema });
      await createOrdersTable(f.db, f.schema);
      return f;
    };
    const start = async (
      f: OutboxFixture,
      options: Omit<OrdersAppOptions, 'db' | 'schema'> = {},
      db = f.db,
    ) => {
      const app = await startOrdersApp(framework, { db, schema: f.schema, ...options });
      apps.push(app);
      return app;
    };
    const orders = (f: OutboxFixture) => f.table('orders');
    const keys = (f: OutboxFixture) => f.table('idempotency_key');

    it('50 concurrent requests with one key: 1 order, 1 event, 49 identical stored responses', async () => {
      const f = await setUp();
      const app = await start(f, { idempotency: { waitMs: 60_000 } }, f.openAnother(20));
      const replies = await Promise.all(
        Array.from({ length: 50 }, () => post(app, 'req-abc-123', { sku: 'SKU-1', quantity: 2 })),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(50).fill(201));
      const replayed = replies.filter((r) => r.headers.get(IDEMPOTENT_REPLAYED_HEADER) === 'true');
      const fresh = replies.filter((r) => r.headers.get(IDEMPOTENT_REPLAYED_HEADER) === null);
      expect(fresh).toHaveLength(1);
      expect(replayed).toHaveLength(49);
      for (const reply of replayed) {
        expect(reply.body).toEqual(fresh[0]!.body);
        expect(reply.headers.get('location')).toBe(fresh[0]!.headers.get('location'));
      }
      expect(app.executions()).toBe(1);
      expect(await count(f.db, orders(f))).toBe(1);
      const events = await outboxRows(f);
      expect(events.map((row) => row.event_id)).toEqual([
        (fresh[0]!.body as { messageId: string }).messageId,
      ]);
    });

    it('the same key with another body is refused with 422 and writes nothing', async () => {
      const f = await setUp();
      const app = await start(f);
      expect((await post(app, 'k-1', { sku: 'SKU-1', quantity: 2 })).status).toBe(201);
      // Key order and spacing do not make another request; another value does.
      expect((await post(app, 'k-1', { quantity: 2, sku: 'SKU-1' })).status).toBe(201);
      const other = await post(app, 'k-1', { sku: 'SKU-1', quantity: 3 });
      expect(other.status).toBe(422);
      expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(other.body).toMatchObject({ status: 422, title: 'Idempotency-Key reused' });
      expect(app.executions()).toBe(1);
      expect(await count(f.db, orders(f))).toBe(1);
      expect(await outboxRows(f)).toHaveLength(1);
    });

    it('a request in flight is answered 409 with Retry-After; the key then replays', async () => {
      const f = await setUp();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const app = await start(f, { beforeCommit: () => held }, f.openAnother(4));
      const first = post(app, 'k-1', { sku: 'SKU-1', quantity: 1 });
      await expect.poll(() => app.executions()).toBe(1);
      const second = await post(app, 'k-1', { sku: 'SKU-1', quantity: 1 });
      expect(second.status).toBe(409);
      expect(second.headers.get('retry-after')).toBe('1');
      release();
      expect((await first).status).toBe(201);
      const third = await post(app, 'k-1', { sku: 'SKU-1', quantity: 1 });
      expect(third).toMatchObject({ status: 201, body: (await first).body });
      expect(app.executions()).toBe(1);
    });

    it('a client that times out and retries gets one effect', async () => {
      const f = await setUp();
      let slow = true;
      const app = await start(
        f,
        {
          idempotency: { waitMs: 30_000 },
          beforeCommit: async () => {
            if (slow) await new Promise((resolve) => setTimeout(resolve, 1_500));
          },
        },
        f.openAnother(4),
      );
      await expect(
        post(app, 'k-timeout', { sku: 'SKU-1', quantity: 1 }, AbortSignal.timeout(200)),
      ).rejects.toThrow();
      slow = false;
      const retry = await post(app, 'k-timeout', { sku: 'SKU-1', quantity: 1 });
      expect(retry.status).toBe(201);
      expect(app.executions()).toBe(1);
      expect(await count(f.db, orders(f))).toBe(1);
      expect(await outboxRows(f)).toHaveLength(1);
    });

    it('a 5xx is not stored: rolled back, and the retry executes once', async () => {
      const f = await setUp();
      const app = await start(f, { failTimes: 1 });
      const failed = await post(app, 'k-503', { sku: 'SKU-1', quantity: 1 });
      expect(failed.status).toBe(503);
      expect(await count(f.db, orders(f))).toBe(0);
      expect(await outboxRows(f)).toHaveLength(0);
      expect(await count(f.db, keys(f))).toBe(0);
      const retry = await post(app, 'k-503', { sku: 'SKU-1', quantity: 1 });
      expect(retry.status).toBe(201);
      expect(retry.headers.get(IDEMPOTENT_REPLAYED_HEADER)).toBeNull();
      expect(await count(f.db, orders(f))).toBe(1);
      expect(await outboxRows(f)).toHaveLength(1);
    });

    it('two keys are two intents', async () => {
      const f = await setUp();
      const app = await start(f);
      const a = await post(app, 'k-a', { sku: 'SKU-1', quantity: 1 });
      const b = await post(app, 'k-b', { sku: 'SKU-1', quantity: 1 });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.body).not.toEqual(b.body);
      expect(await count(f.db, orders(f))).toBe(2);
      expect(new Set((await outboxRows(f)).map((row) => row.event_id)).size).toBe(2);
    });

    it('missing, empty, over-long and non-ASCII keys: 400, nothing written', async () => {
      const f = await setUp();
      const app = await start(f);
      const body = { sku: 'SKU-1', quantity: 1 };
      for (const key of [
        undefined,
        '',
        '""',
        'x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1),
        'cl\u00e9-1',
      ]) {
        const reply = await post(app, key, body);
        expect(reply.status, `key ${JSON.stringify(key)}`).toBe(400);
        expect(reply.body).toMatchObject({ status: 400, title: 'Bad Idempotency-Key' });
      }
      expect(app.executions()).toBe(0);
      expect(await count(f.db, orders(f))).toBe(0);
      expect(await count(f.db, keys(f))).toBe(0);
      expect(await outboxRows(f)).toHaveLength(0);
    });
  },
);

describe.each(SERVER_DIALECTS)('idempotentFetch on %s', { timeout: 120_000 }, (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('(Request) => Response: fresh, replayed, 422, 400 for a malformed body', async () => {
    const f = (fixture = await openOutbox(dialect, noPglite));
    await migrateIdempotency(f.db, { schema: f.schema });
    let executions = 0;
    const handle = idempotentFetch(
      f.db,
      async (_tx, { body, idempotency }) => {
        executions++;
        return { status: 201, body: { got: body, key: idempotency?.key } };
      },
      { schema: f.schema },
    );
    const request = (body: string, key = 'k-1') =>
      new Request('http://service.test/orders?x=1', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body,
      });
    const first = await handle(request('{"a":1,"b":2}'));
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ got: { a: 1, b: 2 }, key: 'k-1' });
    const again = await handle(request('{ "b": 2, "a": 1 }'));
    expect(again.status).toBe(201);
    expect(again.headers.get(IDEMPOTENT_REPLAYED_HEADER)).toBe('true');
    expect((await handle(request('{"a":2}'))).status).toBe(422);
    expect((await handle(request('{"a":', 'k-2'))).status).toBe(400);
    expect(executions).toBe(1);
  });
});
