/**
 * A PgBouncer in front of the machine's PostgreSQL, started as a child process with its own ini
 * in a temporary directory on a free port. A missing pgbouncer binary fails the test loudly
 * (never a skip): CI installs it (.ci/run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './kafka/broker.js';
import { TEST_DATABASE_URL } from './postgres.js';

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

export interface PgBouncerOptions {
  /** `transaction` (default) or `session`. */
  readonly poolMode?: 'transaction' | 'session';
  /** Server connections per database/user pair (default 2). */
  readonly defaultPoolSize?: number;
  /** e.g. `DISCARD ALL` (session mode). */
  readonly serverResetQuery?: string;
}

export interface PgBouncer {
  /** The test database through PgBouncer. */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const binary = process.env.EVGEN_PGBOUNCER ?? CANDIDATES.find((path) => existsSync(path));
  if (binary === undefined) {
    throw new Error(
      `pgbouncer is not installed (looked for ${CANDIDATES.join(', ')}): apt-get install -y pgbouncer, or set EVGEN_PGBOUNCER`,
    );
  }
  const server = new URL(TEST_DATABASE_URL);
  const database = server.pathname.slice(1);
  const [port] = await freePorts(1);
  const dir = await mkdtemp(join(tmpdir(), 'evgen-pgbouncer-'));
  // PgBouncer refuses to run as root; as root it is told to switch to postgres (-u), which must
  // be able to read the directory. Logs go to stderr (a log file root created would be unwritable).
  await chmod(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(
    ini,
    [
      '[databases]',
      `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${decodeURIComponent(server.username) || 'postgres'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.defaultPoolSize ?? 2}`,
      'max_client_conn = 200',
      `server_reset_query = ${options.serverResetQuery ?? ''}`,
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini];
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`pgbouncer did not start within 10 s:\n${log}`)),
      10_000,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('listening on 127.0.0.1')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pgbouncer exited (${code}) before listening:\n${log}`));
    });
  });
  child.stderr!.resume();
  const url = new URL(TEST_DATABASE_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
