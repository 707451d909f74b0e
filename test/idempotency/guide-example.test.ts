/**
 * The HTTP idempotency guide's Express service, run as written (a child process, as a reader runs
 * `npx tsx service.ts` beside the generated code) on the real PostgreSQL, in a schema of its own:
 * a request and its retry with one Idempotency-Key → one cancellation row, one outbox event
 * carrying the key, the retry answered with the stored response; another key → another intent.
 */
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, blockUnder } from '../docs/markdown-blocks.js';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { spawnTypeScript } from '../support/typescript-child.js';

/** The catalog's OrderCancelled requires a UUID orderId. */
const ORDER_ID = '5b0c6a3e-2f4d-4e8a-9c1b-7d2e3f4a5b6c';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

it('the Express service of docs/guides/http-idempotency.md runs: one intent, one row, one event', async () => {
  const block = blockUnder('docs/guides/http-idempotency.md', 'A service with Express', 'ts');
  const schema: TestSchema = await createTestSchema('evgen_guide_idem');
  cleanup.push(() => schema.drop());
  const dir = join(REPO, 'test/idempotency/fixtures', `guide-${process.pid}`);
  await mkdir(dir, { recursive: true });
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  await symlink(join(REPO, 'generated'), join(dir, 'generated'), 'dir');
  await writeFile(join(dir, 'service.ts'), block.code);

  const port = await freePort();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path="${schema.schema}"`);
  const child = spawnTypeScript(join(dir, 'service.ts'), [], 'ignore', {
    DATABASE_URL: url.href,
    PORT: String(port),
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  cleanup.push(async () => {
    child.kill('SIGKILL');
    await exited;
  });

  const cancel = async (key: string, orderId: string) => {
    const response = await fetch(`http://127.0.0.1:${port}/orders/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ orderId, reason: 'customer_request' }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  // The service migrates, then listens: ask until it answers (or it died).
  let first: Awaited<ReturnType<typeof cancel>> | undefined;
  while (first === undefined) {
    if (exitCode !== undefined)
      throw new Error(`the guide's service exited ${String(exitCode)}: ${stderr}`);
    first = await cancel('9f1c2d6e-1b7a-4c55-9a0e-3d1f2b4c5a6e', ORDER_ID).catch(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return undefined;
    });
  }
  expect(first.status, `${first.text}\n${stderr}`).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  const body = JSON.parse(first.text) as { cancellationId: string; messageId: string };
  expect(first.headers.get('location')).toBe(`/cancellations/${body.cancellationId}`);

  const retry = await cancel('9f1c2d6e-1b7a-4c55-9a0e-3d1f2b4c5a6e', ORDER_ID);
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.text).toBe(first.text);
  const other = await cancel('another-intent', ORDER_ID);
  expect(other.status).toBe(201);
  expect(JSON.parse(other.text)).not.toEqual(body);

  const rows = await schema.pool.query<{ order_id: string }>(
    `SELECT order_id FROM "${schema.schema}".cancellation`,
  );
  expect(rows.rows).toEqual([{ order_id: ORDER_ID }, { order_id: ORDER_ID }]);
  const events = await schema.pool.query<{ event_id: string; key: string }>(
    `SELECT event_id::text AS event_id, headers ->> 'idempotency-key' AS key FROM "${schema.schema}".outbox_event ORDER BY id`,
  );
  expect(events.rows).toEqual([
    { event_id: body.messageId, key: '9f1c2d6e-1b7a-4c55-9a0e-3d1f2b4c5a6e' },
    {
      event_id: (JSON.parse(other.text) as { messageId: string }).messageId,
      key: 'another-intent',
    },
  ]);
}, 120_000);
