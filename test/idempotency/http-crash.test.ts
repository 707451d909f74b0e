/**
 * The orders service in its own process, on real PostgreSQL and MariaDB, SIGKILLed in the middle
 * of a request; the client retries with the same Idempotency-Key against the restarted service.
 * - Killed inside the handler, before the commit: nothing of the execution survives (the database
 *   rolls back the dead connection's transaction), the key stays IN_PROGRESS until its lease
 *   expires (the retry is answered 409 meanwhile), then the retry executes once more: one order,
 *   one event, with the messageId the killed execution had written.
 * - Killed after the commit, before the response: the retry gets the stored response, exactly
 *   what the killed process was about to send, and executes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  defaultRequestFingerprint,
  IDEMPOTENT_REPLAYED_HEADER,
  migrateIdempotency,
  requestEventMessageId,
} from 'evgen/runtime';
import { openOutbox, outboxRows, type OutboxFixture } from '../outbox/support/dialects.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import {
  countRows as count,
  createOrdersTable,
  FRAMEWORKS,
  type Framework,
} from './support/orders-app.js';

const server = fileURLToPath(new URL('./support/orders-server.ts', import.meta.url));
const SERVER_DIALECTS = ['postgres', 'mariadb'] as const;
const noPglite = { get: () => Promise.reject(new Error('server dialects only')) };
/** Long enough that the restarted service usually still finds the key leased (answers 409). */
const LEASE_MS = 4_000;
const ORDER = { sku: 'SKU-9', quantity: 3 };

/** A running orders-server child and what it printed. */
interface ServerChild {
  readonly process: ChildProcessWithoutNullStreams;
  readonly url: string;
  /** Lines printed so far. */
  readonly lines: string[];
  /** Resolves with the first line starting with `prefix`. */
  line(prefix: string): Promise<string>;
  /** Resolves with the signal that ended the process. */
  readonly exited: Promise<NodeJS.Signals | null>;
}

async function startServer(
  framework: Framework,
  f: OutboxFixture,
  crash: 'before-commit' | 'after-commit' | 'none',
): Promise<ServerChild> {
  const child = spawnTypeScript(
    server,
    [framework, f.url!, f.schema, String(LEASE_MS), crash],
    'ignore',
  );
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
  let stderr = '';
  let buffered = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => line.startsWith(w.prefix))) waiter.resolve(line);
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  const line = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen !== undefined) {
        resolve(seen);
        return;
      }
      waiters.push({ prefix, resolve });
      void exited.then((signal) => {
        reject(new Error(`orders server ended (${String(signal)}) before "${prefix}": ${stderr}`));
      });
    });
  const url = (await line('listening ')).slice('listening '.length);
  return { process: child, url, lines, line, exited };
}

async function kill(child: ServerChild): Promise<void> {
  child.process.kill('SIGKILL');
  expect(await child.exited).toBe('SIGKILL');
}

