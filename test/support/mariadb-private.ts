/**
 * A private MariaDB server for tests that must stop, crash or reconfigure the server (a restart
 * under a running relay, a binlog for CDC): its own data dir under the temp folder, its own port
 * on 127.0.0.1, removed by `destroy()`. The shared server on 3306 is never touched.
 *
 * The data dir is made by `mariadb-install-db`; the server runs with `--skip-grant-tables`, so
 * `root` with no password (or any user) connects over TCP without an account being set up.
 * mariadbd refuses to run as root unless told a user, so as root it runs as `mysql` (the data dir
 * is owned by it and the temp folder made traversable). `--no-defaults` keeps the machine's
 * my.cnf (its socket, pid file and data dir are the shared server's) out of it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { freePorts, tail } from './kafka/broker.js';

export interface PrivateMariadbOptions {
  /**
   * Extra mariadbd arguments, given at every (re)start, e.g.
   * `['--log-bin=binlog', '--binlog-format=ROW', '--server-id=1']` for a CDC source.
   */
  readonly serverArgs?: readonly string[];
  /** Database created at the first start (default `test`). */
  readonly database?: string;
  /** How long a (re)start may take before it fails with the server's log (default 60 s). */
  readonly startTimeoutMs?: number;
}

export interface PrivateMariadb {
  readonly host: string;
  /** The same port across restarts, so clients reconnect to the address they know. */
  readonly port: number;
  readonly database: string;
  /** `mysql://root@127.0.0.1:<port>/<database>` */
  readonly url: string;
  /** The server's error log (appended to across restarts). */
  readonly logFile: string;
  /** The data dir (kept across restarts, deleted by destroy()). */
  readonly dataDir: string;
  /** The running server's process id (undefined while stopped). */
  pid(): number | undefined;
  /**
   * Stops the server. `SIGTERM` (default) is a clean shutdown; `SIGKILL` is a crash, after which
   * the next start runs InnoDB's crash recovery. Resolves once the process is gone.
   */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts the stopped server again on the same port and data dir; resolves when it answers. */
  start(): Promise<void>;
  /** stop(signal) then start(). */
  restart(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Stops the server (SIGKILL if it does not stop in time) and deletes its folder. */
  destroy(): Promise<void>;
}

const MARIADBD = '/usr/sbin/mariadbd';
const INSTALL_DB = 'mariadb-install-db';

/** Settings for a small, quick server that still keeps committed data across a crash. */
const BASE_ARGS = [
  '--no-defaults',
  '--bind-address=127.0.0.1',
  '--skip-name-resolve',
  '--skip-grant-tables',
  '--character-set-server=utf8mb4',
  '--collation-server=utf8mb4_general_ci',
  '--innodb-buffer-pool-size=32M',
  '--innodb-log-file-size=16M',
  '--performance-schema=OFF',
];

function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = spawnSync('id', ['-u', 'mysql'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'mysql'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('running as root, but there is no `mysql` user for mariadbd to run as');
  }
  return { name: 'mysql', uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startPrivateMariadb(
  options: PrivateMariadbOptions = {},
): Promise<PrivateMariadb> {
  const database = options.database ?? 'test';
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const root = mkdtempSync(join(tmpdir(), 'evgen-mariadb-'));
  // mkdtemp makes 0700; the mysql user must traverse it.
  chmodSync(root, 0o711);
  const owned = join(root, 'db');
  mkdirSync(owned);
  const user = serverUser();
  if (user) chownSync(owned, user.uid, user.gid);
  const dataDir = join(owned, 'data');
  const logFile = join(owned, 'server.log');
  const [port] = await freePorts(1);
  const userArgs = user ? [`--user=${user.name}`] : [];
  const serverArgs = [
    ...BASE_ARGS,
    ...userArgs,
    `--datadir=${dataDir}`,
    `--socket=${join(owned, 'mysqld.sock')}`,
    `--pid-file=${join(owned, 'mysqld.pid')}`,
    `--port=${port}`,
    `--log-error=${logFile}`,
    ...(options.serverArgs ?? []),
  ];

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const install = spawnSync(
    INSTALL_DB,
    [
      '--no-defaults',
      `--datadir=${dataDir}`,
      ...userArgs,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--innodb-log-file-size=16M',
      '--innodb-buffer-pool-size=32M',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (install.error || install.status !== 0) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(
      `${INSTALL_DB} failed (is MariaDB installed?): ${install.error?.message ?? ''}\n${install.stdout}${install.stderr}`,
    );
  }

  const url = `mysql://root@127.0.0.1:${port}/${database}`;
  const adminUrl = `mysql://root@127.0.0.1:${port}/`;

  async function start(): Promise<void> {
    if (child) throw new Error('the private MariaDB is already running');
    // The server writes its own log (--log-error); its stdout/stderr only carry early failures.
    const out = openSync(join(owned, 'stdout.log'), 'a');
    const proc = spawn(MARIADBD, serverArgs, { stdio: ['ignore', out, out] });
    closeSync(out);
    child = proc;
    let gone = false;
    exited = new Promise((resolve) =>
      proc.once('exit', () => {
        gone = true;
        if (child === proc) child = undefined;
        resolve();
      }),
    );
    const deadline = Date.now() + startTimeoutMs;
    let lastError: unknown;
    while (!gone && Date.now() < deadline) {
      try {
        const connection = await mysql.createConnection({ uri: adminUrl, connectTimeout: 2_000 });
        await connection.end();
        return;
      } catch (error) {
        lastError = error;
        await sleep(100);
      }
    }
    if (!gone) proc.kill('SIGKILL');
    await exited;
    throw new Error(
      `private MariaDB on port ${port} did not start (${gone ? 'it exited' : 'timed out'}): ` +
        `${(lastError as Error | undefined)?.message ?? ''}\nserver log:\n${tail(logFile)}\n${tail(join(owned, 'stdout.log'))}`,
    );
  }

  async function stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const proc = child;
    if (!proc) return;
    proc.kill(signal);
    await exited;
  }

  try {
    await start();
    const admin = await mysql.createConnection(adminUrl);
    await admin.query(
      `CREATE DATABASE IF NOT EXISTS \`${database}\` DEFAULT CHARACTER SET utf8mb4`,
    );
    await admin.end();
  } catch (error) {
    await stop('SIGKILL');
    rmSync(root, { recursive: true, force: true });
    throw error;
  }

  return {
    host: '127.0.0.1',
    port: port!,
    database,
    url,
    logFile,
    dataDir,
    pid: () => child?.pid,
    stop,
    start,
    async restart(signal = 'SIGTERM') {
      await stop(signal);
      await start();
    },
    async destroy() {
      const proc = child;
      if (proc) {
        proc.kill('SIGTERM');
        const stopped = await Promise.race([
          exited.then(() => true),
          sleep(30_000).then(() => false),
        ]);
        if (!stopped) {
          proc.kill('SIGKILL');
          await exited;
        }
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
