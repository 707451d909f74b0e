/**
 * What the operator commands (`outbox`, `dlq`, `trace`) share: where the outbox and inbox tables
 * are, how to reach the database and the brokers (flags first, then environment variables), one
 * way to open and always close those connections, and refusals that say what to set. Drivers are
 * loaded only when a command needs them.
 */
import type { Command } from 'commander';
import type { Database } from '../runtime/db/database.js';
import type { OutboxTableOptions } from '../runtime/outbox/outbox-table.js';
import type { InboxTableOptions } from '../runtime/inbox/inbox-tables.js';
import { refuse } from './command-support.js';
import type { EvgenConfig } from './config.js';
import { printable } from '../diagnostics/diagnostic.js';
import { redactText, redactUrl } from './redact-secrets.js';

/** The one terminal-safe text helper, for the operator commands' output (escapes removed, control characters shown). */
export { printable, redactUrl };

export interface DatabaseFlags {
  readonly databaseUrl?: string;
  readonly schema?: string;
  readonly outboxTable?: string;
  readonly inboxTable?: string;
}

export interface AmqpFlags {
  readonly amqpUrl?: string;
  readonly prefix?: string;
}

export interface KafkaFlags {
  readonly kafkaBrokers?: string;
  readonly kafkaTiers?: string;
  readonly prefix?: string;
}

export interface PulsarFlags {
  readonly pulsarUrl?: string;
  readonly pulsarTiers?: string;
  readonly prefix?: string;
}

export function addDatabaseOptions(command: Command): Command {
  return command
    .option(
      '--database-url <url>',
      'postgres://… or mysql://… / mariadb://… URL (default: $DATABASE_URL)',
    )
    .option('--schema <name>', 'schema of the outbox and inbox tables (default: the search_path)')
    .option('--outbox-table <name>', 'outbox table name (default: outbox_event)')
    .option('--inbox-table <name>', 'inbox table name (default: inbox_message)');
}

export function addAmqpOptions(command: Command): Command {
  return command
    .option('--amqp-url <url>', 'RabbitMQ URL (default: $AMQP_URL)')
    .option(
      '--prefix <prefix>',
      'topology prefix the services use (default: $EVGEN_PREFIX, else "prefix" in evgen.config.json, else "")',
    );
}

export function addKafkaOptions(command: Command): Command {
  return command
    .option(
      '--kafka-brokers <list>',
      'Kafka bootstrap servers, host:port,… (default: $KAFKA_BROKERS)',
    )
    .option(
      '--kafka-tiers <ms,…>',
      'retry tiers the Kafka consumers run with, in ms (default: "kafkaTiers" in evgen.config.json, else 1000,10000,60000)',
    );
}

export function addPulsarOptions(command: Command): Command {
  return command
    .option(
      '--pulsar-url <url>',
      "Pulsar broker's (or WebSocket proxy's) HTTP base URL, serving the WebSocket and admin APIs, e.g. http://pulsar:8080 (default: $PULSAR_URL)",
    )
    .option(
      '--pulsar-tiers <ms,…>',
      'retry tiers the Pulsar consumers run with, in ms (names their retry topics; default: 1000,10000,60000)',
    );
}

/**
 * `--pulsar-url`, else $PULSAR_URL: the broker's web service (http:// or https://), where the
 * WebSocket client and the admin API are; undefined when neither is set.
 */
