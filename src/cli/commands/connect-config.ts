/**
 * `evgen connect-config --database-url URL [options]` (or `--db-host H --db-port P --db-name N
 * --db-user U`): the Kafka Connect configuration that has Debezium stream the CDC outbox to the
 * catalog's Kafka topics, one JSON file per database (`<name>.json`, the body of
 * `PUT /connectors/<name>/config`), into `--output` (default `connect/`). The database kind comes
 * from the URL's scheme (`postgres://` → PostgreSQL, `mariadb://` → MariaDB; `mysql://` needs
 * `--database mariadb`, since Debezium's MySQL connector is not covered) or `--database`; a
 * MariaDB connector also needs `--kafka-brokers` for its schema-history topic. Deterministic:
 * sorted keys, no timestamps, no secrets (a password in the URL is never written: the password
 * is a `${env:…}` reference the worker resolves unless `--db-password` says otherwise).
 * Exit 0 written, 2 bad input (invalid catalog or option, unwritable folder).
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadCatalog } from '../../catalog/load-catalog.js';
import {
  CONNECTOR_DATABASES,
  connectorConfigFiles,
  DEFAULT_CONNECTOR_NAME,
  DEFAULT_PASSWORD_REFERENCE,
  type ConnectorConfigOptions,
  type ConnectorDatabase,
} from '../../cdc/connector-config.js';
import { topicSettings } from '../../codegen/targets/kafka.js';
import { loadConfig } from '../config.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { redactUrl } from '../operator-options.js';
import { EXIT_OK } from '../exit-codes.js';
import { printed } from '../../diagnostics/printable.js';

export interface ConnectConfigCommandOptions {
  readonly events?: string;
  readonly config?: string;
  readonly output?: string;
  readonly database?: string;
  readonly databaseUrl?: string;
  readonly name?: string;
  readonly dbHost?: string;
  readonly dbPort?: string;
  readonly dbName?: string;
  readonly dbUser?: string;
  readonly dbPassword?: string;
  readonly schema?: string;
  readonly table?: string;
  readonly topicPrefix?: string;
  readonly slot?: string;
  readonly replicationFactor?: string;
  readonly kafkaBrokers?: string;
  readonly serverId?: string;
  readonly exactlyOnce?: boolean;
}

export function registerConnectConfig(program: Command): void {
  addFolderOptions(
    program
      .command('connect-config')
      .description(
        'write the Kafka Connect (Debezium outbox router) connector config for the CDC outbox',
      )
      .option('-o, --output <dir>', 'folder for the connector JSON files (default: "connect")')
      .option(
        '--database-url <url>',
        'the database as the Connect worker reaches it: postgres://user@host:5432/db or mariadb://user@host:3306/db (a password in it is not written)',
      )
      .option(
        '--database <kind>',
        `database kind: ${CONNECTOR_DATABASES.join(', ')} (default: from --database-url, else postgres)`,
      )
      .option('--name <name>', `connector name (default: "${DEFAULT_CONNECTOR_NAME}")`)
      .option('--db-host <host>', 'database host as the Connect worker reaches it (or the URL)')
      .option('--db-port <port>', 'database port (or the URL)')
      .option('--db-name <name>', 'database name (or the URL)')
      .option(
        '--db-user <user>',
        'database user (PostgreSQL: the REPLICATION attribute; MariaDB: REPLICATION SLAVE, BINLOG MONITOR, SELECT, RELOAD)',
      )
      .option(
        '--db-password <value>',
        `password as the worker resolves it (default: "${DEFAULT_PASSWORD_REFERENCE}")`,
      )
      .option('--schema <schema>', 'schema of the CDC outbox table (default: "public")')
      .option('--table <table>', 'CDC outbox table (default: "outbox_cdc_event")')
      .option('--topic-prefix <prefix>', "prefix of every topic name (the writer's topicPrefix)")
      .option(
        '--slot <name>',
        'PostgreSQL: replication slot and publication name (default: from --name)',
      )
      .option(
        '--kafka-brokers <list>',
        "MariaDB: host:port,… of the Kafka cluster for Debezium's schema-history topic",
      )
      .option(
        '--server-id <n>',
        'MariaDB: replica server id of the connector (default: 5400–6399 from --name)',
      )
      .option('--replication-factor <n>', 'replication factor of topics it creates (default: 1)')
      .option(
        '--exactly-once',
        'require exactly-once source delivery (worker: exactly.once.source.support=enabled)',
      ),
  ).action(async (options: ConnectConfigCommandOptions) => {
    process.exitCode = await runConnectConfig(options);
  });
}

function required(
  value: string | undefined,
  flag: string,
  hint = `pass ${flag} or --database-url (where the Connect worker reaches the database)`,
): string {
  if (value === undefined || value === '') {
    throw refuse({ code: 'option-missing', file: flag, message: `${flag} is required`, hint });
  }
  return value;
}

function positiveInteger(value: string, flag: string): number {
  const number = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw refuse({
      code: 'option-invalid',
      file: flag,
      message: `${flag} must be a positive integer (got '${value}')`,
      hint: `pass ${flag} as a whole number, e.g. ${flag === '--db-port' ? '5432' : '3'}`,
    });
  }
  return number;
}

function checkName(value: string | undefined, flag: string, pattern: RegExp): void {
  if (value !== undefined && !pattern.test(value)) {
    throw refuse({
      code: 'option-invalid',
      file: flag,
      message: `${flag} '${value}' has characters Kafka Connect or PostgreSQL do not accept here`,
      hint: `use ${pattern.source}`,
    });
  }
}

/** Where a database URL points: its kind (by scheme, when it tells), host, port, name and user. */
interface DatabaseLocation {
  readonly kind: ConnectorDatabase | 'mysql';
  readonly host: string;
  readonly port?: string;
  readonly name?: string;
  readonly user?: string;
}

