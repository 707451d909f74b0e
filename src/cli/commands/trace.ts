/**
 * `evgen trace <messageId>`: where one event is, in one answer: its outbox row (written? SENT?
 * how many publish attempts, last error, DEAD?), which consumers committed it in their inbox and
 * when, which subscribed consumers have not, and the dead letters holding it (with the handling
 * attempts they record) in RabbitMQ dead queues and Kafka dead-letter topics, each marked resolved
 * when its consumer has since committed the message (a replay was handled), and, with Kafka
 * given, the records carrying it on the catalog's event topics (how an event written to a CDC
 * outbox, whose rows are gone at once, shows it was published). Reads the same
 * tables, queues and topics the runtime uses; with no broker configured the dead letters are left
 * out and the output says so.
 * Exit 0 found, 1 found nowhere, 2 bad input.
 */
import type { Command } from 'commander';
import { kafkaEvents } from '../../catalog/event-transports.js';
import { loadProjectCatalog } from '../project-catalog.js';
import type { InboxEntry } from '../../runtime/inbox/find-inbox-entries.js';
import type { FoundKafkaRecord } from '../../runtime/kafka/find-kafka-records.js';
import type { OutboxEventRecord } from '../../runtime/outbox/find-outbox-event.js';
import type { CdcServerProblem } from '../../runtime/errors.js';
import { formatCdcProblems } from '../cdc-problems.js';
import { addFolderOptions, reportingProblems } from '../command-support.js';
import { loadConfig, type EvgenConfig } from '../config.js';
import { resolution, type ResolvedDeadLetter } from '../dead-letter-resolution.js';
import {
  kafkaDeadLetterSource,
  rabbitDeadLetterSource,
  type DeadLetterRecord,
  type DeadLetterSource,
} from '../dead-letter-sources.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  addAmqpOptions,
  addDatabaseOptions,
  addKafkaOptions,
  amqpUrl,
  kafkaBrokers,
  kafkaTiers,
  inboxTableOptions,
  outboxTableOptions,
  printable,
  topologyPrefix,
  withDatabase,
  type AmqpFlags,
  type DatabaseFlags,
  type KafkaFlags,
} from '../operator-options.js';
import { printableJson } from '../../diagnostics/printable.js';

/** Every transport whose connection is configured (RabbitMQ, Kafka). */
async function deadLetterSources(
  options: TraceOptions,
  config: EvgenConfig,
): Promise<DeadLetterSource[]> {
  const sources: DeadLetterSource[] = [];
  const prefix = topologyPrefix(options, config);
  const url = amqpUrl(options);
  if (url !== undefined) sources.push(await rabbitDeadLetterSource(url, prefix));
  const brokers = kafkaBrokers(options);
  if (brokers !== undefined)
    sources.push(await kafkaDeadLetterSource(brokers, prefix, kafkaTiers(options, config)));
  return sources;
}

export interface TraceOptions extends DatabaseFlags, AmqpFlags, KafkaFlags {
  readonly events?: string;
  readonly config?: string;
  readonly json?: boolean;
  /** The services write a CDC outbox: no outbox row to look for (it is deleted at once). */
  readonly cdc?: boolean;
}

/** Everything known about one messageId. */
export interface MessageTrace {
  readonly messageId: string;
  /** `cdc`: a CDC outbox, whose rows go at once (the topic shows the publish). */
  readonly outboxKind: 'relay' | 'cdc';
  readonly outbox: OutboxEventRecord | null;
  /**
   * `cdc`: why a connector would not read what the CDC outbox's writers commit (empty: it
   * would); null for the polling relay's outbox or when this database has no CDC outbox.
   */
  readonly cdcProblems: readonly CdcServerProblem[] | null;
  readonly inbox: readonly InboxEntry[];
  /** Consumers of the catalog subscribed to the event type that have no inbox row for it. */
  readonly notHandledBy: readonly string[];
  /**
   * Consumers of the catalog subscribed to the event type (empty: nobody subscribes, so no inbox
   * row will come); null when the event type is unknown (not in the outbox, on a topic or in a
   * dead letter).
   */
  readonly subscribedBy: readonly string[] | null;
  /** The message's event type, from the outbox row, a published record or a dead letter. */
  readonly eventType: string | null;
  /**
   * null when no broker was given (not looked at). `resolved`: the letter's consumer has since
   * committed the message (e.g. its replay was handled).
   */
  readonly deadLetters: readonly ResolvedDeadLetter[] | null;
  /** Records carrying the messageId on the catalog's Kafka event topics; null without Kafka. */
  readonly published: readonly FoundKafkaRecord[] | null;
}

