/**
 * Consumer-side fault injection with a real process killed by SIGKILL on the
 * real PostgreSQL and MariaDB: before the transaction, after the inbox insert, after the business write
 * (uncommitted → the redelivery handles it, one effect) and after the commit before the ack
 * (committed, unacked → the redelivery is a duplicate, still one effect).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createInboxConsumer,
  migrateInbox,
  mysqlDatabase,
  postgresDatabase,
  type Database,
  type Transaction,
} from 'evgen/runtime';
import { createMariadbDatabase } from '../support/mariadb.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { KILL_POINTS, recordParcel, type KillPoint } from './support/kill-points.js';
import { countRows } from './support/backends.js';
import { parcelDescriptors, sentV2 } from './support/test-events.js';

const child = fileURLToPath(new URL('./support/crash-consumer.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

interface Server {
  readonly schema: string;
  readonly db: Database;
  readonly url: string;
  /** `schema.name` quoted for the server. */
  readonly table: (name: string) => string;
  drop(): Promise<void>;
}
const servers = {} as Record<'postgres' | 'mariadb', Server>;
beforeAll(async () => {
  const pg = await createTestSchema('evgen_inbox_kill');
  servers.postgres = {
    schema: pg.schema,
    db: postgresDatabase(pg.pool),
    url: TEST_DATABASE_URL,
    table: (name) => `"${pg.schema}"."${name}"`,
    drop: () => pg.drop(),
  };
  const maria = await createMariadbDatabase('evgen_inbox_kill');
  servers.mariadb = {
    schema: maria.schema,
    db: mysqlDatabase(maria.pool),
    url: maria.url,
    table: (name) => `\`${maria.schema}\`.\`${name}\``,
    drop: () => maria.drop(),
  };
  for (const [kind, server] of Object.entries(servers)) {
    await migrateInbox(server.db, { schema: server.schema });
    await server.db.query(
      kind === 'mariadb'
        ? `CREATE TABLE ${server.table('effects')} (id BIGINT AUTO_INCREMENT PRIMARY KEY, message_id VARCHAR(255) NOT NULL, consumer VARCHAR(255) NOT NULL)`
        : `CREATE TABLE ${server.table('effects')} (id serial PRIMARY KEY, message_id text NOT NULL, consumer text NOT NULL)`,
    );
  }
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.drop()));
});

function runUntilKilled(test: Server, envelopeJson: string, point: KillPoint): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(tsx, [child, test.url, test.schema, envelopeJson, point], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // tsx runs the script in a child node process and reports its SIGKILL as exit code 128 + 9.
    proc.on('exit', (code, signal) =>
      signal === 'SIGKILL' || code === 137
        ? resolve(output.trim())
        : reject(new Error(`child exited with ${code}: ${output}`)),
    );
  });
}

describe.each(['postgres', 'mariadb'] as const)(
  'a consumer process killed mid-delivery on %s',
  (kind) => {
    it.each(KILL_POINTS)(
      'killed %s: the redelivery leaves exactly one business effect',
      async (point) => {
        const test = servers[kind];
        const { db } = test;
        const envelope = sentV2();
        const json = JSON.stringify(envelope);
        expect(await runUntilKilled(test, json, point)).toBe(`killed at ${point}`);
        const committed = point === 'after-commit-before-ack';
        const effects = () =>
          countRows(db, test.table('effects'), 'message_id = $1', [envelope.messageId]);
        const inboxRows = () =>
          countRows(db, test.table('inbox_message'), 'message_id = $1', [envelope.messageId]);
        expect(await inboxRows()).toBe(committed ? 1 : 0);
        expect(await effects()).toBe(committed ? 1 : 0);

        // The broker redelivers the unacknowledged message to a fresh consumer process.
        const consumer = createInboxConsumer(
          { name: 'tracker', descriptors: parcelDescriptors },
          {
            db,
            inbox: { schema: test.schema },
            handlers: {
              'parcel.ParcelSent': {
                2: (e: { messageId: string }, ctx: { tx: Transaction }) =>
                  recordParcel(ctx.tx, e.messageId, test.schema),
              },
              'parcel.ParcelLost': { 1: async () => undefined },
            },
          },
        );
        expect(await consumer.handle(json)).toBe(committed ? 'duplicate' : 'handled');
        expect(await effects()).toBe(1);
        expect(await inboxRows()).toBe(1);
      },
    );
  },
);