const URL_KINDS: Readonly<Record<string, DatabaseLocation['kind']>> = {
  postgres: 'postgres',
  postgresql: 'postgres',
  mariadb: 'mariadb',
  mysql: 'mysql',
};

function parseDatabaseUrl(url: string): DatabaseLocation {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const kind = parsed === undefined ? undefined : URL_KINDS[parsed.protocol.replace(/:$/, '')];
  if (parsed === undefined || kind === undefined || parsed.hostname === '') {
    throw refuse({
      code: 'option-invalid',
      file: '--database-url',
      message: `${JSON.stringify(redactUrl(url))} is not a PostgreSQL or MariaDB server URL`,
      hint: 'use postgres://user@host:5432/db or mariadb://user@host:3306/db',
    });
  }
  const name = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return {
    kind,
    host: parsed.hostname,
    ...(parsed.port !== '' ? { port: parsed.port } : {}),
    ...(name !== '' ? { name } : {}),
    ...(parsed.username !== '' ? { user: decodeURIComponent(parsed.username) } : {}),
  };
}

/** The database kind: `--database`, else the URL's scheme, else PostgreSQL. */
function databaseKind(
  given: string | undefined,
  location: DatabaseLocation | undefined,
): ConnectorDatabase {
  if (given !== undefined) {
    if (!(CONNECTOR_DATABASES as readonly string[]).includes(given)) {
      throw refuse({
        code: 'option-invalid',
        file: '--database',
        message: `unknown database kind '${given}'`,
        hint: `use one of: ${CONNECTOR_DATABASES.join(', ')}`,
      });
    }
    return given as ConnectorDatabase;
  }
  if (location?.kind === 'mysql') {
    throw refuse({
      code: 'option-invalid',
      file: '--database-url',
      message:
        "a mysql:// URL may be MySQL or MariaDB, and only Debezium's MariaDB connector is covered",
      hint: 'for a MariaDB server pass --database mariadb (or a mariadb:// URL)',
    });
  }
  return location?.kind ?? 'postgres';
}

/** The command itself, returning the exit code; usable without commander. */
export function runConnectConfig(
  options: ConnectConfigCommandOptions,
  cwd = process.cwd(),
): Promise<number> {
  return reportingProblems(async () => {
    const location =
      options.databaseUrl === undefined ? undefined : parseDatabaseUrl(options.databaseUrl);
    const database = databaseKind(options.database, location);
    checkName(options.name, '--name', /^[A-Za-z0-9._-]+$/);
    checkName(options.topicPrefix, '--topic-prefix', /^[A-Za-z0-9._-]*$/);
    checkName(options.slot, '--slot', /^[a-z0-9_]+$/);
    checkName(options.schema, '--schema', /^[A-Za-z_][A-Za-z0-9_]*$/);
    checkName(options.table, '--table', /^[A-Za-z_][A-Za-z0-9_]*$/);
    const port = options.dbPort ?? location?.port ?? (database === 'mariadb' ? '3306' : '5432');
    const connector: ConnectorConfigOptions = {
      database,
      hostname: required(options.dbHost ?? location?.host, '--db-host'),
      port: positiveInteger(port, '--db-port'),
      dbname: required(options.dbName ?? location?.name, '--db-name'),
      user: required(options.dbUser ?? location?.user, '--db-user'),
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.dbPassword !== undefined ? { password: options.dbPassword } : {}),
      ...(options.schema !== undefined ? { schema: options.schema } : {}),
      ...(options.table !== undefined ? { table: options.table } : {}),
      ...(options.topicPrefix !== undefined ? { topicPrefix: options.topicPrefix } : {}),
      ...(options.slot !== undefined ? { slotName: options.slot } : {}),
      ...(options.replicationFactor !== undefined
        ? {
            replicationFactor: positiveInteger(options.replicationFactor, '--replication-factor'),
          }
        : {}),
      ...(database === 'mariadb'
        ? {
            kafkaBootstrapServers: required(
              options.kafkaBrokers,
              '--kafka-brokers',
              "pass --kafka-brokers host:port,…: Debezium's MariaDB connector keeps the table schema in a topic there",
            ),
            ...(options.serverId !== undefined
              ? { serverId: positiveInteger(options.serverId, '--server-id') }
              : {}),
          }
        : {}),
      ...(options.exactlyOnce ? { exactlyOnce: true } : {}),
    };
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const catalog = await loadCatalog(config.events, { eventTypeFormat: config.eventTypeFormat });
    const files = connectorConfigFiles([...topicSettings(catalog).values()], connector);
    const folder = resolve(cwd, options.output ?? 'connect');
    for (const file of files) {
      const target = join(folder, file.path);
      const temporary = `${target}.${process.pid}.tmp`;
      try {
        await mkdir(folder, { recursive: true });
        await writeFile(temporary, file.content);
        await rename(temporary, target);
      } catch (error) {
        await rm(temporary, { force: true });
        throw refuse({
          code: 'output-unwritable',
          file: relative(cwd, target),
          message: `cannot write the connector config: ${(error as Error).message}`,
          hint: 'give --output a writable folder',
        });
      }
      process.stdout.write(printed`wrote ${relative(cwd, target)}` + '\n');
    }
    if (database === 'postgres') {
      // The CDC outbox refuses writes until this slot and publication exist.
      const slot = (JSON.parse(files[0]!.content) as Record<string, string>)['slot.name']!;
      process.stdout.write(
        `the CDC outbox's writers wait for slot and publication ${slot}: migrateCdcOutbox(db, { slot: '${slot}', connectorLater: true }) before the connector's first start\n`,
      );
    }
    return EXIT_OK;
  });
}
