/**
 * `evgen dlq list|show|replay`: the consumers' dead letters (RabbitMQ dead queues, Kafka or
 * Pulsar dead-letter topics, `--transport`), with the diagnostics recorded when each was
 * dead-lettered.
 *   list              every letter of each consumer (or `--consumer`), filtered; with a database
 *                     (`--database-url`) each letter says whether it is resolved (its consumer
 *                     committed the messageId in its inbox, e.g. after a replay), and
 *                     `--unresolved` keeps only the open ones (a count to alert on)
 *   show <messageId>  one message's letters in full: headers and body, and with a database
 *                     whether each is resolved
 *   replay            sends the selected letters back to their consumer (RabbitMQ: its work
 *                     queue; Kafka and Pulsar: its first retry topic, due at once; never where
 *                     a letter's own headers or properties point), same
 *                     messageId, through the inbox again (a consumer that already handled it
 *                     skips it); needs a filter or `--all`; `--dry-run` only says what it would do.
 *                     With a database, letters already resolved are skipped and named (a Kafka
 *                     letter stays in its log, so `--all` would otherwise send every settled one
 *                     again); `--force` replays them anyway
 * Nothing is removed by list or show (a Kafka letter stays in its log even after a replay; a
 * Pulsar letter leaves its dead-letter subscription once its replay is stored).
 * Consumers come from the catalog (`--events`): those with an event on the chosen transport, so a
 * mixed catalog's RabbitMQ-only consumers are not looked for on Kafka and vice versa; a Kafka
 * or Pulsar dead-letter topic not created yet (its consumer never ran) counts as empty, named on
 * stderr. The topology prefix and Kafka retry tiers from `--prefix` / `--kafka-tiers`, else from
 * `prefix` / `kafkaTiers` in evgen.config.json; Pulsar's retry tiers from `--pulsar-tiers`.
 * Exit 0 ok, 1 `show` found nothing, 2 bad input (unknown consumer or one with no event on the
 * transport, no broker URL, missing RabbitMQ dead queue).
 */
