/**
 * A binlog reader without Kafka Connect: `mariadb-binlog --read-from-remote-server --stop-never`
 * connects to a MariaDB server as a replica (a `Binlog Dump` thread, as Debezium's connector
 * does) and streams the binlog from its first file (its output is discarded). For tests of what
 * the server and evgen do while something reads the binlog, or nothing does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import mysql from 'mysql2/promise';

export interface BinlogReader {
  /** Disconnects the reader. */
  stop(): Promise<void>;
}

/** Starts a reader on the server at `url` (`mysql://root@127.0.0.1:<port>/…`), once connected. */
export async function startBinlogReader(url: string, serverId = 7301): Promise<BinlogReader> {
  const { hostname, port, username } = new URL(url);
  const admin = await mysql.createConnection(url);
  let first: string;
  try {
    const [logs] = await admin.query('SHOW BINARY LOGS');
    first = (logs as { Log_name: string }[])[0]!.Log_name;
  } finally {
    await admin.end();
  }
  const child: ChildProcess = spawn(
    'mariadb-binlog',
    [
      '--no-defaults',
      '--read-from-remote-server',
      `--host=${hostname}`,
      `--port=${port}`,
      `--user=${decodeURIComponent(username) || 'root'}`,
      '--stop-never',
      `--stop-never-slave-server-id=${serverId}`,
      first,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  // Connected once the server lists its dump thread.
  const deadline = Date.now() + 15_000;
  const probe = await mysql.createConnection(url);
  try {
    for (;;) {
      const [rows] = await probe.query(
        "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
      );
      if (Number((rows as { n: number | string }[])[0]?.n) > 0) break;
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`mariadb-binlog did not connect as a binlog reader: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await probe.end();
  }
  return { stop };
}