/** The records of `messageId` on every event topic of the catalog (with the deployment prefix). */
async function publishedRecords(
  options: TraceOptions,
  config: EvgenConfig,
  topics: readonly string[],
  messageId: string,
): Promise<FoundKafkaRecord[] | null> {
  const brokers = kafkaBrokers(options);
  if (brokers === undefined) return null;
  const [{ kafkajsClient }, { findKafkaRecordsByMessageId }] = await Promise.all([
    import('../../runtime/kafka/kafkajs-client.js'),
    import('../../runtime/kafka/find-kafka-records.js'),
  ]);
  const prefix = topologyPrefix(options, config);
  return findKafkaRecordsByMessageId({
    client: kafkajsClient({ brokers, clientId: 'evgen-cli' }),
    topics: [...new Set(topics)].sort().map((topic) => `${prefix}${topic}`),
    messageId,
  });
}

export function registerTrace(program: Command): void {
  addKafkaOptions(
    addAmqpOptions(
      addDatabaseOptions(
        addFolderOptions(
          program
            .command('trace')
            .description('where one event is: outbox row, inbox rows per consumer, dead letters')
            .argument('<messageId>', 'the envelope messageId')
            .option('--json', 'print JSON')
            .option(
              '--cdc',
              'the services write a CDC outbox (rows go at once): no outbox row lookup',
            ),
        ),
      ),
    ),
  ).action(async (messageId: string, options: TraceOptions) => {
    process.exitCode = await runTrace(messageId, options);
  });
}

export function runTrace(messageId: string, options: TraceOptions): Promise<number> {
  return reportingProblems(async () => {
    const config = await loadConfig(options);
    const { catalog } = await loadProjectCatalog(config);
    const { outbox, inbox, cdcProblems } = await withDatabase(options, async (db) => {
      const [{ findOutboxEvent }, { findInboxEntries }, { cdcOutboxProblems }] = await Promise.all([
        import('../../runtime/outbox/find-outbox-event.js'),
        import('../../runtime/inbox/find-inbox-entries.js'),
        import('../../runtime/outbox/cdc-outbox-status.js'),
      ]);
      return {
        cdcProblems:
          options.cdc === true ? await cdcOutboxProblems(db, outboxTableOptions(options)) : null,
        outbox:
          options.cdc === true
            ? null
            : ((await findOutboxEvent(db, messageId, outboxTableOptions(options))) ?? null),
        inbox: await findInboxEntries(db, messageId, inboxTableOptions(options)),
      };
    });
    const sources = await deadLetterSources(options, config);
    let deadLetters: DeadLetterRecord[] | null = null;
    if (sources.length > 0) {
      deadLetters = [];
      for (const source of sources) {
        try {
          for (const consumer of catalog.consumers) {
            // A consumer not deployed on this transport has no dead queue/topic: nothing to show.
            const letters = await source.list(consumer.name).catch(() => []);
            deadLetters.push(...letters.filter((letter) => letter.messageId === messageId));
          }
        } finally {
          await source.close();
        }
      }
    }
    const published = await publishedRecords(
      options,
      config,
      kafkaEvents(catalog.events).map((event) => event.kafka.topic),
      messageId,
    );
    const eventType =
      outbox?.eventType ??
      published?.find((r) => r.eventType)?.eventType ??
      deadLetters?.find((l) => l.eventType)?.eventType;
    const handled = new Set(inbox.map((entry) => entry.consumer));
    const notHandledBy =
      eventType === undefined
        ? []
        : catalog.consumers
            .filter((c) => c.subscribes.includes(eventType) && !handled.has(c.name))
            .map((c) => c.name);
    const trace: MessageTrace = {
      messageId,
      outboxKind: options.cdc === true ? 'cdc' : 'relay',
      outbox,
      cdcProblems,
      inbox,
      notHandledBy,
      eventType: eventType ?? null,
      subscribedBy:
        eventType === undefined
          ? null
          : catalog.consumers.filter((c) => c.subscribes.includes(eventType)).map((c) => c.name),
      deadLetters: deadLetters?.map((letter) => resolution(letter, inbox)) ?? null,
      published,
    };
    process.stdout.write(options.json === true ? `${printableJson(trace)}\n` : formatTrace(trace));
    const found =
      outbox !== null ||
      inbox.length > 0 ||
      (deadLetters?.length ?? 0) > 0 ||
      (published?.length ?? 0) > 0;
    return found ? EXIT_OK : EXIT_FINDINGS;
  });
}