export function pulsarUrl(flags: PulsarFlags): string | undefined {
  const url = nonEmpty(flags.pulsarUrl) ?? nonEmpty(process.env.PULSAR_URL);
  if (url !== undefined && !(URL.canParse(url) && /^https?:\/\//i.test(url))) {
    throw refuse({
      code: 'invalid-option',
      file: '--pulsar-url',
      message: `${JSON.stringify(redactText(url))} is not the broker's HTTP URL`,
      hint: "give the Pulsar web service's URL (the broker's webServicePort, default 8080), e.g. --pulsar-url http://pulsar:8080 (or PULSAR_URL); pulsar:// is the binary protocol, which evgen does not use",
    });
  }
  return url;
}

/** `--pulsar-tiers 300,600` → [300, 600]; undefined for the runtime's default tiers. */
export function pulsarTiers(flags: PulsarFlags): readonly number[] | undefined {
  return flags.pulsarTiers === undefined
    ? undefined
    : parseTiers('--pulsar-tiers', flags.pulsarTiers);
}

/** `host:port` (a bracketed IPv6 host allowed), port 1-65535. */
const BROKER_ADDRESS = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

export function kafkaBrokers(flags: KafkaFlags): string[] | undefined {
  const list = nonEmpty(flags.kafkaBrokers) ?? nonEmpty(process.env.KAFKA_BROKERS);
  const brokers = list
    ?.split(',')
    .map((broker) => broker.trim())
    .filter((broker) => broker !== '');
  for (const broker of brokers ?? []) {
    const port = Number(BROKER_ADDRESS.exec(broker)?.[1] ?? 0);
    if (port < 1 || port > 65535) {
      throw refuse({
        code: 'invalid-option',
        file: '--kafka-brokers',
        message: `${JSON.stringify(broker)} is not a broker address host:port`,
        hint: 'e.g. --kafka-brokers kafka-1:9092,kafka-2:9092 (or KAFKA_BROKERS)',
      });
    }
  }
  return brokers;
}

/** What the config file says about the deployment, for the flags' defaults. */
export type DeploymentConfig = Pick<EvgenConfig, 'prefix' | 'kafkaTiers'>;

/**
 * `--kafka-tiers 300,600` → [300, 600]; else the config file's `kafkaTiers`; undefined for the
 * runtime's default tiers.
 */
export function kafkaTiers(
  flags: KafkaFlags,
  config: DeploymentConfig = NO_DEPLOYMENT,
): readonly number[] | undefined {
  if (flags.kafkaTiers === undefined) return config.kafkaTiers;
  return parseTiers('--kafka-tiers', flags.kafkaTiers);
}

/** A flag's `ms,ms,…` list of ascending positive retry tiers; refused otherwise. */
function parseTiers(flag: string, text: string): number[] {
  const tiers = text.split(',').map((tier) => Number(tier.trim()));
  if (
    tiers.length === 0 ||
    tiers.some(
      (tier, i) => !Number.isInteger(tier) || tier <= 0 || (i > 0 && tier <= tiers[i - 1]!),
    )
  ) {
    throw refuse({
      code: 'bad-tiers',
      file: flag,
      message: `${flag} ${printable(text)} is not a list of ascending positive milliseconds`,
      hint: `give the tiers your consumers run with, e.g. ${flag} 1000,10000,60000`,
    });
  }
  return tiers;
}

export function outboxTableOptions(flags: DatabaseFlags): OutboxTableOptions {
  return {
    ...(flags.schema !== undefined ? { schema: flags.schema } : {}),
    ...(flags.outboxTable !== undefined ? { table: flags.outboxTable } : {}),
  };
}

export function inboxTableOptions(flags: DatabaseFlags): InboxTableOptions {
  return {
    ...(flags.schema !== undefined ? { schema: flags.schema } : {}),
    ...(flags.inboxTable !== undefined ? { table: flags.inboxTable } : {}),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** Whether a database is given (`--database-url` or $DATABASE_URL), for commands where it is optional. */
export function databaseConfigured(flags: DatabaseFlags): boolean {
  return (nonEmpty(flags.databaseUrl) ?? nonEmpty(process.env.DATABASE_URL)) !== undefined;
}

/** The database URL schemes the operator commands take, named by every refusal of a URL. */
const DATABASE_URL_SCHEMES =
  'postgres://… or postgresql://… for PostgreSQL, mysql://… or mariadb://… for MySQL/MariaDB';

export function databaseUrl(flags: DatabaseFlags): string {
  const url = nonEmpty(flags.databaseUrl) ?? nonEmpty(process.env.DATABASE_URL);
  if (url === undefined) {
    throw refuse({
      code: 'database-url-missing',
      file: '--database-url',
      message: 'no database to read: neither --database-url nor DATABASE_URL is set',
      hint: 'pass --database-url postgres://user@host:5432/db (or mysql://user@host:3306/db), or set DATABASE_URL',
    });
  }
  if (!URL.canParse(url)) {
    throw refuse({
      code: 'database-url-invalid',
      file: '--database-url',
      message: `${JSON.stringify(redactText(url))} is not a valid URL`,
      hint: `use ${DATABASE_URL_SCHEMES} (e.g. postgres://user@host:5432/db; percent-encode special characters)`,
    });
  }
  if (!SERVER_URL.test(url)) {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
    throw refuse({
      code: 'database-url-unsupported',
      file: '--database-url',
      message:
        scheme === undefined
          ? `${JSON.stringify(redactUrl(url))} is not a database URL`
          : `unsupported database URL scheme '${scheme}:' in ${redactUrl(url)}`,
      hint: `use ${DATABASE_URL_SCHEMES}`,
    });
  }
  return url;
}

/** Whether `error` is the driver's "no such table (or schema)" (PostgreSQL, MySQL/MariaDB). */
export function isMissingTable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && MISSING_TABLES.test(code);
}

/** The servers the operator commands read: PostgreSQL and MySQL/MariaDB. */
const SERVER_URL = /^(?:postgres(?:ql)?|mysql|mariadb):\/\//i;
const MYSQL_URL = /^(?:mysql|mariadb):\/\//i;
/** Driver error codes meaning "the tables (or schema) are not there": PostgreSQL, MySQL. */
const MISSING_TABLES = /^(42P01|3F000|ER_NO_SUCH_TABLE|ER_BAD_DB_ERROR)$/;
/** …and "the server cannot be reached or refuses us". */
const UNREACHABLE =
  /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|28P01|3D000|ER_ACCESS_DENIED_ERROR|ER_DBACCESS_DENIED_ERROR|PROTOCOL_CONNECTION_LOST)$/;

export function amqpUrl(flags: AmqpFlags): string | undefined {
  return nonEmpty(flags.amqpUrl) ?? nonEmpty(process.env.AMQP_URL);
}

/** `--prefix`, else $EVGEN_PREFIX, else the config file's `prefix`, else "". */
export function topologyPrefix(flags: AmqpFlags, config: DeploymentConfig = NO_DEPLOYMENT): string {
  return flags.prefix ?? process.env.EVGEN_PREFIX ?? config.prefix ?? '';
}

const NO_DEPLOYMENT: DeploymentConfig = { prefix: undefined, kafkaTiers: undefined };

/**
 * Runs `work` on a pool of one connection to the database and closes it afterwards. A database
 * that cannot be reached, or tables that are not there, become a refusal that says which.
 */
export async function withDatabase<T>(
  flags: DatabaseFlags,
  work: (db: Database) => Promise<T>,
): Promise<T> {
  const url = databaseUrl(flags);
  const db = await openServer(url);
  try {
    return await work(db);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && MISSING_TABLES.test(code)) {
      throw refuse({
        code: 'outbox-tables-missing',
        file: '--database-url',
        message: `${redactText((error as Error).message)} in ${redactUrl(url)}`,
        hint: 'point --schema / --outbox-table / --inbox-table at the tables your services migrated',
      });
    }
    if (typeof code === 'string' && UNREACHABLE.test(code)) {
      throw refuse({
        code: 'database-unreachable',
        file: '--database-url',
        message: `cannot reach the database ${redactUrl(url)}: ${redactText((error as Error).message)}`,
        hint: `check that ${MYSQL_URL.test(url) ? 'MySQL/MariaDB' : 'PostgreSQL'} is running and the URL (host, port, database, user) is right`,
      });
    }
    throw error;
  } finally {
    await db.close().catch(() => undefined);
  }
}

/** A one-connection pool on the server `url` names (checked by databaseUrl). */
async function openServer(url: string): Promise<Database & { close(): Promise<void> }> {
  if (MYSQL_URL.test(url)) {
    const { openDatabase } = await import('../runtime/db/open-database.js');
    return openDatabase(url, { max: 1 });
  }
  const [{ default: pg }, { postgresDatabase }] = await Promise.all([
    import('pg'),
    import('../runtime/db/database.js'),
  ]);
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => undefined);
  return { ...postgresDatabase(pool), close: () => pool.end() };
}

/** Milliseconds as a short human duration: `850 ms`, `12.4 s`, `3 min 5 s`, `2 h 10 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}