import { Option, type Command } from 'commander';
import { loadProjectCatalog } from '../project-catalog.js';
import type { BrokerTransport, Catalog } from '../../catalog/model.js';
import { TRANSPORT_LABELS } from '../../catalog/event-transports.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig, type EvgenConfig } from '../config.js';
import { resolveDeadLetters, type ResolvedDeadLetter } from '../dead-letter-resolution.js';
import {
  kafkaDeadLetterSource,
  pulsarCliDeadLetterSource,
  rabbitDeadLetterSource,
} from '../dead-letter-sources.js';
import {
  matchesDeadLetterFilter,
  type DeadLetterFilter,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../../runtime/delivery/dead-letter-source.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import type { Database } from '../../runtime/db/database.js';
import {
  addAmqpOptions,
  addDatabaseOptions,
  addKafkaOptions,
  addPulsarOptions,
  amqpUrl,
  databaseConfigured,
  inboxTableOptions,
  withDatabase,
  type DatabaseFlags,
  kafkaBrokers,
  kafkaTiers,
  printable,
  pulsarTiers,
  pulsarUrl,
  redactUrl,
  topologyPrefix,
  type AmqpFlags,
  type KafkaFlags,
  type PulsarFlags,
} from '../operator-options.js';
import { printableJson } from '../../diagnostics/printable.js';

export interface DlqOptions extends AmqpFlags, KafkaFlags, PulsarFlags, DatabaseFlags {
  readonly unresolved?: boolean;
  readonly transport?: 'rabbitmq' | 'kafka' | 'pulsar';
  readonly events?: string;
  readonly config?: string;
  readonly consumer?: string;
  readonly eventType?: string;
  readonly errorType?: string;
  readonly since?: string;
  readonly until?: string;
  readonly messageId?: string;
  readonly json?: boolean;
  readonly dryRun?: boolean;
  readonly all?: boolean;
  readonly force?: boolean;
}

function addSelection(command: Command, filters: boolean): Command {
  addFolderOptions(command);
  addAmqpOptions(command);
  addKafkaOptions(command);
  addPulsarOptions(command);
  command.addOption(
    new Option(
      '--transport <transport>',
      "where the dead letters are (default: the only one the catalog's consumers read from, else the one configured)",
    ).choices(['rabbitmq', 'kafka', 'pulsar']),
  );
  command.option(
    '--consumer <name>',
    'only this consumer (default: every consumer in the catalog)',
  );
  if (filters) {
    command
      .option('--event-type <type>', 'only letters of this event type')
      .option('--error-type <type>', 'only letters dead-lettered with this error type')
      .option('--message-id <id>', 'only the letter(s) of this messageId')
      .addOption(new Option('--since <time>', 'dead-lettered at or after (ISO-8601)'))
      .addOption(new Option('--until <time>', 'dead-lettered before (ISO-8601)'));
  }
  return command.option('--json', 'print JSON');
}

export function registerDlq(program: Command): void {
  const dlq = program
    .command('dlq')
    .description(
      "inspect and replay consumers' dead letters (RabbitMQ dead queues, Kafka and Pulsar dead-letter topics)",
    );
  addSelection(
    addDatabaseOptions(
      dlq
        .command('list')
        .description(
          'list dead letters with their diagnostics (and, given a database, whether each is resolved)',
        )
        .option(
          '--unresolved',
          'only letters whose consumer has not committed the messageId (needs the database)',
        ),
    ),
    true,
  ).action(async (options: DlqOptions) => {
    process.exitCode = await runDlqList(options);
  });
  addSelection(
    addDatabaseOptions(
      dlq
        .command('show')
        .description(
          "one message's dead letters in full (and, given a database, whether each is resolved)",
        )
        .argument('<messageId>'),
    ),
    false,
  ).action(async (messageId: string, options: DlqOptions) => {
    process.exitCode = await runDlqShow(messageId, options);
  });
  addSelection(
    addDatabaseOptions(
      dlq
        .command('replay')
        .description(
          'send selected dead letters back through their consumer (same messageId, inbox-guarded); given a database, letters already resolved are skipped',
        )
        .option('--all', 'replay every letter (required when no filter is given)')
        .option('--dry-run', 'list what would be replayed; change nothing')
        .option(
          '--force',
          'replay letters already resolved too (the inbox absorbs them as duplicates)',
        ),
    ),
    true,
  ).action(async (options: DlqOptions) => {
    process.exitCode = await runDlqReplay(options);
  });
}

function filterOf(options: DlqOptions): DeadLetterFilter {
  for (const [flag, value] of [
    ['--since', options.since],
    ['--until', options.until],
  ] as const) {
    if (value !== undefined && Number.isNaN(Date.parse(value))) {
      throw refuse({
        code: 'bad-time',
        file: flag,
        message: `${flag} ${printable(value)} is not a time`,
        hint: `give an ISO-8601 time, e.g. ${flag} 2026-11-30T12:00:00Z`,
      });
    }
  }
  return Object.fromEntries(
    (
      [
        ['messageId', options.messageId],
        ['eventType', options.eventType],
        ['errorType', options.errorType],
        ['since', options.since],
        ['until', options.until],
      ] as const
    ).filter(([, value]) => value !== undefined),
  );
}

/** The transports whose dead letters `dlq` reads. */
const DEAD_LETTER_TRANSPORTS = [
  'kafka',
  'rabbitmq',
  'pulsar',
] as const satisfies readonly BrokerTransport[];
type DeadLetterTransport = (typeof DEAD_LETTER_TRANSPORTS)[number];

/**
 * The dead letters' transport: `--transport`; else the only broker transport the catalog's
 * consumers read from (a Kafka-only catalog never asks for RabbitMQ); else the one whose
 * connection is configured (RabbitMQ, then Kafka, then Pulsar when several are); undefined when
 * none is (openSource refuses then).
 */
function transportOf(
  options: DlqOptions,
  catalogTransports: readonly DeadLetterTransport[] = [],
): DeadLetterTransport | undefined {
  if (options.transport !== undefined) return options.transport;
  if (catalogTransports.length === 1) return catalogTransports[0];
  if (amqpUrl(options) !== undefined) return 'rabbitmq';
  if (kafkaBrokers(options) !== undefined) return 'kafka';
  if (pulsarUrl(options) !== undefined) return 'pulsar';
  return undefined;
}

/**
 * The consumers to look at (`--consumer`, checked against the catalog, or every consumer that
 * subscribes to an event on the chosen transport: the others have no dead queue or topic there)
 * and the config they came from (its `prefix` and `kafkaTiers` are the flags' defaults).
 */
async function consumersOf(
  flags: DlqOptions,
): Promise<{ consumers: string[]; config: EvgenConfig; options: DlqOptions; catalog: Catalog }> {
  const config = await loadConfig(flags);
  const { catalog } = await loadProjectCatalog(config);
  const names = catalog.consumers.map((consumer) => consumer.name);
  const read = DEAD_LETTER_TRANSPORTS.filter((candidate) =>
    catalog.consumers.some((consumer) =>
      consumer.subscribes.some(
        (eventType) =>
          catalog.events.find((event) => event.eventType === eventType)?.[candidate] !== undefined,
      ),
    ),
  );
  const transport = transportOf(flags, read);
  const options: DlqOptions = transport === undefined ? flags : { ...flags, transport };
  const onTransport = (name: string) => {
    if (transport === undefined) return true;
    const consumer = catalog.consumers.find((candidate) => candidate.name === name)!;
    return consumer.subscribes.some(
      (eventType) =>
        catalog.events.find((event) => event.eventType === eventType)?.[transport] !== undefined,
    );
  };
  if (options.consumer === undefined) {
    return { consumers: names.filter(onTransport), config, options, catalog };
  }
  if (!names.includes(options.consumer)) {
    throw refuse({
      code: 'unknown-consumer',
      file: '--consumer',
      message: `the catalog declares no consumer named ${printable(options.consumer)}`,
      hint:
        names.length === 0
          ? 'declare consumers in events/_consumers/<name>.json'
          : `use one of: ${names.join(', ')}`,
    });
  }
  if (!onTransport(options.consumer)) {
    const label = TRANSPORT_LABELS[transport!];
    const others = names.filter(onTransport);
    throw refuse({
      code: 'consumer-not-on-transport',
      file: '--consumer',
      message: `consumer ${printable(options.consumer)} subscribes to no event published on ${label}: it has no dead letters there`,
      hint:
        others.length === 0
          ? `no consumer of the catalog reads from ${label}; choose the other --transport`
          : `choose the other --transport, or one of: ${others.join(', ')}`,
    });
  }
  return { consumers: [options.consumer], config, options, catalog };
}

/**
 * The dead letters' transport (see transportOf), connected. `catalog` names each consumer's
 * Pulsar topics (required for Pulsar, whose dead-letter topic is beside them).
 */
export async function openSource(
  options: DlqOptions,
  config: EvgenConfig,
  catalog?: Pick<Catalog, 'events' | 'consumers'>,
): Promise<DeadLetterSource> {
  const url = amqpUrl(options);
  const brokers = kafkaBrokers(options);
  const transport = transportOf(options);
  if (transport === 'pulsar') {
    const webServiceUrl = pulsarUrl(options);
    if (webServiceUrl === undefined) {
      throw refuse({
        code: 'pulsar-url-missing',
        file: '--pulsar-url',
        message: 'no Pulsar to read: neither --pulsar-url nor PULSAR_URL is set',
        hint: "pass the broker's HTTP URL, --pulsar-url http://pulsar:8080, or set PULSAR_URL",
      });
    }
    return pulsarCliDeadLetterSource(
      webServiceUrl,
      topologyPrefix(options, config),
      pulsarTiers(options),
      catalog ?? { events: [], consumers: [] },
    );
  }
  if (transport === 'kafka') {
    if (brokers === undefined) {
      throw refuse({
        code: 'kafka-brokers-missing',
        file: '--kafka-brokers',
        message: 'no Kafka to read: neither --kafka-brokers nor KAFKA_BROKERS is set',
        hint: 'pass --kafka-brokers host:9092, or set KAFKA_BROKERS',
      });
    }
    return kafkaDeadLetterSource(
      brokers,
      topologyPrefix(options, config),
      kafkaTiers(options, config),
    );
  }
  if (url === undefined) {
    throw refuse({
      code: 'amqp-url-missing',
      file: '--amqp-url',
      message:
        'no broker to read: neither --amqp-url nor AMQP_URL is set (nor --kafka-brokers, nor --pulsar-url)',
      hint: 'pass --amqp-url amqp://user:pass@host:5672, --kafka-brokers host:9092 or --pulsar-url http://host:8080 (or set AMQP_URL / KAFKA_BROKERS / PULSAR_URL)',
    });
  }
  try {
    return await rabbitDeadLetterSource(url, topologyPrefix(options, config));
  } catch (error) {
    throw refuse({
      code: 'broker-unreachable',
      file: '--amqp-url',
      message: `cannot reach RabbitMQ at ${redactUrl(url)}: ${(error as Error).message}`,
      hint: 'check that RabbitMQ is running and the URL (host, port, user, vhost) is right',
    });
  }
}

/**
 * Opens the dead-letter source, runs `work`, closes it. A missing RabbitMQ dead queue is a
 * refusal (its consumer declares it when it starts: a wrong --prefix); a missing Kafka
 * dead-letter topic counts as an empty one and is named on stderr.
 */
async function withSource<T>(
  options: DlqOptions,
  config: EvgenConfig,
  catalog: Pick<Catalog, 'events' | 'consumers'>,
  work: (source: DeadLetterSource) => Promise<T>,
): Promise<T> {
  const source = await openSource(options, config, catalog);
  try {
    const result = await work(source);
    for (const { consumer, deadQueue } of source.missing()) {
      process.stderr.write(
        `note: ${printable(consumer)} has no dead-letter topic ${printable(deadQueue)} yet (created with its topics when the consumer first runs; check --prefix if it has): counted as empty\n`,
      );
    }
    return result;
  } catch (error) {
    if (
      /NOT_FOUND|does not host this topic-partition|UNKNOWN_TOPIC/i.test((error as Error).message)
    ) {
      throw refuse({
        code: 'dead-queue-missing',
        file: '--prefix',
        message: `a dead queue or dead-letter topic does not exist: ${printable((error as Error).message)}`,
        hint: 'give the --prefix your services declare their topology with, and check that the consumer has run once',
      });
    }
    throw error;
  } finally {
    await source.close();
  }
}

/** Runs `work` with the database when one is configured, else with undefined. */
function withDatabaseIfGiven<T>(
  options: DlqOptions,
  work: (db: Database | undefined) => Promise<T>,
): Promise<T> {
  return databaseConfigured(options) ? withDatabase(options, work) : work(undefined);
}

const NOT_LOOKED_AT = 'resolved or not: not looked at (give --database-url to read the inbox)';

function summary(record: DeadLetterRecord | ResolvedDeadLetter): string {
  const parts = [
    ...('resolved' in record
      ? [record.resolved ? `resolved ${record.resolvedAt ?? ''}` : 'UNRESOLVED']
      : []),
    record.messageId ?? '(no messageId)',
    record.eventType ?? '(no type)',
    `${record.errorType ?? 'error'}: ${record.errorMessage ?? ''}`,
    `attempts ${record.attempts ?? '?'}`,
    `dead-lettered ${record.deadLetteredAt ?? '?'}`,
  ];
  if (record.replays !== undefined) parts.push(`replayed ${record.replays}x before`);
  return printable(parts.join('  '));
}

function detail(record: DeadLetterRecord | ResolvedDeadLetter): string {
  const lines: string[] = [];
  if ('resolved' in record) {
    lines.push(
      record.resolved
        ? `status: resolved: ${printable(record.consumer)} committed the message at ${record.resolvedAt ?? '?'} (a replay or a later copy was handled)`
        : `status: UNRESOLVED: ${printable(record.consumer)} has not committed the message`,
    );
  }
  const { headers, body, ...all } = record;
  const fields = Object.entries(all).filter(
    ([name]) => name !== 'resolved' && name !== 'resolvedAt',
  );
  lines.push(...fields.map(([name, value]) => `${name}: ${printable(String(value))}`));
  lines.push('headers:');
  for (const [name, value] of Object.entries(headers))
    lines.push(
      `  ${printable(name)}: ${printable(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`,
    );
  lines.push('body:', printable(body));
  return lines.join('\n');
}

export function runDlqList(options: DlqOptions): Promise<number> {
  return reportingProblems(async () => {
    const filter = filterOf(options);
    const { consumers, config, options: connection, catalog } = await consumersOf(options);
    const resolving = databaseConfigured(options);
    if (options.unresolved === true && !resolving) {
      throw refuse({
        code: 'database-url-missing',
        file: '--unresolved',
        message: 'whether a letter is resolved is in the inbox: no database is given',
        hint: 'pass --database-url (and --schema / --inbox-table where your services keep the inbox), or set DATABASE_URL',
      });
    }
    const listed = await withSource(connection, config, catalog, async (source) => {
      const result: [string, DeadLetterRecord[]][] = [];
      for (const consumer of consumers) {
        const letters = (await source.list(consumer)).filter((letter) =>
          matchesDeadLetterFilter(letter, filter),
        );
        result.push([consumer, letters]);
      }
      return result;
    });
    const found: [string, (DeadLetterRecord | ResolvedDeadLetter)[]][] = resolving
      ? await withDatabase(options, async (db) => {
          const resolved: [string, ResolvedDeadLetter[]][] = [];
          for (const [consumer, letters] of listed) {
            const all = await resolveDeadLetters(db, letters, inboxTableOptions(options));
            resolved.push([
              consumer,
              options.unresolved === true ? all.filter((letter) => !letter.resolved) : all,
            ]);
          }
          return resolved;
        })
      : listed;
    if (options.json === true) {
      process.stdout.write(`${printableJson(found.flatMap(([, letters]) => letters))}\n`);
      return EXIT_OK;
    }
    const lines: string[] = [];
    for (const [consumer, letters] of found) {
      const open = letters.filter((letter) => 'resolved' in letter && !letter.resolved).length;
      lines.push(
        `${printable(consumer)}: ${letters.length} dead letter(s)${resolving ? `, ${open} unresolved` : ''}`,
      );
      for (const letter of letters) lines.push(`  ${summary(letter)}`);
    }
    if (!resolving) lines.push(NOT_LOOKED_AT);
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT_OK;
  });
}

export function runDlqShow(messageId: string, options: DlqOptions): Promise<number> {
  return reportingProblems(async () => {
    const { consumers, config, options: connection, catalog } = await consumersOf(options);
    const found = await withSource(connection, config, catalog, async (source) => {
      const result: DeadLetterRecord[] = [];
      for (const consumer of consumers)
        result.push(...(await source.list(consumer)).filter((l) => l.messageId === messageId));
      return result;
    });
    const letters = await withDatabaseIfGiven(options, async (db) =>
      db === undefined || found.length === 0
        ? found
        : resolveDeadLetters(db, found, inboxTableOptions(options)),
    );
    if (options.json === true) process.stdout.write(`${printableJson(letters)}\n`);
    else if (letters.length === 0)
      process.stdout.write(`no dead letter with messageId ${printable(messageId)}\n`);
    else
      process.stdout.write(
        `${letters.map(detail).join('\n\n')}\n${databaseConfigured(options) ? '' : `${NOT_LOOKED_AT}\n`}`,
      );
    return letters.length === 0 ? EXIT_FINDINGS : EXIT_OK;
  });
}

/** What `dlq replay` did (or would do) for one consumer. */
interface ReplayReport {
  readonly consumer: string;
  readonly replayed: string[];
  /** Letters left where they are, the skipped resolved ones included. */
  readonly kept: number;
  /** Selected letters whose consumer already committed the messageId (empty without a database). */
  readonly alreadyResolved: { readonly messageId: string; readonly resolvedAt: string }[];
}

export function runDlqReplay(options: DlqOptions): Promise<number> {
  return reportingProblems(async () => {
    const filter = filterOf(options);
    if (Object.keys(filter).length === 0 && options.all !== true) {
      throw refuse({
        code: 'replay-needs-selection',
        file: 'evgen dlq replay',
        message: 'no letters selected: replay needs a filter or --all',
        hint: 'add --message-id, --event-type, --error-type, --since/--until, or --all (try --dry-run first)',
      });
    }
    const { consumers, config, options: connection, catalog } = await consumersOf(options);
    const force = options.force === true;
    const dryRun = options.dryRun === true;
    const resolving = databaseConfigured(options);
    const outcome = await withDatabaseIfGiven(options, (db) =>
      withSource(connection, config, catalog, async (source) => {
        const result: ReplayReport[] = [];
        for (const consumer of consumers) {
          const letters = await source.list(consumer);
          const selected = letters.filter((letter) => matchesDeadLetterFilter(letter, filter));
          // A resolved letter's consumer already committed its messageId: replaying it would only
          // be absorbed by the inbox, so it is skipped (and named) unless --force.
          const alreadyResolved =
            db === undefined
              ? []
              : (await resolveDeadLetters(db, selected, inboxTableOptions(options)))
                  .filter((letter) => letter.resolved && letter.messageId !== undefined)
                  .map((letter) => ({
                    messageId: letter.messageId!,
                    resolvedAt: letter.resolvedAt ?? '?',
                  }));
          const skip = new Set(force ? [] : alreadyResolved.map((letter) => letter.messageId));
          const wanted = (letter: DeadLetterRecord) =>
            matchesDeadLetterFilter(letter, filter) &&
            (letter.messageId === undefined || !skip.has(letter.messageId));
          if (dryRun) {
            const replayed = letters.filter(wanted);
            result.push({
              consumer,
              replayed: replayed.map((letter) => letter.messageId ?? '(no messageId)'),
              kept: letters.length - replayed.length,
              alreadyResolved,
            });
          } else {
            const done = await source.replay(consumer, wanted);
            result.push({
              consumer,
              replayed: [...done.replayed],
              kept: done.kept,
              alreadyResolved,
            });
          }
        }
        return result;
      }),
    );
    if (options.json === true) {
      process.stdout.write(
        `${printableJson({ dryRun, force, resolvedLookedAt: resolving, consumers: outcome })}\n`,
      );
      return EXIT_OK;
    }
    const verb = dryRun ? 'would replay' : 'replayed';
    const lines: string[] = [];
    for (const { consumer, replayed, kept, alreadyResolved } of outcome) {
      lines.push(
        `${printable(consumer)}: ${verb} ${replayed.length}${replayed.length > 0 ? ` (${replayed.map(printable).join(', ')})` : ''}, kept ${kept}`,
      );
      if (alreadyResolved.length === 0) continue;
      const named = alreadyResolved
        .map((letter) => `${printable(letter.messageId)} at ${letter.resolvedAt}`)
        .join(', ');
      lines.push(
        force
          ? `  already resolved, ${dryRun ? 'would be replayed' : 'replayed'} because of --force (the inbox absorbs them as duplicates): ${alreadyResolved.length} (${named})`
          : `  already resolved, ${dryRun ? 'would be skipped' : 'skipped'} (its consumer committed the messageId; --force replays anyway): ${alreadyResolved.length} (${named})`,
      );
    }
    if (!resolving) lines.push(NOT_LOOKED_AT);
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT_OK;
  });
}