/** The trace as the lines `evgen trace` prints. */
export function formatTrace(trace: MessageTrace): string {
  const lines = [`messageId ${printable(trace.messageId)}`];
  const row = trace.outbox;
  if (row === null && trace.outboxKind === 'cdc') {
    lines.push('outbox: a CDC outbox (each row goes in the transaction that writes it)');
    lines.push(...formatCdcProblems(trace.cdcProblems));
  } else if (row === null) {
    lines.push(
      'outbox: no row (not written here, cleaned up after it was SENT, or written to a CDC outbox, whose rows go at once)',
    );
  } else {
    lines.push(
      `outbox: ${row.status}, ${row.eventType} v${row.schemaVersion}, aggregate ${row.aggregateType} ${row.aggregateId}`,
      `  written ${row.createdAt}, publish attempts ${row.attempts}${row.sentAt !== null ? `, sent ${row.sentAt}` : ''}`,
    );
    if (row.lastError !== null) lines.push(`  last error: ${row.lastError}`);
    if (row.status === 'DEAD')
      lines.push('  DEAD: later events of this aggregate wait; revive with evgen outbox revive');
  }
  if (trace.published === null) {
    lines.push('published: not looked at (give --kafka-brokers, or set KAFKA_BROKERS)');
  } else if (trace.published.length === 0) {
    lines.push("published: not on the catalog's Kafka event topics");
  } else {
    for (const record of trace.published) {
      lines.push(
        `published: ${record.topic} partition ${record.partition} offset ${record.offset}, key ${record.key ?? '-'}`,
      );
    }
    if (trace.published.length > 1)
      lines.push(
        `  ${trace.published.length} copies: sent again after a crash; the inbox handles it once`,
      );
  }
  if (trace.inbox.length === 0)
    lines.push(
      trace.subscribedBy?.length === 0
        ? `inbox: no consumer in the catalog subscribes to ${printable(trace.eventType ?? '')}, so none will commit it`
        : 'inbox: no consumer has committed it',
    );
  for (const entry of trace.inbox)
    lines.push(`inbox: ${entry.consumer} committed it at ${entry.processedAt ?? entry.receivedAt}`);
  for (const consumer of trace.notHandledBy)
    lines.push(`inbox: ${consumer} (subscribed) has not committed it`);
  if (trace.deadLetters === null) {
    lines.push(
      'dead letters: not looked at (give --amqp-url / --kafka-brokers, or set AMQP_URL / KAFKA_BROKERS)',
    );
  } else if (trace.deadLetters.length === 0) {
    lines.push('dead letters: none');
  } else {
    for (const letter of trace.deadLetters) {
      lines.push(
        `dead letter: ${letter.consumer} (${letter.transport}), ${letter.errorType ?? 'error'}: ${letter.errorMessage ?? ''}`,
        `  handling attempts ${letter.attempts ?? '?'}, dead-lettered ${letter.deadLetteredAt ?? '?'}${letter.replays !== undefined ? `, replayed ${letter.replays}x before` : ''}`,
        letter.resolved
          ? `  resolved: ${letter.consumer} committed the message at ${letter.resolvedAt ?? '?'}`
          : '  unresolved: its consumer has not committed the message',
      );
    }
  }
  return `${lines.map(printable).join('\n')}\n`;
}
