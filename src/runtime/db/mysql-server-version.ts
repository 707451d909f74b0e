/**
 * The oldest MySQL and MariaDB servers evgen runs on: the relay claims rows with
 * `FOR UPDATE SKIP LOCKED`, which MySQL has since 8.0.1 and MariaDB since 10.6. An older server
 * is refused before any table is created, with the version it reported.
 */
import type { Queryable } from './database.js';

const MIN_MYSQL_VERSION = [8, 0, 1] as const;
const MIN_MARIADB_VERSION = [10, 6, 0] as const;

/** The server cannot run evgen's SQL; `serverVersion` is what it reported. Not retryable. */
export class UnsupportedDatabaseVersionError extends Error {
  readonly retryable = false;
  constructor(
    readonly serverVersion: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsupportedDatabaseVersionError';
  }
}

interface MysqlServerVersion {
  readonly product: 'MySQL' | 'MariaDB';
  readonly version: readonly [number, number, number];
  /** `VERSION()` as the server reported it, e.g. `10.11.19-MariaDB-0+deb12u1`. */
  readonly reported: string;
}

/** Parses `VERSION()`: MariaDB says so in the text (also behind a `5.5.5-` replication prefix). */
function parseMysqlVersion(reported: string): MysqlServerVersion {
  const product = /mariadb/i.test(reported) ? 'MariaDB' : 'MySQL';
  const text = reported.replace(/^5\.5\.5-/, '');
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (match === null) {
    throw new UnsupportedDatabaseVersionError(
      reported,
      `cannot read the server version ${JSON.stringify(reported)}: evgen needs MySQL ≥ 8.0.1 or MariaDB ≥ 10.6`,
    );
  }
  return {
    product,
    version: [Number(match[1]), Number(match[2]), Number(match[3])],
    reported,
  };
}

function atLeast(version: readonly number[], minimum: readonly number[]): boolean {
  for (let index = 0; index < minimum.length; index++) {
    if (version[index]! !== minimum[index]!) return version[index]! > minimum[index]!;
  }
  return true;
}

/** Throws UnsupportedDatabaseVersionError unless the server has `FOR UPDATE SKIP LOCKED`. */
export function checkMysqlVersion(reported: string): MysqlServerVersion {
  const server = parseMysqlVersion(reported);
  const minimum = server.product === 'MariaDB' ? MIN_MARIADB_VERSION : MIN_MYSQL_VERSION;
  if (!atLeast(server.version, minimum)) {
    throw new UnsupportedDatabaseVersionError(
      reported,
      `${server.product} ${server.version.join('.')} is too old for evgen: the outbox relay claims rows with FOR UPDATE SKIP LOCKED, which needs ${server.product} ≥ ${minimum.join('.')}. Upgrade the server.`,
    );
  }
  return server;
}

/**
 * A server setting under which evgen's SQL cannot run; `setting` and `value` are what the server
 * reported. Not retryable: the server's configuration has to change.
 */
export class UnsupportedDatabaseSettingError extends Error {
  readonly retryable = false;
  constructor(
    readonly setting: string,
    readonly value: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsupportedDatabaseSettingError';
  }
}

/**
 * Throws UnsupportedDatabaseSettingError when the server writes a binary log by statement:
 * InnoDB refuses to log a READ COMMITTED transaction that way (error 1665), and every
 * transaction evgen runs is READ COMMITTED, so each outbox write, claim and inbox row would fail
 * on the server only once traffic starts. ROW and MIXED (the default) log such transactions by row.
 */
export function checkMysqlBinlog(product: string, logBin: string, binlogFormat: string): void {
  // `@@log_bin` reads 1 or ON depending on how it is asked.
  if (/^(1|ON)$/i.test(logBin) && binlogFormat.toUpperCase() === 'STATEMENT') {
    throw new UnsupportedDatabaseSettingError(
      'binlog_format',
      binlogFormat,
      `${product} writes its binary log by statement (binlog_format = STATEMENT), and InnoDB refuses to log a READ COMMITTED transaction that way (error 1665): every outbox write, relay claim and inbox row evgen makes would fail. Set binlog_format = MIXED (the default) or ROW in the server's configuration (SET GLOBAL binlog_format = 'MIXED' applies to new connections).`,
    );
  }
}

/**
 * Asks the server for its version and its binary log settings and checks them (see
 * checkMysqlVersion and checkMysqlBinlog), before a migration creates anything.
 */
export async function requireSkipLocked(db: Queryable): Promise<MysqlServerVersion> {
  const result = await db.query<{ version: string; log_bin: string; binlog_format: string }>(
    'SELECT VERSION() AS version, CAST(@@log_bin AS CHAR) AS log_bin, CAST(@@binlog_format AS CHAR) AS binlog_format',
  );
  const row = result.rows[0];
  const server = checkMysqlVersion(String(row?.version ?? ''));
  checkMysqlBinlog(server.product, String(row?.log_bin ?? ''), String(row?.binlog_format ?? ''));
  return server;
}
