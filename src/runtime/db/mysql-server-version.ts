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

/** Asks the server for its version and checks it (see checkMysqlVersion). */
export async function requireSkipLocked(db: Queryable): Promise<MysqlServerVersion> {
  const result = await db.query<{ version: string }>('SELECT VERSION() AS version');
  return checkMysqlVersion(String(result.rows[0]?.version ?? ''));
}