interface Reply {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

async function post(url: string, key: string): Promise<Reply> {
  const response = await fetch(`${url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(ORDER),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

describe.each(SERVER_DIALECTS.flatMap((d) => FRAMEWORKS.map((fw) => [d, fw] as const)))(
  'SIGKILL during an idempotent request on %s with %s',
  { timeout: 180_000 },
  (dialect, framework: Framework) => {
    let fixture: OutboxFixture | undefined;
    const children: ServerChild[] = [];
    afterEach(async () => {
      for (const child of children.splice(0)) {
        if (child.process.exitCode === null && child.process.signalCode === null) await kill(child);
      }
      await fixture?.close();
      fixture = undefined;
    });
    const setUp = async () => {
      const f = (fixture = await openOutbox(dialect, noPglite));
      await migrateIdempotency(f.db, { schema: f.schema });
      await createOrdersTable(f.db, f.schema);
      return f;
    };
    const start = async (f: OutboxFixture, crash: 'before-commit' | 'after-commit' | 'none') => {
      const child = await startServer(framework, f, crash);
      children.push(child);
      return child;
    };
    const keyRow = async (f: OutboxFixture, key: string) =>
      (
        await f.db.query<{ status: string; attempts: number | string }>(
          f.sql(
            `SELECT status, attempts FROM ${f.table('idempotency_key')} WHERE idempotency_key = $1`,
          ),
          [key],
        )
      ).rows.map((row) => ({ status: row.status, attempts: Number(row.attempts) }));
    /** A timestamp column of the key's row as epoch ms (the database's clock). */
    const keyTime = async (f: OutboxFixture, key: string, column: string) =>
      Number(
        (
          await f.db.query<{ ms: number | string }>(
            f.sql(
              `SELECT ${f.epochMs(column)} AS ms FROM ${f.table('idempotency_key')} WHERE idempotency_key = $1`,
            ),
            [key],
          )
        ).rows[0]!.ms,
      );

    it('killed before the commit: after the lease the retry executes once; one order, one event', async () => {
      const f = await setUp();
      const key = `crash-before-${framework}`;
      const doomed = await start(f, 'before-commit');
      // The connection dies with the process: the client sees an error, never an answer.
      const lost = post(doomed.url, key).then(
        (reply) => reply,
        (error: unknown) => error,
      );
      const crashPoint = await doomed.line('crash-point before-commit ');
      const killedMessageId = crashPoint.split(' ')[2];
      await kill(doomed);
      expect(await lost).toBeInstanceOf(Error);
      // The dead connection's transaction was rolled back; the key is still leased.
      expect(await count(f.db, f.table('orders'))).toBe(0);
      expect(await outboxRows(f)).toHaveLength(0);
      expect(await keyRow(f, key)).toEqual([{ status: 'IN_PROGRESS', attempts: 1 }]);
      const leaseEnd = await keyTime(f, key, 'locked_until');

      const restarted = await start(f, 'none');
      const statuses: number[] = [];
      let reply: Reply;
      for (;;) {
        reply = await post(restarted.url, key);
        statuses.push(reply.status);
        if (reply.status !== 409) break;
        expect(reply.headers.get('retry-after')).not.toBeNull();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Only 409s (the lease still held) before the one that ran the order.
      expect(statuses.slice(0, -1).every((status) => status === 409)).toBe(true);
      expect(reply.status).toBe(201);
      expect(reply.headers.get(IDEMPOTENT_REPLAYED_HEADER)).toBeNull();
      const body = JSON.parse(reply.text) as {
        orderId: string;
        messageId: string;
        attempt: number;
      };
      expect(body.attempt).toBe(2);
      // Taken over only once the dead execution's lease had run out (both times the database's).
      expect(await keyTime(f, key, 'completed_at')).toBeGreaterThanOrEqual(leaseEnd);
      // The messageId is derived from the intent, so the killed execution had written the same one.
      const fingerprint = defaultRequestFingerprint({
        method: 'POST',
        path: '/orders',
        body: ORDER,
      });
      expect(body.messageId).toBe(requestEventMessageId(key, fingerprint, 0));
      expect(body.messageId).toBe(killedMessageId);
      expect(restarted.lines.filter((l) => l === 'executing')).toHaveLength(1);

      const again = await post(restarted.url, key);
      expect(again.status).toBe(201);
      expect(again.headers.get(IDEMPOTENT_REPLAYED_HEADER)).toBe('true');
      expect(again.text).toBe(reply.text);
      expect(restarted.lines.filter((l) => l === 'executing')).toHaveLength(1);
      expect(await count(f.db, f.table('orders'))).toBe(1);
      expect((await outboxRows(f)).map((row) => row.event_id)).toEqual([body.messageId]);
      expect(await keyRow(f, key)).toEqual([{ status: 'COMPLETED', attempts: 2 }]);
    });

    it('killed after the commit, before the response: the retry gets the stored response', async () => {
      const f = await setUp();
      const key = `crash-after-${framework}`;
      const doomed = await start(f, 'after-commit');
      // The connection dies with the process: the client sees an error, never an answer.
      const lost = post(doomed.url, key).then(
        (reply) => reply,
        (error: unknown) => error,
      );
      const crashPoint = await doomed.line('crash-point after-commit ');
      const unsent = crashPoint.slice('crash-point after-commit '.length);
      await kill(doomed);
      expect(await lost).toBeInstanceOf(Error);
      expect(await count(f.db, f.table('orders'))).toBe(1);
      expect(await keyRow(f, key)).toEqual([{ status: 'COMPLETED', attempts: 1 }]);

      const restarted = await start(f, 'none');
      const reply = await post(restarted.url, key);
      expect(reply.status).toBe(201);
      expect(reply.headers.get(IDEMPOTENT_REPLAYED_HEADER)).toBe('true');
      expect(reply.text).toBe(unsent);
      const body = JSON.parse(reply.text) as {
        orderId: string;
        messageId: string;
        attempt: number;
      };
      expect(reply.headers.get('location')).toBe(`/orders/${body.orderId}`);
      expect(body.attempt).toBe(1);
      expect(restarted.lines.filter((l) => l === 'executing')).toHaveLength(0);
      expect(await count(f.db, f.table('orders'))).toBe(1);
      expect((await outboxRows(f)).map((row) => row.event_id)).toEqual([body.messageId]);
    });
  },
);
