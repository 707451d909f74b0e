/**
 * A private PostgreSQL server with logical decoding (`wal_level = logical`; `replica` if asked)
 * for CDC tests: its own data dir under the temp folder, its own port, no Unix socket, removed by
 * `destroy()`. The shared
 * server on 5432 is never touched (its wal_level stays as it is).
 *
 * initdb refuses to run as root, so as root the server runs as the `postgres` user (`runuser`),
 * and the temp folder is made traversable for it.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePorts, tail } from '../kafka/broker.js';

export interface LogicalPostgres {
  readonly host: string;
  readonly port: number;
  /** `evgen`: created at start. */
  readonly database: string;
  readonly user: string;
  /** `postgres://postgres@127.0.0.1:<port>/evgen` */
  readonly url: string;
  /** Drops the given replication slots if they still exist (Debezium never drops its own). */
  dropReplicationSlots(slots: readonly string[]): Promise<void>;
  /** Stops the server and deletes its data dir. */
  destroy(): Promise<void>;
}

function pgBinDir(): string {
  const result = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`pg_config --bindir failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** Runs a PostgreSQL server tool, as `postgres` when we are root. */
function asServerUser(tool: string, args: readonly string[], log?: string): void {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', tool, ...args]]
    : [tool, [...args]];
  const result = spawnSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${tool} ${args.join(' ')} failed: ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}` +
        (log ? `\nserver log:\n${tail(log)}` : ''),
    );
  }
}

export interface LogicalPostgresOptions {
  /**
   * The server's wal_level (default `logical`); `replica` makes a server whose log no CDC
   * connector can decode, as many installs are.
   */
  readonly walLevel?: 'logical' | 'replica';
}

export async function startLogicalPostgres(
  options: LogicalPostgresOptions = {},
): Promise<LogicalPostgres> {
  const bin = pgBinDir();
  const root = mkdtempSync(join(tmpdir(), 'evgen-logical-pg-'));
  // mkdtemp makes 0700; the postgres user must traverse it.
  chmodSync(root, 0o711);
  const [port] = await freePorts(1);
  const asRoot = process.getuid?.() === 0;
  const owned = join(root, 'pg');
  mkdirSync(owned);
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(owned, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const data = join(owned, 'data');
  const serverLog = join(owned, 'server.log');
  const stop = () => asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
  try {
    asServerUser(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
    ]);
    appendFileSync(
      join(data, 'postgresql.conf'),
      [
        '',
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        "unix_socket_directories = ''",
        `wal_level = ${options.walLevel ?? 'logical'}`,
        'max_wal_senders = 10',
        'max_replication_slots = 10',
        'shared_buffers = 32MB',
        'fsync = off',
        '',
      ].join('\n'),
    );
    asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', serverLog, '-w', 'start'], serverLog);
  } catch (error) {
    try {
      stop();
    } catch {
      // never started
    }
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query('CREATE DATABASE evgen');
  await client.end();
  const url = `postgres://postgres@127.0.0.1:${port}/evgen`;
  return {
    host: '127.0.0.1',
    port: port!,
    database: 'evgen',
    user: 'postgres',
    url,
    async dropReplicationSlots(slots) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        // A slot stays active for a moment after its client went away; it cannot be dropped then.
        const deadline = Date.now() + 15_000;
        for (;;) {
          const { rows } = await c.query<{ slot_name: string; active: boolean }>(
            'SELECT slot_name, active FROM pg_replication_slots WHERE slot_name = ANY($1::text[])',
            [slots],
          );
          for (const row of rows.filter((r) => !r.active)) {
            await c.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]);
          }
          if (rows.every((r) => !r.active)) return;
          if (Date.now() > deadline) {
            throw new Error(
              `replication slots still active: ${rows.map((r) => r.slot_name).join(', ')}`,
            );
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        await c.end();
      }
    },
    async destroy() {
      try {
        stop();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
